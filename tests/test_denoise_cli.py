"""denoise.py as a user runs it, on a small trained-from-scratch run."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir
from n2n.data import image_files
from n2n.training import trainer as trainer_lib
from tests.conftest import REPO_ROOT
from tests.conftest import smooth_image


@pytest.fixture(scope='module')
def model_dir(tmp_path_factory):
  """A run folder with config.json and one checkpoint of a seeded RGB U-Net."""
  folder = tmp_path_factory.mktemp('run')
  config = config_lib.TrainConfig(train_data='unused', model_dir=str(folder), seed=3,
                                  precision='float32')
  trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'float32',
                                checkpoint_dir=str(folder))
  trainer.save(1)
  run_dir.write_config(str(folder), config)
  return folder


def _denoise(*flags):
  return subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), *flags],
                        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)


def _write(path, pages):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_bytes(image_files.encode_pages(pages, image_files.family_of(str(path))))


def test_every_layout_comes_back_as_it_went_in(model_dir, tmp_path):
  rng = np.random.default_rng(0)
  inputs = tmp_path / 'noisy'
  rgb8 = smooth_image(rng, 45, 70)
  gray16 = smooth_image(rng, 50, 40, 1)[:, :, 0].astype(np.uint16) * 257
  float_tiff = rng.uniform(-0.2, 1.3, (33, 31)).astype(np.float32)
  rgba = np.concatenate([smooth_image(rng, 40, 40), np.full((40, 40, 1), 9, np.uint8)], -1)
  _write(inputs / 'rgb8.png', [rgb8])
  _write(inputs / 'sub' / 'gray16.png', [gray16])
  _write(inputs / 'float.tif', [float_tiff])
  _write(inputs / 'rgba.png', [rgba])
  _write(inputs / 'pages.tif', [rgb8, rgb8[:, :, 0]])
  _write(inputs / 'photo.jpg', [rgb8])
  (inputs / 'broken.png').write_bytes(b'\x89PNG\r\n\x1a\n nope')
  output = tmp_path / 'denoised'
  result = _denoise(f'--model={model_dir}', f'--input={inputs}', f'--output_dir={output}')
  assert result.returncode == 0, result.stderr[-3000:]
  assert 'denoised 6 of 7 files' in result.stdout and 'skipped' in result.stdout
  assert 'broken.png' in result.stdout and 'Skipping' in result.stderr
  expected = {'rgb8.png': ((45, 70, 3), np.uint8), 'sub/gray16.png': ((50, 40), np.uint16),
              'float.tif': ((33, 31), np.float32), 'rgba.png': ((40, 40, 4), np.uint8),
              'photo.png': ((45, 70, 3), np.uint8)}
  for name, (shape, dtype) in expected.items():
    (page,) = image_files.read_pages(str(output / name))
    assert page.shape == shape and page.dtype == dtype, name
  (float_page,) = image_files.read_pages(str(output / 'float.tif'))
  assert float_tiff.min() <= float_page.min() and float_page.max() <= float_tiff.max()
  (rgba_page,) = image_files.read_pages(str(output / 'rgba.png'))
  assert (rgba_page[..., 3] == 9).all()
  pages = image_files.read_pages(str(output / 'pages.tif'))
  assert [page.shape for page in pages] == [(45, 70, 3), (45, 70)]


def test_refusals_are_one_line_and_nothing_readable_fails(model_dir, tmp_path):
  inputs = tmp_path / 'noisy'
  inputs.mkdir()
  (inputs / 'broken.png').write_bytes(b'not an image')
  inside = _denoise(f'--model={model_dir}', f'--input={inputs}', f'--output_dir={inputs}/out')
  assert inside.returncode == 1
  assert inside.stderr.strip().splitlines()[-1].startswith(
      "denoise.py: error: --output_dir='") and 'is inside the input folder' in inside.stderr
  nothing = _denoise(f'--model={model_dir}', f'--input={inputs}', f'--output_dir={tmp_path}/o')
  assert nothing.returncode != 0
  assert nothing.stderr.strip().splitlines()[-1] == (
      'denoise.py: error: no file could be denoised')
  no_model = _denoise(f'--model={tmp_path}', f'--input={inputs}', f'--output_dir={tmp_path}/o')
  assert no_model.stderr.strip().splitlines()[-1] == (
      f"denoise.py: error: --model: no checkpoint in '{tmp_path}'")


def test_export_then_denoise_with_the_export_gives_the_same_file(model_dir, tmp_path):
  rng = np.random.default_rng(2)
  _write(tmp_path / 'noisy' / 'a.png', [smooth_image(rng, 40, 52)])
  exported = tmp_path / 'exported'
  result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'export.py'),
                           f'--model={model_dir}', f'--output={exported}', '--tflite'],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
  assert result.returncode == 0, result.stderr[-3000:]
  assert 'step 0' in result.stdout and (exported / 'README.md').exists()
  assert (exported / 'model.tflite').stat().st_size > 1_000_000
  again = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'export.py'),
                          f'--model={model_dir}', f'--output={exported}'],
                         capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
  assert again.stderr.strip().splitlines()[-1].startswith("export.py: error: --output='")
  for source, name in ((model_dir, 'from_run'), (exported, 'from_export')):
    result = _denoise(f'--model={source}', f'--input={tmp_path / "noisy"}',
                      f'--output_dir={tmp_path / name}')
    assert result.returncode == 0, result.stderr[-3000:]
  (from_run,) = image_files.read_pages(str(tmp_path / 'from_run' / 'a.png'))
  (from_export,) = image_files.read_pages(str(tmp_path / 'from_export' / 'a.png'))
  assert np.abs(from_run.astype(int) - from_export.astype(int)).max() <= 1
