"""n2n.train, n2n.Denoiser and n2n.diagnose on numpy arrays (docs/python_api.md):
the arrays written once into the run, resumes on the same arrays only, 2D and
3D, stop and progress from Python, every bad input's one line, and the
diagnosis as diagnose.py prints it for the same images in files."""

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes import arrays as arrays_recipe
import n2n
from n2n import config as config_lib
from n2n.apps import diagnose as diagnose_app
from n2n.data import native_images
from n2n.data import phantom
from tests.conftest import REPO_ROOT

# The tests' phantom volumes (bench/recipes/volumes.py's size): counts up to about 460.
SPEC = phantom.PhantomSpec(shape=(16, 64, 64), nuclei=5, nucleus_radius=10.0, filaments=6)
WHITE_LEVEL = 600.0


_clean = arrays_recipe.clean_image
_noisy = arrays_recipe.noisy


def _config(model_dir, **overrides):
  values = dict(model_dir=str(model_dir), noise='none', method='neighbor2neighbor',
                crop_size=64, batch_size=4, train_steps=30, network_width=8,
                precision='float32', seed=1, steps_per_loop=10, log_every=10)
  values.update(overrides)
  return n2n.train_config(**values)


def _data(model_dir):
  return json.loads((model_dir / 'config.json').read_text())['data']


def _shard_times(folder):
  return sorted(os.path.getmtime(path) for path in tf.io.gfile.glob(str(folder / '*.tfrecord')))


@pytest.mark.slow
def test_noisy_arrays_train_and_resume_on_the_same_arrays_only(tmp_path):
  rng = np.random.default_rng(0)
  arrays = [_noisy(rng, _clean(rng, 80, 96)) for _ in range(3)]
  val = [_noisy(rng, _clean(rng, 64, 72))]
  config = _config(tmp_path / 'run', eval_every=30)
  run = n2n.train(config, noisy=arrays, val=val, progress_bar=False)
  assert (run.step, run.stopped) == (30, False)
  data = _data(tmp_path / 'run')
  train_folder = tmp_path / 'run' / 'arrays' / 'train'
  assert (data['arrays'], data['array_axes'], data['dtype'], data['channels']) == (
      'noisy', '', 'float32', 1)
  assert data['train_data'] == str(train_folder)
  assert data['val_data'] == str(tmp_path / 'run' / 'arrays' / 'val')
  manifest = json.loads((train_folder / 'manifest.json').read_text())
  assert (manifest['kind'], manifest['num_images']) == ('noisy_images', 3)
  assert json.loads((train_folder / 'arrays.json').read_text())['scenes'] == 3
  assert tf.train.latest_checkpoint(str(tmp_path / 'run')).endswith('ckpt-30')
  # The held-out noisy images are scored by the method's held-out loss, and the
  # best checkpoint is kept by it.
  assert run.results[0].mean_held_out_loss > 0
  assert json.loads((tmp_path / 'run' / 'best' / 'best.json').read_text())['metric'] == (
      'minus_held_out_loss')
  written = _shard_times(train_folder)

  steps = []
  longer = n2n.replace_settings(config, train_steps=40)
  run = n2n.train(longer, noisy=arrays, val=val, progress_bar=False,
                  progress=lambda step, total, logs: steps.append((step, total)))
  assert run.step == 40 and steps == [(30, 40), (40, 40)]
  assert _shard_times(train_folder) == written  # the same arrays are not written again

  other = [array[:, ::-1] for array in arrays]
  with pytest.raises(ValueError, match=r'^noisy=: .*run was trained on other arrays \(3 '
                     r'scene\(s\) of noisy= arrays, fingerprint [0-9a-f]{12}\); these give '
                     r'fingerprint [0-9a-f]{12}\. Pass the same arrays, axes and white_level to '
                     'resume it, or give a new model_dir'):
    n2n.train(longer, noisy=other, progress_bar=False)
  with pytest.raises(ValueError, match=r'run was trained on noisy= arrays: pass the same ones'):
    n2n.train(longer, progress_bar=False)


@pytest.mark.slow
def test_progress_gives_neighbor2neighbor_s_reconstruction_loss_apart_from_its_regulariser(
    tmp_path):
  rng = np.random.default_rng(2)
  clean = [_clean(rng, 64, 64) for _ in range(2)]
  reports = []
  keep = lambda step, total, logs: reports.append(logs) if logs else None
  n2n.train(_config(tmp_path / 'single'), noisy=[_noisy(rng, image) for image in clean],
            progress=keep, progress_bar=False)
  # The loss holds the regulariser, whose weight rises from 0 over the run: above the
  # reconstruction term, and by more in each loop.
  gaps = [logs['loss'] - logs['reconstruction_loss'] for logs in reports]
  assert len(reports) == 3 and all(logs['reconstruction_loss'] > 0 for logs in reports)
  assert 0 < gaps[0] < gaps[1] < gaps[2], reports
  # Pairs of captures have no term of their own: their loss is the reconstruction.
  reports.clear()
  n2n.train(_config(tmp_path / 'pairs', method='pairs', train_steps=10),
            captures=[tuple(_noisy(rng, image) for _ in range(2)) for image in clean],
            progress=keep, progress_bar=False)
  assert len(reports) == 1 and 'reconstruction_loss' not in reports[0] and reports[0]['loss'] > 0


@pytest.mark.slow
def test_a_stop_event_saves_a_checkpoint_and_training_again_resumes_there(tmp_path):
  rng = np.random.default_rng(1)
  arrays = [_noisy(rng, _clean(rng, 64, 64)) for _ in range(2)]
  config = _config(tmp_path / 'run', train_steps=60, checkpoint_every=1000)
  stop, reports = threading.Event(), []

  def progress(step, total, logs):
    reports.append((step, total, logs))
    if step >= 20:
      stop.set()

  run = n2n.train(config, noisy=arrays, stop=stop, progress=progress, progress_bar=False)
  assert (run.step, run.stopped) == (20, True)
  assert tf.train.latest_checkpoint(str(tmp_path / 'run')).endswith('ckpt-20')
  assert [step for step, _, _ in reports] == [0, 10, 20]
  assert reports[0][2] == {} and all(np.isfinite(logs['loss']) for _, _, logs in reports[1:])
  assert {total for _, total, _ in reports} == {60}

  # Again in a worker thread, as a GUI runs it, stopped from this thread: it
  # resumes at 20 and stops at the end of the loop that is running when asked.
  stop.clear()
  started, finished = threading.Event(), []

  def report(step, total, logs):
    if step >= 30:
      started.set()
      # The worker waits here for this thread's stop: a loaded host that kept this thread
      # waiting could otherwise let the run reach its last step first.
      stop.wait(timeout=120)

  worker = threading.Thread(target=lambda: finished.append(n2n.train(
      config, noisy=arrays, stop=stop, progress=report, progress_bar=False)))
  worker.start()
  assert started.wait(timeout=120)
  stop.set()
  worker.join(timeout=120)
  (run,) = finished
  assert run.stopped and run.step in (30, 40)
  assert tf.train.latest_checkpoint(str(tmp_path / 'run')).endswith(f'ckpt-{run.step}')


@pytest.mark.slow
def test_2d_captures_and_clean_arrays_train_and_the_denoiser_keeps_shape_and_dtype(tmp_path):
  rng = np.random.default_rng(2)
  cleans = [(_clean(rng, 72, 80) * 4095).astype(np.uint16) for _ in range(2)]
  captures = [tuple(np.clip(clean + rng.normal(0, 200, clean.shape), 0, 4095).astype(np.uint16)
                    for _ in range(2)) for clean in cleans]
  config = _config(tmp_path / 'pairs', method='pairs', crop_size=32, train_steps=10)
  n2n.train(config, captures=captures, white_level=4095, progress_bar=False)
  manifest = json.loads((tmp_path / 'pairs' / 'arrays' / 'train' / 'manifest.json').read_text())
  assert (manifest['kind'], manifest['num_captures'], manifest['white_level'],
          manifest['dtype']) == ('scenes', 4, 4095.0, 'uint16')
  denoiser = n2n.Denoiser.load(tmp_path / 'pairs', precision='float32')
  held_out = captures[0][0][:50, :60]
  denoised = denoiser(held_out)
  assert denoised.shape == held_out.shape and denoised.dtype == np.uint16

  # Clean arrays get the config's noise; 2D ones are written as 8-bit RGB, as
  # clean image files are (uint16 values over the white level).
  clean_config = _config(tmp_path / 'clean', method='pairs', noise='gaussian', crop_size=32,
                         train_steps=10)
  run = n2n.train(clean_config, clean=cleans, val=cleans[:1], white_level=4095,
                  progress_bar=False)
  assert _data(tmp_path / 'clean')['arrays'] == 'clean'
  assert run.results[0].mean_psnr > 0  # the validation image with the config's noise added
  folder = tmp_path / 'clean' / 'arrays' / 'train'
  assert json.loads((folder / 'manifest.json').read_text())['num_images'] == 2
  from n2n.data import tfrecord  # pylint: disable=g-import-not-at-top
  records = [tfrecord.parse_image(record) for record in
             tf.data.TFRecordDataset(tf.io.gfile.glob(str(folder / '*.tfrecord')))]
  images = {record['name'].numpy().decode(): record['image'].numpy() for record in records}
  expected = np.round(cleans[1].astype(np.float32) / 4095 * 255).astype(np.uint8)
  np.testing.assert_array_equal(images['clean[1]'], np.repeat(expected[..., None], 3, axis=2))


@pytest.mark.slow
def test_a_movie_trains_the_2d_network_on_its_frames(tmp_path):
  rng = np.random.default_rng(3)
  clean = _clean(rng, 64, 64)
  movie = np.stack([_noisy(rng, clean) for _ in range(4)])
  config = _config(tmp_path / 'run', spatial_dims=2, train_steps=10)
  n2n.train(config, noisy=[movie], axes='TYX', progress_bar=False)
  manifest = json.loads((tmp_path / 'run' / 'arrays' / 'train' / 'manifest.json').read_text())
  assert (manifest['num_images'], manifest['spatial_dims']) == (4, 2)
  # A 2D run denoises a stack plane by plane, as each plane alone.
  denoiser = n2n.Denoiser.load(tmp_path / 'run', precision='float32')
  denoised = denoiser(movie[:2].transpose(1, 2, 0), axes='YXT')
  assert denoised.shape == (64, 64, 2) and denoised.dtype == np.float32
  np.testing.assert_array_equal(denoised[..., 1], denoiser(movie[1]))


@pytest.fixture(scope='module')
def volume_run(tmp_path_factory):
  """A 20-step 3D pairs run on two phantom scenes given as ZYX arrays, with validation."""
  model_dir = tmp_path_factory.mktemp('volume_run')
  captures = [tuple(phantom.phantom_scene(SPEC, seed=10 + index)[0]) for index in range(3)]
  config = _config(model_dir, method='pairs', crop_size=32, crop_depth=8, batch_size=2,
                   train_steps=20, eval_every=20)
  run = n2n.train(config, captures=captures[:2], val=captures[2:], axes='ZYX',
                  white_level=WHITE_LEVEL, progress_bar=False)
  return model_dir, run


@pytest.mark.slow
def test_3d_captures_train_and_denoise_a_held_out_volume_in_shape_and_dtype(volume_run):
  model_dir, run = volume_run
  data = _data(model_dir)
  assert (data['arrays'], data['array_axes'], data['spatial_dims'], data['white_level']) == (
      'captures', 'ZYX', 3, WHITE_LEVEL)
  # Validation stacks without a reference are scored against their second capture.
  assert run.results[0].mean_noisy_target_mse > 0
  denoiser = n2n.Denoiser.load(model_dir, precision='float32')
  held_out = phantom.phantom_scene(SPEC, seed=30)[0][0]
  reports = []
  denoised = denoiser(held_out, axes='ZYX', progress=lambda done, total: reports.append(
      (done, total)))
  assert denoised.shape == held_out.shape and denoised.dtype == np.uint16
  dones = [done for done, _ in reports]
  assert dones == sorted(dones) and reports[-1][0] == reports[-1][1] > 1
  # The same volume channels-last, and with the 8 xy flips and rotations.
  np.testing.assert_array_equal(denoiser(held_out[..., None], axes='ZYXC')[..., 0], denoised)
  with_tta = denoiser(held_out, axes='zyx', tta=True)
  # TTA is the mean of the 8 flips and rotations in y and x, each denoised and turned
  # back (each pass rounded to uint16 here: within a count of the mean TTA rounds once).
  passes = []
  for turns in range(4):
    for flip in (False, True):
      turned = np.rot90(held_out, turns, axes=(1, 2))
      turned = np.ascontiguousarray(turned[:, :, ::-1] if flip else turned)
      output = denoiser(turned, axes='ZYX').astype(np.float64)
      passes.append(np.rot90(output[:, :, ::-1] if flip else output, -turns, axes=(1, 2)))
  assert with_tta.shape == held_out.shape and with_tta.dtype == np.uint16
  assert np.abs(with_tta.astype(np.float64) - np.mean(passes, axis=0)).max() <= 1
  assert np.abs(with_tta.astype(np.int64) - denoised).max() > 1
  cancel = threading.Event()
  cancel.set()
  with pytest.raises(n2n.DenoisingCancelled, match='cancelled after 0 of'):
    denoiser(held_out, axes='ZYX', cancel=cancel)
  with pytest.raises(ValueError, match=r"is a 3D run: give the array's axes, e.g. "):
    denoiser(held_out)
  with pytest.raises(ValueError, match=r"axes 'YX': a 3D run denoises stacks"):
    denoiser(held_out[0], axes='YX')


@pytest.mark.slow
def test_an_export_of_a_3d_run_denoises_arrays_as_its_checkpoint(volume_run, tmp_path):
  model_dir, _ = volume_run
  n2n.export(model_dir, tmp_path / 'export')
  held_out = phantom.phantom_scene(SPEC, seed=31)[0][0]
  from_export = n2n.Denoiser.load(tmp_path / 'export')(held_out, axes='ZYX')
  from_checkpoint = n2n.Denoiser.load(model_dir, precision='float32')(held_out, axes='ZYX')
  assert from_export.dtype == np.uint16
  assert np.abs(from_export.astype(int) - from_checkpoint).max() <= 1


def _bad_input_cases():
  rng = np.random.default_rng(4)
  image = rng.uniform(0, 1, (64, 64)).astype(np.float32)
  rgb = rng.uniform(0, 1, (64, 64, 3)).astype(np.float32)
  not_finite = image.copy()
  not_finite[3, 5] = np.nan
  return [
      (dict(noisy=[image, image.astype(np.float64)]),
       r'^noisy\[1\] is float64 but noisy\[0\] is float32; training arrays share one dtype$'),
      (dict(noisy=[image, rgb]), r'^noisy\[1\] has 3 channel\(s\) but noisy\[0\] has 1; '
       'training arrays share one channel count$'),
      (dict(noisy=[image], axes='ZYX'), r"^noisy\[0\]: axes 'ZYX' name 3 axes, the data has 2$"),
      (dict(noisy=[image], axes='QX'), r"^noisy\[0\]: axes 'QX' must be distinct letters of "
       r"'TZCSYX' with Y and X$"),
      (dict(noisy=[image, not_finite]),
       r'^noisy\[1\] holds NaN or infinite values; training arrays must be finite$'),
      (dict(noisy=[image, image[:40]]), r'^noisy\[1\] is 64x40 \(width x height\) in y and x: '
       r'smaller than crop_size=64$'),
      (dict(captures=[(image, image), (image, image[:, :63])]),
       r'^captures\[1\]\[1\] is 63x64 with 1 channel\(s\) but captures\[1\]\[0\] is 64x64 '
       r'with 1 channel\(s\); the captures of a scene must be registered images'),
      (dict(captures=[(image, image), (image,)]),
       r'^captures\[1\] holds 1 capture; a scene needs two or more'),
      (dict(noisy=[image], clean=[image]), r'^noisy=, clean= all give training data; pass one'),
      ({}, r'^n2n.train needs training data: noisy=, captures= or clean= arrays, or '
       r'train_data= in the config$'),
      (dict(noisy=[image.astype(np.int32)]), r'^noisy\[0\] is int32; training arrays are '
       'uint8, uint16, float32, float64$'),
      (dict(noisy=image), r'^noisy= takes a list of arrays \(one per scene\), not ndarray'),
      (dict(noisy=[np.zeros((5, 64, 64), np.float32)]),
       r"^noisy\[0\] has shape \(5, 64, 64\): give its axes, e.g. axes='ZYX'"),
      (dict(noisy=[image * 2]), r'^noisy\[0\] holds values up to .*, above the default white '
       'level 1'),
      (dict(noisy=[image], axes=None), r"^axes=None: a string of the arrays' axes"),
      (dict(noisy=[image], val=[rgb]), r'^val\[0\] is float32 with 3 channel\(s\) in 2D but '
       r'noisy\[0\] is float32 with 1 in 2D; val= takes arrays like the training arrays$'),
  ]


@pytest.mark.parametrize('arguments, message', _bad_input_cases())
def test_bad_arrays_are_one_line_naming_the_argument_and_index(tmp_path, arguments, message):
  with pytest.raises(ValueError, match=message) as raised:
    n2n.train(_config(tmp_path / 'run'), progress_bar=False, **arguments)
  assert '\n' not in str(raised.value)
  assert not (tmp_path / 'run' / 'config.json').exists()


@pytest.mark.parametrize('overrides, arguments, message', [
    (dict(method='pairs'), 'noisy',
     r"^noisy= gives one capture of each scene, which method='pairs' cannot train on: give "
     r"captures=\[\(a1, a2\), ...\] of two or more per scene, or method='neighbor2neighbor' or "
     "'blind_spot'"),
    (dict(noise='gaussian', method='pairs'), 'captures',
     r"^captures= holds real noisy captures: train them with noise='none'"),
    (dict(method='pairs'), 'clean',
     r"^clean= holds clean images: give the config a synthetic noise"),
    (dict(train_data='records/train-*'), 'noisy',
     r"^noisy= and train_data='records/train-\*' both give training data; pass one"),
])
def test_arrays_the_runs_settings_cannot_train_on_are_refused(tmp_path, overrides, arguments,
                                                              message):
  image = np.random.default_rng(5).uniform(0, 1, (64, 64)).astype(np.float32)
  given = [(image, image)] if arguments == 'captures' else [image]
  with pytest.raises(ValueError, match=message):
    n2n.train(_config(tmp_path / 'run', **overrides), progress_bar=False, **{arguments: given})


def test_train_config_needs_no_train_data():
  config = n2n.train_config(model_dir='runs/cells', noise='none', method='neighbor2neighbor',
                            crop_size=128, batch_size=8, train_steps=2000)
  assert config.data.train_data == '' and config.method.name == 'neighbor2neighbor'


def _ramp(rng):
  """A gentle ramp of counts around 1500, [96, 128] float."""
  rows, columns = np.mgrid[0:96, 0:128]
  slope = rng.uniform(-1, 1, 2)
  return 1500 + 8 * (slope[0] * rows + slope[1] * columns)


def _exposure(rng, signal):
  """uint16 Poisson-Gaussian noise on signal, independent from pixel to pixel: a
  camera's raw frame."""
  return np.clip(rng.poisson(signal) + rng.normal(0, 30, signal.shape), 0,
                 65535).astype(np.uint16)


@pytest.mark.slow
def test_diagnose_on_arrays_is_what_diagnose_py_prints_for_the_same_files(tmp_path):
  rng = np.random.default_rng(6)
  signals, images = [], []
  for _ in range(3):  # each ramp, then its exposure
    signals.append(_ramp(rng))
    images.append(_exposure(rng, signals[-1]))
  folder = tmp_path / 'images'
  folder.mkdir()
  for index, image in enumerate(images):
    (folder / f'image{index}.png').write_bytes(native_images.encode_pages([image], 'png'))
  result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'diagnose.py'),
                           f'--input={folder}', '--white_level=4095'],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
  assert result.returncode == 0, result.stderr[-2000:]
  report = n2n.diagnose(images, white_level=4095)
  assert str(report) == result.stdout.strip()
  assert report.kind == 'independent' and report.method == 'neighbor2neighbor'
  # One-channel counts with shot noise: the shipped fluorescence model fits them, first as
  # is, and whoever trains starts from it (docs/diagnosis.md's table).
  assert report.model == 'fluorescence'
  assert report.settings == {'noise': 'none', 'method': 'neighbor2neighbor',
                             'init_from': 'fluorescence', 'normalization': 'percentile'}
  # The same counts as float pixels: the model refuses float images, so it is not offered
  # and training starts from scratch.
  floats = n2n.diagnose([image.astype(np.float32) / 4095 for image in images])
  assert floats.method == 'neighbor2neighbor' and not floats.model, str(floats)
  assert 'init_from' not in floats.settings and 'fluorescence' not in str(floats)
  assert report.correlation_x.shape == report.correlation_y.shape == (4,)
  # The level the exposures drew, sqrt(counts + 30^2) / 4095 per pixel (0.0109-0.0150 here):
  # the report's mean over level bins lies in that range, within 15%.
  drawn = np.sqrt(np.concatenate([signal.ravel() for signal in signals]) + 30 ** 2) / 4095
  assert 0.85 * drawn.min() < report.noise_level < 1.15 * drawn.max()

  # Two captures of each scene: as diagnose.py --scenes reads scene folders.
  signals = [_ramp(rng) for _ in range(2)]
  captures = [(_exposure(rng, signal), _exposure(rng, signal)) for signal in signals]
  for index, scene in enumerate(captures):
    (tmp_path / 'scenes' / f'scene{index}').mkdir(parents=True)
    for number, capture in enumerate(scene):
      (tmp_path / 'scenes' / f'scene{index}' / f'c{number}.png').write_bytes(
          native_images.encode_pages([capture], 'png'))
  from_files = diagnose_app.diagnose(config_lib.DiagnoseConfig(
      input=str(tmp_path / 'scenes'), scenes=True))
  assert str(n2n.diagnose(captures=captures)) == str(from_files)
  with pytest.raises(ValueError, match=r'^images\[1\] holds NaN or infinite values'):
    n2n.diagnose([images[0], np.full((64, 64), np.nan, np.float32)])
  with pytest.raises(ValueError, match=r'^captures\[0\] holds 1 capture'):
    n2n.diagnose(captures=[(images[0],)])


@pytest.mark.slow
def test_training_on_captures_given_as_arrays_denoises_a_held_out_image(tmp_path):
  """Noise2Noise on pairs of arrays (sigma 0.1), 100 steps at width 16: the
  held-out image comes back closer to its clean image than it went in
  (bench/recipes/arrays.py; its gain over seeds:
  docs/bench/learning_test_spread_arrays.json)."""
  assert arrays_recipe.captures_gain(tmp_path / 'run', 8) > GAIN_DB


# About half the least gain measured over seeds 1-6 (learning_test_spread_arrays.json).
GAIN_DB = 4.0
