"""End to end: a few steps under MirroredStrategy over two logical CPU devices,
checkpoints and summaries, resuming, and validate.py on the result."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes.pairs import few_dozen_steps
from bench.recipes.pairs import run_config
from n2n import config as config_lib
from n2n import errors
from n2n.diagnosis import noise_statistics
from n2n.evaluation import validation
from n2n.training import distribute
from n2n.training import preflight
from n2n.training import train_lib
from tests.conftest import REPO_ROOT


def _events(directory):
  """(step, tag, value) of every scalar and image summary in a folder's event files."""
  found = []
  for path in tf.io.gfile.glob(os.path.join(directory, 'events.out.tfevents.*')):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        number = float(tf.make_ndarray(value.tensor)) if value.metadata.plugin_data.plugin_name == (
            'scalars') else None
        found.append((event.step, value.tag, number))
  return found


def _event_tags(directory):
  return {tag for _, tag, _ in _events(directory)}


def _scalar_series(directory, tag):
  return sorted((step, value) for step, found, value in _events(directory) if found == tag)


@pytest.fixture(scope='module')
def trained_run(tfrecord_dir, image_folder, tmp_path_factory):
  model_dir = tmp_path_factory.mktemp('run')
  strategy = distribute.create_strategy('mirrored')
  assert strategy.num_replicas_in_sync == 2
  run = train_lib.train_and_evaluate(run_config(tfrecord_dir, image_folder, model_dir), strategy)
  assert run.step == 6
  return model_dir, run.results


def test_training_writes_checkpoints_config_and_summaries(trained_run):
  model_dir, results = trained_run
  assert tf.train.latest_checkpoint(str(model_dir)).endswith('ckpt-6')
  assert tf.io.gfile.exists(str(model_dir / 'ckpt-4.index'))
  saved = json.loads((model_dir / 'config.json').read_text())
  # spatial_dims resolved from the (image) data; z_pools and xy_conv_levels recorded
  # though 2D ignores them.
  assert saved['model'] == {'architecture': 'n2n_unet', 'channels': 3, 'downsampling': 'max_pool',
                            'top_skip': True, 'network_width': 48, 'spatial_dims': 2,
                            'z_pools': 3, 'xy_conv_levels': 0}
  assert saved['optimisation']['train_steps'] == 6
  assert {'loss', 'learning_rate', 'images_per_second'} <= _event_tags(str(model_dir / 'train'))
  eval_tags = _event_tags(str(model_dir / 'eval'))
  assert {'psnr/gaussian_25', 'input_psnr/gaussian_25'} <= eval_tags
  assert any(tag.startswith('gaussian_25/') for tag in eval_tags)
  assert [scores.level for scores in results] == [25.0] and len(results[0].images) == 2
  # The only evaluation (step 6) is the best so far: kept in best/, which
  # validate.py takes as a model_dir.
  record = json.loads((model_dir / 'best' / 'best.json').read_text())
  assert record['step'] == 6 and record['score'] == pytest.approx(results[0].mean_psnr)
  _, rescored = validation.validate_once(
      config_lib.ValidateConfig(checkpoint=str(model_dir / 'best'), max_images=2))
  assert rescored[0].mean_psnr == pytest.approx(results[0].mean_psnr, abs=1e-4)


@pytest.mark.slow
def test_rerun_resumes_from_the_saved_step(trained_run, tfrecord_dir, image_folder, tmp_path):
  # A copy: the module's other tests read the run as the fixture made it.
  model_dir = tmp_path / 'run'
  shutil.copytree(trained_run[0], model_dir)
  strategy = distribute.create_strategy('mirrored')
  config = run_config(tfrecord_dir, image_folder, model_dir, train_steps=10, checkpoint_every=2,
                      eval_every=100)
  train_lib.train_and_evaluate(config, strategy)
  reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(model_dir)))
  assert reader.get_tensor('step/.ATTRIBUTES/VARIABLE_VALUE') == 10
  # Resumed at 6: the first new checkpoint is 8, and 4 (before the resume) is gone.
  assert tf.io.gfile.exists(str(model_dir / 'ckpt-8.index'))
  loss_steps = [step for step, _ in _scalar_series(str(model_dir / 'train'), 'loss')]
  assert loss_steps == [2, 4, 6, 8, 10]


def test_a_different_network_in_model_dir_is_refused(trained_run, tfrecord_dir, image_folder):
  model_dir, _ = trained_run
  config = run_config(tfrecord_dir, image_folder, model_dir, channels=1)
  with pytest.raises(ValueError, match=r'holds a different network \(channels: 3 -> 1\)'):
    train_lib.train_and_evaluate(config, distribute.create_strategy('default'))


@pytest.mark.slow
def test_validate_writes_metrics_json_and_images(trained_run, image_folder, tmp_path):
  model_dir, _ = trained_run
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'validate.py'), f'--checkpoint={model_dir}',
       f'--data={image_folder}', '--noise_levels=25,50', f'--output_dir={tmp_path}'],
      capture_output=True, text=True, timeout=300)
  assert result.returncode == 0, result.stderr[-2000:]
  assert 'gray.png' in result.stdout and 'mean' in result.stdout
  metrics = json.loads((tmp_path / 'metrics.json').read_text())
  assert metrics['noise'] == 'gaussian' and set(metrics['levels']) == {'25', '50'}
  level = metrics['levels']['25']
  assert len(level['images']) == 6
  assert level['mean_input_psnr'] == pytest.approx(
      sum(image['input_psnr'] for image in level['images']) / 6)
  assert (tmp_path / 'gaussian_25' / 'gray.png').exists()
  # Fixed evaluation noise: the same checkpoint scores the same PSNR again.
  again = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'validate.py'), f'--checkpoint={model_dir}',
       f'--data={image_folder}', '--noise_levels=25,50'],
      capture_output=True, text=True, timeout=300)
  assert again.stdout.splitlines() == result.stdout.splitlines()[:-1]


def test_validate_defaults_reproduce_the_evaluation_during_training(trained_run):
  # The run trained with seed 3, and its own val_data, levels and precision:
  # with no flags but --checkpoint and --max_images, validate.py must print
  # the PSNR the run logged for its last checkpoint.
  model_dir, results = trained_run
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'validate.py'), f'--checkpoint={model_dir}',
       '--max_images=2'], capture_output=True, text=True, timeout=300)
  assert result.returncode == 0, result.stderr[-2000:]
  assert 'seed 3, precision float32' in result.stdout.splitlines()[0]
  mean_line = next(line for line in result.stdout.splitlines() if line.strip().startswith('mean'))
  logged = dict(_scalar_series(str(model_dir / 'eval'), 'psnr/gaussian_25'))[6]
  assert float(mean_line.split()[-1]) == pytest.approx(logged, abs=0.006)
  assert results[0].mean_psnr == pytest.approx(logged, abs=1e-4)


def test_validate_refuses_a_missing_checkpoint(tmp_path):
  # What validate.py prints after 'validate.py: error: ', from the call its main makes,
  # without a process (tests/test_bad_input.py runs the program for that form).
  with pytest.raises(ValueError) as refused:
    validation.validate_once(config_lib.ValidateConfig(checkpoint=str(tmp_path),
                                                       data=str(tmp_path)))
  assert errors.first_line(refused.value) == f"--checkpoint: no checkpoint in '{tmp_path}'"


@pytest.mark.slow
@pytest.mark.parametrize('noise,loss,levels', [('text', 'l1', (0.25,)),
                                               ('impulse', 'annealed_l0', (0.5, 0.7)),
                                               ('bernoulli', 'masked_l2', (0.5,))])
def test_each_corruption_trains_with_its_paper_loss(tfrecord_dir, image_folder, tmp_path, noise,
                                                    loss, levels):
  config = run_config(tfrecord_dir, image_folder, tmp_path, noise=noise, noise_range=(0.0, 0.5),
                      eval_noise_levels=levels, loss=loss, train_steps=2, eval_every=2,
                      max_eval_images=1)
  results = train_lib.train_and_evaluate(config, distribute.create_strategy('default')).results
  assert tuple(scores.level for scores in results) == levels
  eval_tags = _event_tags(str(tmp_path / 'eval'))
  assert {f'psnr/{noise}_{level:g}' for level in levels} <= eval_tags
  train_tags = _event_tags(str(tmp_path / 'train'))
  assert ('annealed_l0_gamma' in train_tags) == (loss == 'annealed_l0')


@pytest.mark.slow
def test_model_dir_on_an_in_memory_filesystem(tfrecord_dir, image_folder):
  # ram:// proves no code path assumes local disk (as gs:// needs).
  model_dir = 'ram://n2n_test/run'
  config = run_config(tfrecord_dir, image_folder, model_dir, train_steps=4, eval_every=4,
                      checkpoint_every=2)
  train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  assert tf.train.latest_checkpoint(model_dir).endswith('ckpt-4')
  assert tf.io.gfile.exists(model_dir + '/config.json')
  assert tf.io.gfile.glob(model_dir + '/eval/events.out.tfevents.*')
  # And it resumes from there.
  run = train_lib.train_and_evaluate(
      run_config(tfrecord_dir, image_folder, model_dir, train_steps=6, eval_every=100),
      distribute.create_strategy('default'))
  assert run.step == 6 and tf.train.latest_checkpoint(model_dir).endswith('ckpt-6')


@pytest.mark.slow
def test_profile_steps_write_a_trace_and_jit_compile_trains(tfrecord_dir, image_folder, tmp_path):
  config = run_config(tfrecord_dir, image_folder, tmp_path, val_data='', train_steps=4,
                      profile_steps=(1, 3), jit_compile=True)
  run = train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  assert run.step == 4
  assert tf.io.gfile.glob(str(tmp_path / 'plugins' / 'profile' / '*' / '*.xplane.pb'))


# The few-dozen-steps run's bounds; over seeds 1-6 (python -m bench.learning_test_spread
# --tests=few_dozen_steps; docs/bench/learning_test_spread_few_dozen_steps.json): the loss
# ratio was 0.10-0.25 and the rise 5.9-8.1 dB.
MAX_LOSS_RATIO = 0.7  # the last logged loss over the first
MIN_PSNR_RISE_DB = 2.0  # the last evaluation's PSNR over the first (step 10)


@pytest.mark.slow
def test_a_few_dozen_steps_lower_the_loss_and_raise_the_psnr(tfrecord_dir, image_folder, tmp_path):
  losses, psnrs = few_dozen_steps(tfrecord_dir, image_folder, tmp_path, seed=3)
  assert len(losses) == 6 and len(psnrs) == 6
  assert losses[-1] < MAX_LOSS_RATIO * losses[0], losses
  assert psnrs[-1] > psnrs[0] + MIN_PSNR_RISE_DB, psnrs


def test_eval_every_zero_turns_evaluation_off(tfrecord_dir, image_folder, tmp_path):
  config = run_config(tfrecord_dir, image_folder, tmp_path, train_steps=2, eval_every=0)
  run = train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  assert run.results is None and not (tmp_path / 'eval').exists()


def test_the_finite_loss_check_runs_before_any_save(tmp_path):
  # Under a cluster strategy the preemption handler saves too: it must come
  # after the NaN check, like the periodic save and the save on a signal.
  class FakeTrainer:
    manager = None
    optimizer = None
    model = None

  config = run_config(tmp_path, tmp_path, tmp_path, eval_every=0, profile_steps=(1, 2))
  inputs = preflight.CheckedInputs(config, 'float32', 2, [], False, [])
  run_actions, evaluate = train_lib._make_actions(  # pylint: disable=protected-access
      config, FakeTrainer(), inputs, True, str(tmp_path), object(), None)
  kinds = [type(action).__name__ for action in run_actions]
  assert kinds == ['CheckFiniteLoss', 'SyncPreemption', 'LogProgress', 'SaveCheckpoint',
                   'StopOnSignal', 'Profile']
  assert evaluate is None


@pytest.mark.parametrize('method,correlation,warns,scheme', [
    ('neighbor2neighbor', 0.55, True, {}), ('blind_spot', 0.55, True, {}),
    ('neighbor2neighbor', 0.05, False, {}), ('pairs', 0.55, False, {}),
    # With a pixel-shuffle stride or a structN2V line the method is set for it.
    ('neighbor2neighbor', 0.55, False, {'neighbor2neighbor_stride': 2}),
    ('blind_spot', 0.55, False, {'blind_spot_stride': 4}),
    ('blind_spot', 0.55, False, {'blind_spot_line': 'rows'}),
    ('blind_spot', 0.55, True, {'blind_spot_line': 'none', 'blind_spot_stride': 1})])
def test_a_single_image_method_on_correlated_captures_is_warned_at_start(
    method, correlation, warns, scheme, monkeypatch):
  size = 2 * noise_statistics.MAX_LAG + 1
  profile = noise_statistics.NoiseProfile(
      'single', 3, np.eye(size), np.array([correlation, 0.1, 0.0, 0.0]),
      np.array([correlation, 0.1, 0.0, 0.0]), np.array([0.5]), np.full((1, 3), 0.02),
      np.zeros((3, 2)), 1000)
  logged = {'info': [], 'warning': []}
  for level in logged:
    monkeypatch.setattr(train_lib.logging, level,
                        lambda message, *args, level=level: logged[level].append(message % args))
  config = config_lib.train_config(train_data='x', model_dir='m', noise='none', method=method,
                                   **scheme)
  train_lib._log_noise(config, profile, 4)  # pylint: disable=protected-access
  assert logged['info'][0].startswith('Training data noise, from 4 record(s): ')
  assert len(logged['warning']) == warns
  if warns:
    assert logged['warning'][0].startswith(f'--method={method} as set assumes noise independent '
                                           'from pixel to pixel, but this data\'s noise is correlated '
                                           f'(correlation at lag 1 {correlation:.2f})')


@pytest.mark.parametrize('method,scheme,advice', [
    ('blind_spot', {'blind_spot_line': 'none'}, 'Leave --blind_spot_line at auto'),
    ('neighbor2neighbor', {}, 'No stride separates noise shared by whole lines'),
    ('recorrupted', {}, 'assumes noise correlated over 4 pixels at most, but this data\'s noise '
     'is rows')])
def test_the_warning_on_row_noise_advises_a_line_not_a_stride(method, scheme, advice,
                                                              monkeypatch):
  size = 2 * noise_statistics.MAX_LAG + 1
  # Correlated along rows at every lag, not down columns: row noise.
  profile = noise_statistics.NoiseProfile(
      'single', 1, np.eye(size), np.full(noise_statistics.MAX_LAG, 0.3),
      np.zeros(noise_statistics.MAX_LAG), np.array([0.5]), np.full((1, 1), 0.02),
      np.zeros((1, 2)), 1000)
  from n2n.diagnosis import report as diagnosis_report  # pylint: disable=g-import-not-at-top
  assert diagnosis_report.kind_of(profile) == 'rows'
  warnings = []
  monkeypatch.setattr(train_lib.logging, 'info', lambda message, *args: None)
  monkeypatch.setattr(train_lib.logging, 'warning',
                      lambda message, *args: warnings.append(message % args))
  config = config_lib.train_config(train_data='x', model_dir='m', noise='none', method=method,
                                   **scheme)
  train_lib._log_noise(config, profile, 4)  # pylint: disable=protected-access
  assert len(warnings) == 1 and advice in warnings[0], warnings
  assert 'crops a multiple' not in warnings[0]
