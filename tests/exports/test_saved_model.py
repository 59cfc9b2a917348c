"""The SavedModel export: padding in the graph, and a process without n2n using it."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import normalization
from n2n.evaluation import scoring
from n2n.inference import serving
from n2n.inference import whole_images
from n2n.exports import onnx_model
from n2n.exports import saved_model
from n2n.exports import tflite_model
from n2n.inference import exported_model
from n2n.inference import graph_padding
from n2n.inference import tiling
from n2n.model import unet


@pytest.mark.parametrize('height,width', [(5, 7), (1, 1), (33, 64), (32, 100), (70, 2)])
def test_graph_padding_matches_numpys_reflect(height, width):
  images = np.random.default_rng(0).uniform(size=(2, height, width, 3)).astype(np.float32)
  padded = graph_padding.reflect_pad_to_multiple(tf.constant(images)).numpy()
  expected = np.stack([tiling.pad_to_multiple(image) for image in images])
  np.testing.assert_array_equal(padded, expected)


@pytest.fixture(scope='module')
def exported(tmp_path_factory):
  model = unet.build_unet(3, seed=4, upsampling='resize')
  run_config = config_lib.train_config(train_data='data/photos', model_dir='runs/x',
                                      noise='poisson', train_steps=500)
  folder = tmp_path_factory.mktemp('export')
  scores = [scoring.LevelScores('poisson', 30.0, (scoring.ImageScore('mean', 28.5, 18.0),))]
  saved_model.export_model(model, serving.of_run(run_config), str(folder), 500, scores)
  return model, folder


def test_a_process_without_n2n_gets_denoise_pys_output(exported, tmp_path):
  model, folder = exported
  image = np.random.default_rng(1).uniform(size=(45, 70, 3)).astype(np.float32)
  np.save(tmp_path / 'in.npy', image[np.newaxis])
  script = textwrap.dedent(f'''
      import sys
      sys.path = [p for p in sys.path if p not in ('', {os.getcwd()!r})]
      # As where n2n is not installed (the suite's own environment installs it).
      sys.modules['n2n'] = None
      try:
        import n2n
        sys.exit('n2n is importable')
      except ImportError:
        pass
      import numpy as np, tensorflow as tf
      serve = tf.saved_model.load({str(folder)!r}).signatures['serving_default']
      out = serve(images=tf.constant(np.load({str(tmp_path / "in.npy")!r})))['denoised']
      np.save({str(tmp_path / "out.npy")!r}, out.numpy())
  ''')
  result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path), env={**os.environ, 'PYTHONPATH': ''})
  assert result.returncode == 0, result.stderr[-2000:]
  theirs = np.load(tmp_path / 'out.npy')[0]
  ours = whole_images.make_denoiser(model)(image)
  assert theirs.shape == image.shape
  # Separate processes may pick other oneDNN kernels: a few 1e-6 apart, far below
  # an 8-bit level (3.9e-3).
  np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=2e-5)


def test_export_carries_config_and_a_readme(exported):
  _, folder = exported
  run_batch, served = exported_model.load_export(str(folder))
  assert served.channels == 3 and served.run_config.corruption.noise == 'poisson'
  readme = (folder / 'README.md').read_text()
  assert 'poisson noise, level range 0-50' in readme and 'training step: 500 of 500' in readme
  assert 'trained as: Noise2Noise (noisy targets)' in readme
  assert 'validation PSNR at poisson 30: 28.50 dB (noisy input 18.00 dB)' in readme
  assert exported_model.is_export(str(folder)) and not exported_model.is_export(str(folder / 'variables'))
  assert np.asarray(run_batch(np.zeros((1, 8, 8, 3), np.float32))).shape == (1, 8, 8, 3)


def test_tflite_runs_any_size_with_builtin_ops_and_matches(exported):
  model, folder = exported
  path = tflite_model.write_tflite(str(folder))
  runner = tf.lite.Interpreter(model_path=path).get_signature_runner(exported_model.SIGNATURE)
  denoise = whole_images.make_denoiser(model)
  for height, width in ((45, 70), (32, 33)):
    image = np.random.default_rng(height).uniform(size=(height, width, 3)).astype(np.float32)
    output = runner(images=image[np.newaxis])[exported_model.OUTPUT_NAME][0]
    np.testing.assert_allclose(output, denoise(image), atol=1e-4)


def test_the_n2v2_network_exports_to_tflite_with_builtin_ops_and_matches(tmp_path):
  model = unet.build_unet(3, seed=6, upsampling='resize', downsampling='max_blur_pool',
                          top_skip=False)
  run_config = config_lib.train_config(
      train_data='data/photos', model_dir='runs/x', method='blind_spot', noise='gaussian',
      downsampling='max_blur_pool', top_skip=False)
  saved_model.export_model(model, serving.of_run(run_config), str(tmp_path), 10, [])
  assert ('trained as: blind-spot (single noisy images); network: max_blur_pool downsampling, '
          'without the top skip connection') in (tmp_path / 'README.md').read_text()
  runner = tf.lite.Interpreter(model_path=tflite_model.write_tflite(str(tmp_path))).get_signature_runner(
      exported_model.SIGNATURE)
  image = np.random.default_rng(2).uniform(size=(45, 70, 3)).astype(np.float32)
  output = runner(images=image[np.newaxis])[exported_model.OUTPUT_NAME][0]
  np.testing.assert_allclose(output, whole_images.make_denoiser(model)(image), atol=1e-4)


def test_an_export_of_a_narrower_network_says_its_width():
  paper, narrow = (config_lib.train_config(train_data='data/photos', model_dir='runs/x',
                                           noise='gaussian', network_width=width)
                   for width in (48, 24))
  assert 'width' not in serving.of_run(paper).trained_as
  assert serving.of_run(narrow).trained_as.startswith(
      "Noise2Noise (noisy targets); network width 24 (the paper's 48), gaussian noise")


def test_an_export_of_a_3d_network_with_in_plane_levels_says_so():
  in_plane, all_3d = (config_lib.train_config(train_data='data/stacks', model_dir='runs/x',
                                              noise='gaussian', spatial_dims=dims,
                                              xy_conv_levels=levels)
                      for dims, levels in ((3, 2), (3, 0)))
  assert ('; 3D network with in-plane (1x3x3) convolutions at its finest 2 resolution levels, '
          'gaussian noise') in serving.of_run(in_plane).trained_as
  assert 'in-plane' not in serving.of_run(all_3d).trained_as


def test_onnx_without_the_optional_extras_is_refused_in_one_line(monkeypatch, tmp_path):
  monkeypatch.setattr(onnx_model, 'onnx_extras_installed', lambda: False)
  with pytest.raises(ValueError, match=r'^--onnx needs the optional export extras \(tf2onnx, '
                     r'onnxruntime\): pip install -r requirements-export.txt$'):
    onnx_model.write_onnx(unet.build_unet(1), str(tmp_path))
  assert not list(tmp_path.iterdir())


def rule_output(model, raw, rule):
  """n2n's percentile rule in numpy (denoise.py's path) on one raw [H, W, C] image."""
  pixel_map = normalization.percentile_map(raw, rule)
  denoised = whole_images.make_denoiser(model)(normalization.normalize(raw, pixel_map))
  return normalization.denormalize(denoised, pixel_map)


def test_a_percentile_export_maps_raw_pixels_inside_its_graph(tmp_path):
  model = unet.build_unet(1, seed=7, upsampling='resize')
  run_config = config_lib.resolve_data(config_lib.train_config(
      train_data='data/scenes', model_dir='runs/x', noise='none', normalization='percentile',
      percentile_low=2.0, percentile_high=99.5), 1, 'uint16', 65535.0)
  saved_model.export_model(model, serving.of_run(run_config), str(tmp_path), 10, [])
  rule = normalization.rule_of(run_config)
  # 16-bit microscopy filling 1000-1400 of 65535.
  raw = np.random.default_rng(3).integers(1000, 1400, (45, 70, 1)).astype(np.float32)
  expected = rule_output(model, raw, rule)
  serve = tf.saved_model.load(str(tmp_path)).signatures[exported_model.SIGNATURE]
  np.testing.assert_allclose(serve(images=tf.constant(raw[np.newaxis]))['denoised'][0], expected,
                             atol=2e-3)
  runner = tf.lite.Interpreter(model_path=tflite_model.write_tflite(str(tmp_path))).get_signature_runner(
      exported_model.SIGNATURE)
  np.testing.assert_allclose(runner(images=raw[np.newaxis])[exported_model.OUTPUT_NAME][0], expected,
                             atol=2e-3)
  # denoise.py maps whole images itself and runs the network signature on tiles.
  run_batch, served = exported_model.load_export(str(tmp_path))
  assert served.rule == rule
  values = np.random.default_rng(4).uniform(size=(1, 40, 40, 1)).astype(np.float32)
  np.testing.assert_allclose(np.asarray(run_batch(values))[0],
                             whole_images.make_denoiser(model)(values[0]), atol=1e-5)
  readme = (tmp_path / 'README.md').read_text()
  assert 'its 2 and 99.5 percentiles' in readme and 'float32 raw pixels' in readme
