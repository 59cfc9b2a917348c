"""The models n2n ships (n2n/shipped.py): found by name where a run folder is taken, and
the camera model denoises a photograph it never saw, through a simulated camera of the
profile calibrated to real photographs."""

import json
import os
import subprocess
import sys

import imageio.v3 as iio
import numpy as np
import pytest

from bench.recipes import camera as camera_recipe
import n2n
from n2n import config_flags
from n2n import shipped
from n2n.config import denoise as denoise_config
from tests.conftest import REPO_ROOT


def test_a_name_is_the_package_folder_unless_a_file_of_that_name_is_here(tmp_path,
                                                                        monkeypatch):
  monkeypatch.chdir(tmp_path)
  assert shipped.resolve(shipped.CAMERA_SRGB) == os.path.join(
      os.path.dirname(n2n.__file__), 'shipped_models', shipped.CAMERA_SRGB)
  assert shipped.resolve('runs/mine') == 'runs/mine'
  (tmp_path / shipped.CAMERA_SRGB).mkdir()  # the user's own folder of that name comes first
  assert shipped.resolve(shipped.CAMERA_SRGB) == shipped.CAMERA_SRGB


def test_every_shipped_model_is_a_run_folder_with_its_training_record():
  for name in shipped.MODELS:
    files = sorted(os.listdir(shipped.folder(name)))
    assert 'config.json' in files and 'checkpoint' in files, files
    assert any(file.endswith('.index') for file in files), files
    with open(os.path.join(shipped.folder(name), 'camera_model.json')) as record:
      recorded = json.load(record)
    # Trained on the demo's training photographs only, at a commit.
    assert recorded['photographs'] == 'datasets/demo/train'
    assert not recorded['commit'].endswith('+changes'), recorded['commit']
    # A few megabytes: the weights, not the optimizer's state.
    size = sum(os.path.getsize(os.path.join(shipped.folder(name), file)) for file in files)
    assert size < 6e6, size


def test_denoise_py_lists_the_shipped_models_in_its_help():
  flag_values = config_flags.flags.FlagValues()
  config_flags.define_flags(denoise_config.DenoiseConfig, flag_values)
  for name, what in shipped.MODELS.items():
    assert f'{name} ({what})' in flag_values['model'].help  # --helpfull's --model
  shown = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), '--help'],
                         capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
  for name, what in shipped.MODELS.items():
    assert f'  {name}: {what}.' in shown.stdout, shown.stdout[-1000:]


# The camera model's gain on a photograph it never saw (bench/recipes/camera.py): over
# seeds 1-6 (python -m bench.camera_model --held_out_seeds=6 at a180c2d, bfloat16 on an
# AVX512-BF16 host; docs/bench/camera_model_test_spread.json) chelsea gained 2.54-3.06 dB
# and coffee 1.59-2.63. An untrained or identity network gains about 0, a network that
# learned another noise less; the bound leaves 0.59 dB below the lowest.
MIN_GAIN_DB = 1.0


@pytest.fixture(scope='module')
def camera_model():
  return n2n.Denoiser.load(shipped.CAMERA_SRGB)


@pytest.mark.parametrize('path', camera_recipe.HELD_OUT)
def test_the_camera_model_denoises_a_photograph_it_never_saw(camera_model, path):
  assert camera_recipe.gain(camera_model, path, seed=3) > MIN_GAIN_DB


@pytest.mark.slow
def test_denoise_py_takes_the_camera_models_name_and_writes_what_the_denoiser_gives(
    camera_model, tmp_path):
  capture, _ = camera_recipe.held_out_capture(camera_recipe.HELD_OUT[0], seed=3)
  (tmp_path / 'in').mkdir()
  iio.imwrite(tmp_path / 'in' / 'capture.png', capture)
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={shipped.CAMERA_SRGB}',
       f'--input={tmp_path / "in" / "capture.png"}', f'--output_dir={tmp_path / "out"}'],
      capture_output=True, text=True, timeout=300, cwd=tmp_path)
  assert result.returncode == 0, result.stderr[-2000:]
  written = iio.imread(tmp_path / 'out' / 'capture.png')
  np.testing.assert_array_equal(written, camera_model(capture))
