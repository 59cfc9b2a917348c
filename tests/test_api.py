"""The Python front door (n2n/__init__.py): n2n.Denoiser on numpy arrays gives
what denoise.py writes for the same pixels; `import n2n` stays light."""

import os
import subprocess
import sys

import numpy as np
import pytest

from bench.recipes.images import smooth_image
import n2n
from n2n.data import native_images
from tests.conftest import REPO_ROOT


@pytest.fixture(scope='module')
def denoiser(denoise_model_dir):
  return n2n.Denoiser.load(denoise_model_dir, precision='float32')


def test_a_16_bit_array_and_a_grayscale_array_keep_shape_and_dtype(denoiser):
  rng = np.random.default_rng(0)
  rgb16 = smooth_image(rng, 37, 50).astype(np.uint16) * 257
  gray8 = smooth_image(rng, 41, 29, 1)[:, :, 0]
  for array in (rgb16, gray8, gray8[:, :, np.newaxis]):
    denoised = denoiser(array)
    assert denoised.shape == array.shape and denoised.dtype == array.dtype
    assert not np.array_equal(denoised, array)


def test_alpha_passes_through(denoiser):
  rng = np.random.default_rng(1)
  rgba = np.concatenate([smooth_image(rng, 24, 24), np.full((24, 24, 1), 9, np.uint8)], -1)
  denoised = denoiser(rgba)
  assert denoised.shape == rgba.shape and np.all(denoised[:, :, 3] == 9)


def test_the_array_comes_back_as_denoise_py_writes_it(denoiser, denoise_model_dir, tmp_path):
  rng = np.random.default_rng(2)
  images = {'rgb8.png': smooth_image(rng, 45, 70),
            'gray16.png': smooth_image(rng, 50, 40, 1)[:, :, 0].astype(np.uint16) * 257}
  inputs, output = tmp_path / 'noisy', tmp_path / 'denoised'
  inputs.mkdir()
  for name, image in images.items():
    (inputs / name).write_bytes(native_images.encode_pages([image], 'png'))
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={denoise_model_dir}',
       f'--input={inputs}', f'--output_dir={output}', '--precision=float32'],
      capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
  assert result.returncode == 0, result.stderr[-3000:]
  for name, image in images.items():
    (written,) = native_images.read_pages(str(output / name))
    from_api = denoiser(image)
    assert from_api.dtype == written.dtype and from_api.shape == written.shape, name
    assert np.abs(from_api.astype(np.int64) - written.astype(np.int64)).max() <= 1, name


def test_tta_is_the_mean_over_the_eight_flips_and_rotations(denoiser):
  rng = np.random.default_rng(3)
  # Float outputs are clipped to the range the input spans: two far outliers
  # keep the untrained network's outputs inside it, where clipping each of the
  # 8 passes and clipping their mean would differ.
  image = rng.uniform(0.2, 0.8, (20, 28, 3)).astype(np.float32)
  image[0, 0], image[-1, -1] = -10.0, 10.0
  outputs = []
  for turns in range(4):
    for flip in (False, True):
      turned = np.rot90(image, turns)
      turned = np.ascontiguousarray(turned[:, ::-1] if flip else turned)
      output = denoiser(turned).astype(np.float64)
      outputs.append(np.rot90(output[:, ::-1] if flip else output, -turns))
  expected = np.mean(outputs, axis=0)
  with_tta = denoiser(image, tta=True)
  assert with_tta.shape == image.shape and with_tta.dtype == np.float32
  assert np.abs(with_tta - denoiser(image)).max() > 1e-3
  np.testing.assert_allclose(with_tta, expected, atol=1e-5)


@pytest.mark.parametrize('array', [np.zeros((1, 8, 8, 3), np.uint8), np.zeros((8, 8, 2), np.uint8),
                                   np.zeros((8, 8, 5), np.float32), 'not an image',
                                   np.zeros((0, 8), np.uint8)])
def test_a_bad_array_is_refused_naming_its_shape(denoiser, array):
  shape = np.asarray(array).shape
  with pytest.raises(ValueError, match=rf'cannot denoise an array of shape {re_shape(shape)}'):
    denoiser(array)


def re_shape(shape):
  return str(shape).replace('(', r'\(').replace(')', r'\)')


def test_a_path_that_holds_no_run_is_refused_in_one_line(tmp_path):
  with pytest.raises(ValueError, match='--model'):
    n2n.Denoiser.load(tmp_path)


def test_a_bad_setting_names_its_flag(denoise_model_dir):
  with pytest.raises(ValueError, match='--tile_size'):
    n2n.Denoiser.load(denoise_model_dir, tile_size=100)


def test_import_n2n_loads_no_tensorflow_and_filters_nothing():
  code = ('import sys, threading, n2n; n2n.TrainConfig; '
          'print("tensorflow" in sys.modules, "n2n.cli" in sys.modules, '
          'sorted(thread.name for thread in threading.enumerate()))')
  result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=60, cwd=REPO_ROOT, check=True)
  assert result.stdout.strip() == "False False ['MainThread']"
