import numpy as np
import pytest

from n2n.inference import tiling


@pytest.mark.parametrize('size,tile,overlap', [(100, 64, 16), (64, 64, 16), (1000, 512, 64),
                                               (513, 512, 64), (130, 32, 8)])
def test_tiles_cover_the_image_and_neighbours_share_the_overlap(size, tile, overlap):
  starts = tiling.tile_starts(size, tile, overlap)
  assert starts[0] == 0 and starts[-1] + tile == size
  assert all(later - earlier <= tile - overlap for earlier, later in zip(starts, starts[1:]))


def _calls_recorded(calls):
  def run_batch(tiles):
    calls.append(tiles.shape)
    assert tiles.shape[1] % 32 == 0 and tiles.shape[2] % 32 == 0
    return tiles * 2.0 + 1.0
  return run_batch


@pytest.mark.parametrize('height,width,batch_tiles', [(150, 97, 1), (150, 97, 4), (20, 300, 3)])
def test_blending_reproduces_a_pointwise_network_exactly(height, width, batch_tiles):
  image = np.random.default_rng(0).uniform(size=(height, width, 3)).astype(np.float32)
  calls = []
  output = tiling.denoise_tiled(image, _calls_recorded(calls), tile_size=64, overlap=16,
                                batch_tiles=batch_tiles)
  np.testing.assert_allclose(output, image * 2.0 + 1.0, rtol=1e-6)
  assert all(shape[0] <= batch_tiles for shape in calls)
  assert len(calls) > 1


def test_an_image_smaller_than_a_tile_is_run_whole_padded_to_32():
  calls = []
  image = np.ones((40, 33, 1), np.float32)
  output = tiling.denoise_tiled(image, _calls_recorded(calls), tile_size=512)
  assert calls == [(1, 64, 64, 1)] and output.shape == (40, 33, 1)
