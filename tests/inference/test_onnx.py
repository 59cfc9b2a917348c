"""export.py --onnx: the ONNX model runs in onnxruntime at any size and gives
denoise.py's output (issue 23)."""

import numpy as np
import pytest

from n2n.data import normalization
from n2n.inference import denoiser
from n2n.inference import export
from n2n.model import unet

onnxruntime = pytest.importorskip('onnxruntime', reason='optional export extras not installed')
pytest.importorskip('tf2onnx', reason='optional export extras not installed')

# Odd sizes, sizes below one network tile and a photograph's: padding and crop in the graph.
SIZES = ((45, 70), (500, 500), (1, 1), (33, 64), (512, 768))


@pytest.mark.parametrize('channels', [1, 3])
def test_the_onnx_model_matches_denoise_at_every_size(channels, tmp_path):
  model = unet.build_unet(channels, seed=3, upsampling='resize')
  session = onnxruntime.InferenceSession(export.write_onnx(model, str(tmp_path)))
  assert [item.name for item in session.get_inputs()] == [export.INPUT_NAME]
  assert [item.name for item in session.get_outputs()] == [export.OUTPUT_NAME]
  denoise = denoiser.make_denoiser(model)
  rng = np.random.default_rng(channels)
  for height, width in SIZES:
    image = rng.uniform(size=(height, width, channels)).astype(np.float32)
    output, = session.run(None, {export.INPUT_NAME: image[np.newaxis]})
    ours = denoise(image)
    assert output.shape == (1, height, width, channels)
    np.testing.assert_allclose(output[0], ours, atol=1e-4, err_msg=f'{height}x{width}')
    # In 8 bits the two agree to one level where a value is not on a rounding edge.
    to_8_bits = lambda values: np.round(np.clip(values, 0, 1) * 255)
    assert np.abs(to_8_bits(output[0]) - to_8_bits(ours)).max() <= 1


def test_a_batch_of_two_runs_as_two_single_images(tmp_path):
  model = unet.build_unet(3, seed=5, upsampling='resize')
  session = onnxruntime.InferenceSession(export.write_onnx(model, str(tmp_path)))
  batch = np.random.default_rng(0).uniform(size=(2, 40, 50, 3)).astype(np.float32)
  both, = session.run(None, {export.INPUT_NAME: batch})
  for index in range(2):
    alone, = session.run(None, {export.INPUT_NAME: batch[index:index + 1]})
    np.testing.assert_allclose(both[index], alone[0], atol=1e-5)


def test_a_percentile_models_onnx_maps_each_image_by_its_own_percentiles(tmp_path):
  rule = normalization.Rule(normalization.PERCENTILE, 1.0, 99.8)
  model = unet.build_unet(1, seed=8, upsampling='resize')
  session = onnxruntime.InferenceSession(export.write_onnx(model, str(tmp_path), rule))
  rng = np.random.default_rng(5)
  for height, width in ((45, 70), (500, 500), (1, 1)):
    raw = rng.integers(1000, 1400, (height, width, 1)).astype(np.float32)
    output, = session.run(None, {export.INPUT_NAME: raw[np.newaxis]})
    pixel_map = normalization.percentile_map(raw, rule)
    ours = normalization.denormalize(
        denoiser.make_denoiser(model)(normalization.normalize(raw, pixel_map)), pixel_map)
    # 1e-4 of the 400 levels the data span.
    np.testing.assert_allclose(output[0], ours, atol=0.04, err_msg=f'{height}x{width}')
