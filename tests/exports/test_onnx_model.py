"""export.py --onnx: the ONNX model runs in onnxruntime at any size and gives
denoise.py's output (issue 23), for the paper's network and N2V2's.

The export extras (requirements-export.txt, part of requirements-test.txt) are
imported plainly: where one is missing, collecting this file fails instead of
its tests passing as skips. Without the extras, leave the file out with
--ignore=tests/exports/test_onnx_model.py.
"""

import numpy as np
import onnxruntime
import pytest
import tf2onnx  # pylint: disable=unused-import  (an export extra: fail if missing)

from n2n.data import normalization
from n2n.inference import whole_images
from n2n.exports import onnx_model
from n2n.inference import exported_model
from n2n.model import unet

# Odd sizes, sizes below one network tile and a photograph's: padding and crop in the graph.
SIZES = ((45, 70), (500, 500), (1, 1), (33, 64), (512, 768))
# build_unet's network options: the paper's, and N2V2's (max-blur pooling, no top skip).
NETWORKS = {'paper': {}, 'n2v2': {'downsampling': 'max_blur_pool', 'top_skip': False}}
PERCENTILES = normalization.Rule(normalization.PERCENTILE, 1.0, 99.8)
# The networks are 8 channels wide (the paper's 48): the conversion, the padding and
# crop in the graph and the percentile map do not depend on the width, and each test
# runs its network at every size in onnxruntime and in TensorFlow.
NETWORK_WIDTH = 8


@pytest.fixture(scope='module')
def converted(tmp_path_factory):
  """fn(channels, network='paper', rule=None) -> (keras model, onnxruntime
  session of its write_onnx): each converted once for the module (tests only run them)."""
  cache = {}

  def convert(channels, network='paper', rule=None):
    key = (channels, network, rule)
    if key not in cache:
      model = unet.build_unet(channels, seed=len(cache) + 3, upsampling='resize',
                              width=NETWORK_WIDTH, **NETWORKS[network])
      path = onnx_model.write_onnx(model, str(tmp_path_factory.mktemp('onnx')), rule)
      cache[key] = model, onnxruntime.InferenceSession(path)
    return cache[key]

  return convert


def _assert_matches_denoise(model, session, sizes, channels, seed):
  denoise = whole_images.make_denoiser(model)
  rng = np.random.default_rng(seed)
  for height, width in sizes:
    image = rng.uniform(size=(height, width, channels)).astype(np.float32)
    output, = session.run(None, {exported_model.INPUT_NAME: image[np.newaxis]})
    ours = denoise(image)
    assert output.shape == (1, height, width, channels)
    # Measured: at most 9e-6 apart (float32 sums in another order), either network.
    np.testing.assert_allclose(output[0], ours, atol=1e-4, err_msg=f'{height}x{width}')
    # In 8 bits the two agree to one level where a value is not on a rounding edge.
    to_8_bits = lambda values: np.round(np.clip(values, 0, 1) * 255)
    assert np.abs(to_8_bits(output[0]) - to_8_bits(ours)).max() <= 1


@pytest.mark.parametrize('channels', [1, 3])
def test_the_onnx_model_matches_denoise_at_every_size(channels, converted):
  model, session = converted(channels)
  assert [item.name for item in session.get_inputs()] == [exported_model.INPUT_NAME]
  assert [item.name for item in session.get_outputs()] == [exported_model.OUTPUT_NAME]
  _assert_matches_denoise(model, session, SIZES, channels, seed=channels)


@pytest.mark.parametrize('channels', [1, 3])
def test_n2v2s_network_in_onnx_matches_denoise(channels, converted):
  # Max-blur pooling's reflect padding and depthwise blur convert too; odd sizes
  # and one pixel, where the graph's own padding comes first.
  model, session = converted(channels, 'n2v2')
  _assert_matches_denoise(model, session, ((45, 70), (1, 1), (33, 64)), channels,
                          seed=10 + channels)


def test_a_batch_of_two_runs_as_two_single_images(converted):
  _, session = converted(3)
  batch = np.random.default_rng(0).uniform(size=(2, 40, 50, 3)).astype(np.float32)
  both, = session.run(None, {exported_model.INPUT_NAME: batch})
  for index in range(2):
    alone, = session.run(None, {exported_model.INPUT_NAME: batch[index:index + 1]})
    np.testing.assert_allclose(both[index], alone[0], atol=1e-5)


def test_a_percentile_models_onnx_maps_each_image_by_its_own_percentiles(converted):
  model, session = converted(1, rule=PERCENTILES)
  rng = np.random.default_rng(5)
  for height, width in ((45, 70), (500, 500), (1, 1)):
    raw = rng.integers(1000, 1400, (height, width, 1)).astype(np.float32)
    output, = session.run(None, {exported_model.INPUT_NAME: raw[np.newaxis]})
    pixel_map = normalization.percentile_map(raw, PERCENTILES)
    ours = normalization.denormalize(
        whole_images.make_denoiser(model)(normalization.normalize(raw, pixel_map)), pixel_map)
    # 1e-4 of the 400 levels the data span.
    np.testing.assert_allclose(output[0], ours, atol=0.04, err_msg=f'{height}x{width}')
