"""The models n2n ships (n2n/shipped.py): found by name where a run folder is taken, and
the camera model denoises a photograph it never saw, through a simulated camera of the
profile calibrated to real photographs."""

import json
import os
import re
import subprocess
import sys

import imageio.v3 as iio
import numpy as np
import pytest
import tifffile

from bench.recipes import camera as camera_recipe
import n2n
from n2n import config_flags
from n2n import run_dir
from n2n import shipped
from n2n.config import denoise as denoise_config
from tests.conftest import REPO_ROOT


def test_a_name_is_the_package_folder_unless_a_run_of_that_name_is_here(tmp_path,
                                                                       monkeypatch):
  monkeypatch.chdir(tmp_path)
  package_folder = os.path.join(os.path.dirname(n2n.__file__), 'shipped_models',
                                shipped.CAMERA_SRGB)
  # Every program resolves a run through run_dir: the shipped name gives its checkpoint.
  assert run_dir.resolve_checkpoint(shipped.CAMERA_SRGB) == (
      os.path.join(package_folder, 'ckpt-6000'), package_folder)
  assert shipped.resolve('runs/mine') == 'runs/mine'
  # A folder of that name that holds no run (say, an output folder) does not hide it...
  (tmp_path / shipped.CAMERA_SRGB).mkdir()
  assert shipped.resolve(shipped.CAMERA_SRGB) == package_folder
  # ...a run of the user's own of that name comes first.
  (tmp_path / shipped.CAMERA_SRGB / 'checkpoint').write_text('model_checkpoint_path: "ckpt-1"')
  assert shipped.resolve(shipped.CAMERA_SRGB) == shipped.CAMERA_SRGB


def _record(name):
  with open(os.path.join(shipped.folder(name), shipped.MODELS[name].record)) as record:
    return json.load(record)


def test_every_shipped_model_is_a_small_run_folder_trained_at_a_clean_commit():
  for name in shipped.MODELS:
    files = sorted(os.listdir(shipped.folder(name)))
    assert {'config.json', 'checkpoint', 'README.md', shipped.MODELS[name].record} <= set(files)
    assert any(file.endswith('.index') for file in files), files
    recorded = _record(name)
    # One training, or parts of one resumed at the same commit.
    commits = {part['commit'] for part in recorded.get('parts', [recorded])}
    assert len(commits) == 1 and not commits.pop().endswith('+changes'), name
    # A few megabytes: the weights, not the optimizer's state.
    size = sum(os.path.getsize(os.path.join(shipped.folder(name), file)) for file in files)
    assert size < 6e6, size


@pytest.mark.parametrize('name,cameras_per_photograph', [(shipped.CAMERA_SRGB, 12),
                                                          (shipped.CAMERA_SRGB_HIGH_ISO, 24)])
def test_the_camera_models_name_their_training_photographs_and_their_licences(
    name, cameras_per_photograph):
  with open(os.path.join(REPO_ROOT, 'datasets', 'demo', 'SOURCES.md')) as sources_file:
    licences = {line.split('|')[1].strip(): line.split('|')[3].strip()
                for line in sources_file if line.startswith('| train/')
                or line.startswith('| val/')}
  recorded = _record(name)
  # Trained on the demo's training folder, whose files are not the test's held-out ones;
  # each photograph a scene through cameras_per_photograph cameras (bench/camera_model.py's
  # default at the commit that trained it).
  assert recorded['photographs'] == 'datasets/demo/train'
  training_files = sorted(f'train/{file}' for file in os.listdir(
      os.path.join(REPO_ROOT, 'datasets', 'demo', 'train')))
  assert len(recorded['cameras']) == cameras_per_photograph * len(training_files)
  assert not {os.path.relpath(path, 'datasets/demo') for path in camera_recipe.HELD_OUT
              } & set(training_files)
  # Its README names each training photograph with its licence, as SOURCES.md gives it.
  with open(os.path.join(shipped.folder(name), 'README.md')) as readme_file:
    readme = readme_file.read()
  for file in training_files:
    assert f'| {file} |' in readme and licences[file] in readme, file


def _strings(value):
  """Every string inside a JSON value."""
  if isinstance(value, str):
    yield value
  elif isinstance(value, dict):
    for item in value.values():
      yield from _strings(item)
  elif isinstance(value, list):
    for item in value:
      yield from _strings(item)


def test_no_shipped_config_names_a_place_on_the_machine_that_trained_it():
  for name in shipped.MODELS:
    with open(os.path.join(shipped.folder(name), 'config.json')) as config_file:
      strings = list(_strings(json.load(config_file)))
    assert strings  # the walk reads the file's values
    places = [text for text in strings if os.path.isabs(text) or text.startswith('~')
              or os.sep + 'tmp' + os.sep in text or os.sep + 'home' + os.sep in text]
    assert not places, (name, places)


def test_each_shipped_model_takes_the_data_its_config_says_it_trained_on():
  for name, model in shipped.MODELS.items():
    with open(os.path.join(shipped.folder(name), 'config.json')) as config_file:
      data = json.load(config_file)['data']
    assert data['dtype'] in model.pixel_types and data['channels'] in model.channels, name
  # The camera model's renderings are 8-bit RGB (bench/camera_model.py), nothing else.
  assert shipped.MODELS[shipped.CAMERA_SRGB].pixel_types == ('uint8',)
  assert shipped.MODELS[shipped.CAMERA_SRGB].channels == (3,)


def test_denoise_py_lists_the_shipped_models_in_its_help():
  flag_values = config_flags.flags.FlagValues()
  config_flags.define_flags(denoise_config.DenoiseConfig, flag_values)
  for name, model in shipped.MODELS.items():
    assert f'{name} ({model.what})' in flag_values['model'].help  # --helpfull's --model
  shown = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), '--help'],
                         capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
  for name, model in shipped.MODELS.items():
    assert f'  {name}: {model.what}.' in shown.stdout, shown.stdout[-1000:]


# The camera model's gain on a photograph it never saw (bench/recipes/camera.py): over
# seeds 1-6 (python -m bench.camera_model --held_out_seeds=6 at a180c2d, bfloat16 on an
# AVX512-BF16 host; docs/bench/camera_model_test_spread.json) chelsea gained 2.54-3.06 dB
# and coffee 1.59-2.63. An untrained or identity network gains about 0, a network that
# learned another noise less; the bound leaves 0.59 dB below the lowest. camera_srgb_high_iso
# (the same command with --ship_as at e49e68f, docs/bench/camera_high_iso_test_spread.json):
# chelsea 2.00-2.74, coffee 1.41-2.48; the bound leaves 0.41 dB below its lowest.
MIN_GAIN_DB = 1.0


@pytest.fixture(scope='module')
def camera_model():
  return n2n.Denoiser.load(shipped.CAMERA_SRGB)


@pytest.mark.parametrize('name', [shipped.CAMERA_SRGB, shipped.CAMERA_SRGB_HIGH_ISO])
@pytest.mark.parametrize('path', camera_recipe.HELD_OUT)
def test_the_camera_models_denoise_a_photograph_they_never_saw(name, path):
  assert camera_recipe.gain(n2n.Denoiser.load(name), path, seed=3) > MIN_GAIN_DB


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


REFUSAL = r'the model camera_srgb denoises 8-bit RGB \(uint8, 3 channels\) images, not {}'


@pytest.mark.slow
def test_the_camera_model_refuses_16_bit_and_grey_images_in_every_front_door(camera_model,
                                                                              tmp_path):
  rgb = np.full((40, 48, 3), 100, np.uint8)
  with pytest.raises(ValueError, match=REFUSAL.format(r'uint16 with 3 channel\(s\)')):
    camera_model(rgb.astype(np.uint16) * 257)
  with pytest.raises(ValueError, match=REFUSAL.format(r'uint8 with 1 channel\(s\)')):
    camera_model(rgb[..., 0])
  # denoise.py skips the file in one line, naming it, writes nothing and exits 2 (none done).
  (tmp_path / 'in').mkdir()
  tifffile.imwrite(tmp_path / 'in' / 'sixteen.tif', rgb.astype(np.uint16) * 257)
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={shipped.CAMERA_SRGB}',
       f'--input={tmp_path / "in"}', f'--output_dir={tmp_path / "out"}'],
      capture_output=True, text=True, timeout=300, cwd=tmp_path)
  assert result.returncode == 2, result.stderr[-2000:]
  assert re.search(r'Skipping .*sixteen\.tif: ' + REFUSAL.format('uint16'), result.stderr)
  assert not list((tmp_path / 'out').glob('*.tif'))
  # Its export keeps the refusal where n2n loads it again.
  n2n.export(shipped.CAMERA_SRGB, str(tmp_path / 'exported'))
  with pytest.raises(ValueError, match=REFUSAL.format('uint16')):
    n2n.Denoiser.load(str(tmp_path / 'exported'))(rgb.astype(np.uint16))
  np.testing.assert_array_equal(n2n.Denoiser.load(str(tmp_path / 'exported'))(rgb).shape,
                                rgb.shape)


def test_validate_follow_refuses_a_shipped_model_in_one_line(tmp_path, monkeypatch):
  # --follow writes TensorBoard curves into the run's folder: never into the package.
  from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
  from n2n.evaluation import validation  # pylint: disable=g-import-not-at-top
  monkeypatch.chdir(tmp_path)
  config = config_lib.ValidateConfig(checkpoint=shipped.CAMERA_SRGB, follow=True,
                                     follow_timeout=1)
  with pytest.raises(ValueError, match='is a model n2n ships: leave --follow out'):
    validation.follow(config)


def test_diagnose_offers_the_camera_model_for_8_bit_colour_photographs_only():
  # The demo's four colour photographs of scenes (on two alone, lag 4 along x read 0.07
  # once: row noise); any camera of the calibrated profile reads as correlated on these.
  paths = ('datasets/demo/train/astronaut.png', 'datasets/demo/train/rocket.png',
           *camera_recipe.HELD_OUT)
  captures = [camera_recipe.held_out_capture(path, seed=3)[0] for path in paths]
  offered = lambda diagnosis: any(f'--model={shipped.CAMERA_SRGB}' in line
                                  for line in diagnosis.recommendation.lines)
  eight_bit = n2n.diagnose(captures)
  assert eight_bit.kind == 'correlated' and offered(eight_bit), str(eight_bit)
  # The same pixels as 16-bit files (a colour micrograph, say): correlated, not offered.
  sixteen_bit = n2n.diagnose([capture.astype(np.uint16) * 257 for capture in captures])
  assert sixteen_bit.kind == 'correlated' and not offered(sixteen_bit), str(sixteen_bit)


def test_a_run_of_ones_own_named_like_a_shipped_model_is_not_taken_for_it():
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  from n2n.inference import serving  # pylint: disable=g-import-not-at-top
  shipped_config = restore.read_run_config(shipped.folder(shipped.CAMERA_SRGB))
  assert serving.of_run(shipped_config).shipped_model[0] == shipped.CAMERA_SRGB
  # train.py --model_dir=camera_srgb: the user's run keeps the name it was given.
  own = n2n.replace_settings(shipped_config, model_dir=shipped.CAMERA_SRGB)
  assert serving.of_run(own).shipped_model is None


@pytest.mark.slow
def test_the_fluorescence_model_takes_8_and_16_bit_grey_images_and_stacks_and_refuses_colour():
  model = n2n.Denoiser.load(shipped.FLUORESCENCE)
  rng = np.random.default_rng(0)
  counts = rng.poisson(20.0, (3, 64, 64)).astype(np.uint16) + 100  # a camera's offset
  for image in (counts[0], (counts[0] - 100).astype(np.uint8)):
    denoised = model(image)
    assert denoised.shape == image.shape and denoised.dtype == image.dtype
    # Flat expected counts: the output is flatter than the noisy input.
    assert denoised.astype(float).std() < image.astype(float).std() / 2
  stack = model(counts, axes='ZYX')  # plane by plane
  assert stack.shape == counts.shape and stack.dtype == counts.dtype
  for bad, words in ((np.zeros((64, 64, 3), np.uint8), r'not uint8 with 3 channel\(s\)'),
                     (counts[0].astype(np.float32), r'not float32 with 1 channel\(s\)')):
    with pytest.raises(ValueError, match='the model fluorescence denoises one-channel 8- or '
                       r'16-bit \(uint8 or uint16, 1 channel\) images, ' + words):
      model(bad)
