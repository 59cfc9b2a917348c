"""Crashes and signals: SIGTERM saves and stops, SIGKILL at random moments never
loses more than one checkpoint interval, NaN stops without saving, and
--deterministic runs repeat exactly. All through train.py, as a user runs it."""

import os
import random
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import REPO_ROOT


def _flags(tfrecord_dir, model_dir, *extra):
  return [sys.executable, os.path.join(REPO_ROOT, 'train.py'),
          f'--train_data={tfrecord_dir}/*.tfrecord', f'--model_dir={model_dir}',
          '--crop_size=32', '--batch_size=2', '--precision=float32', '--steps_per_loop=1',
          '--log_every=1', '--eval_every=100000', *extra]


def _checkpoint_step(model_dir):
  latest = tf.train.latest_checkpoint(str(model_dir))
  if latest is None:
    return 0
  return int(tf.train.load_checkpoint(latest).get_tensor('step/.ATTRIBUTES/VARIABLE_VALUE'))


def _wait_for(process, pattern, timeout=120):
  """Reads stderr lines until one matches; returns the match."""
  deadline = time.time() + timeout
  while time.time() < deadline:
    line = process.stderr.readline()
    if not line:
      break
    match = re.search(pattern, line)
    if match:
      return match
  raise AssertionError(f'{pattern!r} not seen')


@pytest.mark.slow
@pytest.mark.parametrize('signal_number', [signal.SIGTERM, signal.SIGINT])
def test_signal_saves_a_checkpoint_and_exits_cleanly(tfrecord_dir, tmp_path, signal_number):
  process = subprocess.Popen(_flags(tfrecord_dir, tmp_path, '--train_steps=100000',
                                    '--checkpoint_every=100000'),
                             stderr=subprocess.PIPE, text=True)
  _wait_for(process, r'step 3/')
  process.send_signal(signal_number)
  _, stderr = process.communicate(timeout=120)
  assert process.returncode == 128 + signal_number
  match = re.search(rf'stopped by {signal.Signals(signal_number).name} at step (\d+); saved '
                    r'(\S+ckpt-\d+)', stderr)
  assert match, stderr[-2000:]
  assert _checkpoint_step(tmp_path) == int(match.group(1)) >= 3
  assert 'Traceback' not in stderr


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_at_most_one_interval(tfrecord_dir, tmp_path):
  interval = 3
  flags = _flags(tfrecord_dir, tmp_path, '--train_steps=100000',
                 f'--checkpoint_every={interval}', '--keep_checkpoints=2')
  rng = random.Random(0)
  most_lost = 0
  for _ in range(4):
    process = subprocess.Popen(flags, stderr=subprocess.PIPE, text=True)
    resumed = _checkpoint_step(tmp_path)
    first_logged = int(_wait_for(process, r'step (\d+)/').group(1))
    # Somewhere in the next few steps: often during a checkpoint write.
    time.sleep(rng.uniform(0.0, 1.5))
    process.kill()
    remaining_log = process.stderr.read()
    process.wait()
    logged = [int(step) for step in re.findall(r'step (\d+)/', remaining_log)]
    reached = max([first_logged] + logged)
    after = _checkpoint_step(tmp_path)
    assert after >= resumed  # never backwards
    assert after >= reached - interval  # at most one interval of what was reached is lost
    most_lost = max(most_lost, reached - after)
  print(f'4 kills, at most {most_lost} steps lost (checkpoint interval {interval})')
  assert after > 0
  total = after + 2 * interval
  final = subprocess.run(flags + [f'--train_steps={total}'], capture_output=True, text=True,
                         timeout=300)
  assert final.returncode == 0, final.stderr[-2000:]
  assert 'Resumed from' in final.stderr
  assert _checkpoint_step(tmp_path) == total
  weights = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(tmp_path)))
  assert all(np.all(np.isfinite(weights.get_tensor(name)))
             for name in weights.get_variable_to_shape_map() if 'model' in name)


@pytest.mark.slow
def test_non_finite_loss_stops_without_saving(tfrecord_dir, tmp_path):
  result = subprocess.run(
      _flags(tfrecord_dir, tmp_path, '--train_steps=50', '--checkpoint_every=2',
             '--learning_rate=1e30'), capture_output=True, text=True, timeout=300)
  assert result.returncode == 1
  last_line = result.stderr.strip().splitlines()[-1]
  match = re.match(r'train\.py: error: loss became (nan|inf) between steps (\d+) and (\d+); '
                   r'last good checkpoint: (\S+)', last_line)
  assert match, last_line
  saved_step = _checkpoint_step(tmp_path)
  assert saved_step <= int(match.group(2))
  if saved_step:
    weights = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(tmp_path)))
    assert all(np.all(np.isfinite(weights.get_tensor(name)))
               for name in weights.get_variable_to_shape_map() if 'model' in name)


@pytest.mark.slow
def test_deterministic_runs_repeat_losses_and_weights(tfrecord_dir, tmp_path):
  runs = []
  for name in ('a', 'b'):
    result = subprocess.run(
        _flags(tfrecord_dir, tmp_path / name, '--train_steps=4', '--checkpoint_every=4',
               '--deterministic', '--seed=3'), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    losses = re.findall(r'loss (\S+)', result.stderr)
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(tmp_path / name)))
    weights = {key: reader.get_tensor(key) for key in reader.get_variable_to_shape_map()
               if key.startswith('model')}
    runs.append((losses, weights))
  assert len(runs[0][0]) == 4 and runs[0][0] == runs[1][0]
  for key, value in runs[0][1].items():
    np.testing.assert_array_equal(value, runs[1][1][key])
