import numpy as np
import pytest
import tensorflow as tf

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


@pytest.mark.parametrize('size,tile,overlap', [(6000, 1024, 64), (4000, 512, 64), (1024, 512, 64),
                                               (700, 256, 32), (513, 512, 64), (96, 512, 64)])
def test_balanced_tiles_are_no_more_and_no_longer_than_asked(size, tile, overlap):
  balanced = tiling.balanced_tile(size, tile, overlap)
  assert balanced % 32 == 0 and balanced <= max(tile, tiling.round_up(size))
  if size > tile:
    assert (len(tiling.tile_starts(size, balanced, overlap))
            == len(tiling.tile_starts(size, tile, overlap)))
    # One step of 32 shorter would need another tile.
    assert (len(tiling.tile_starts(size, balanced - 32, overlap))
            > len(tiling.tile_starts(size, tile, overlap)))


def test_balanced_tiles_cost_fewer_pixels_on_a_24_megapixel_image():
  def pixels_run(tile):
    rows = [tiling.balanced_tile(size, tile, 64) * len(tiling.tile_starts(
        size, tiling.balanced_tile(size, tile, 64), 64)) for size in (4000, 6000)]
    return rows[0] * rows[1] / (4000 * 6000)
  assert pixels_run(1024) < 1.2


def _local_network(receptive_radius, channels=3):
  """A fixed convolution stack whose output at a pixel depends only on input
  pixels within `receptive_radius`: tiles overlapping by 4x that radius must
  reproduce the whole-image output (the outer quarter of an overlap is unweighted)."""
  rng = np.random.default_rng(1)
  kernels = [rng.normal(0, 0.3, (3, 3, channels, channels)).astype(np.float32)
             for _ in range(receptive_radius)]

  def run_batch(tiles):
    values = tf.constant(tiles)
    for kernel in kernels:
      values = tf.nn.relu(tf.nn.conv2d(values, kernel, 1, 'SAME')) + values
    return values.numpy()

  return run_batch


@pytest.mark.parametrize('height,width', [(200, 170), (161, 300)])
def test_tiles_reproduce_the_whole_image_when_the_overlap_covers_the_context(height, width):
  image = np.random.default_rng(0).uniform(size=(height, width, 3)).astype(np.float32)
  network = _local_network(receptive_radius=4)
  # Unpadded: border tiles end at the image border, where this network zero-pads.
  whole = network(image[np.newaxis])[0]
  tiled = tiling.denoise_tiled(image, network, tile_size=96, overlap=16, batch_tiles=2)
  np.testing.assert_allclose(tiled, whole, atol=1e-5)
  # Too little overlap for the context: the same tiling does depart from it.
  too_little = tiling.denoise_tiled(image, network, tile_size=96, overlap=8)
  assert np.abs(too_little - whole).max() > 1e-3


def test_denoise_py_defaults_are_the_tiling_defaults():
  # config.py stays free of TensorFlow, so it cannot import these; this keeps them one.
  from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
  config = config_lib.DenoiseConfig(model='m', input='i', output_dir='o')
  assert (config.tile_size, config.tile_overlap) == (tiling.DEFAULT_TILE_SIZE,
                                                      tiling.DEFAULT_OVERLAP)


def _local_volume_network(receptive_radius, channels=1):
  """_local_network in 3D: each output voxel depends on input voxels within the radius."""
  rng = np.random.default_rng(2)
  kernels = [rng.normal(0, 0.2, (3, 3, 3, channels, channels)).astype(np.float32)
             for _ in range(receptive_radius)]

  def run_batch(tiles):
    values = tf.constant(tiles)
    for kernel in kernels:
      values = tf.nn.relu(tf.nn.conv3d(values, kernel, [1] * 5, 'SAME')) + values
    return values.numpy()

  return run_batch


def test_3d_tiles_reproduce_the_whole_volume_when_the_overlap_covers_the_context():
  volume = np.random.default_rng(0).uniform(size=(50, 100, 90, 1)).astype(np.float32)
  network = _local_volume_network(receptive_radius=2)
  whole = network(volume[np.newaxis])[0]
  # Tiles of 24 planes (a multiple of 8, as a network with three z pools needs) and 64 x 64.
  tiled = tiling.denoise_tiled(volume, network, tile_size=(24, 64, 64), overlap=(8, 16, 16),
                               batch_tiles=3, multiples=(8, 32, 32))
  assert tiled.shape == volume.shape
  np.testing.assert_allclose(tiled, whole, atol=1e-5)
  # Less overlap in z than the context needs: the z seams show.
  too_little = tiling.denoise_tiled(volume, network, tile_size=(24, 64, 64), overlap=(4, 16, 16),
                                    multiples=(8, 32, 32))
  assert np.abs(too_little - whole).max() > 1e-3


def test_a_volume_thinner_than_one_tile_is_padded_to_the_depth_multiple():
  shapes = []

  def record(tiles):
    shapes.append(tiles.shape)
    return tiles

  volume = np.random.default_rng(1).uniform(size=(5, 40, 40, 1)).astype(np.float32)
  output = tiling.denoise_tiled(volume, record, tile_size=(32, 128, 128), overlap=(8, 32, 32),
                                multiples=(4, 32, 32))
  assert shapes == [(1, 8, 64, 64, 1)]
  np.testing.assert_array_equal(output, volume)


@pytest.mark.parametrize('shape, tile, overlap, multiples, batch_tiles', [
    ((40, 50, 1), 1024, 64, 32, 1),          # one padded tile
    ((300, 700, 3), 128, 32, 32, 3),         # a grid of balanced tiles, batches of 3
    ((20, 100, 1), 64, 16, 32, 2),           # padded in y, tiled in x
    ((12, 70, 90, 1), (8, 64, 64), (4, 16, 16), (8, 32, 32), 2),  # a volume
])
def test_tile_count_is_the_tiles_the_network_runs(shape, tile, overlap, multiples, batch_tiles):
  seen = []

  def run_batch(tiles):
    seen.append(len(tiles))
    return tiles

  tiling.denoise_tiled(np.zeros(shape, np.float32), run_batch, tile, overlap, batch_tiles,
                       multiples)
  assert sum(seen) == tiling.tile_count(shape[:-1], tile, overlap, multiples)
