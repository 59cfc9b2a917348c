"""MultiWorkerMirroredStrategy for real: two worker processes on localhost ports."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import REPO_ROOT

HELPER = os.path.join(REPO_ROOT, 'tests', 'helpers', 'multi_worker.py')


def _free_ports(count):
  sockets = [socket.socket() for _ in range(count)]
  for sock in sockets:
    sock.bind(('localhost', 0))
  ports = [sock.getsockname()[1] for sock in sockets]
  for sock in sockets:
    sock.close()
  return ports


def _start_workers(tfrecord_dir, model_dir, train_steps, weights_dir):
  workers = [f'localhost:{port}' for port in _free_ports(2)]
  processes = []
  for index in range(2):
    env = dict(os.environ, TF_CONFIG=json.dumps(
        {'cluster': {'worker': workers}, 'task': {'type': 'worker', 'index': index}}))
    # One CPU device per worker process: the suite's logical split is not inherited.
    processes.append(subprocess.Popen(
        [sys.executable, HELPER, f'{tfrecord_dir}/*.tfrecord', str(model_dir), str(train_steps),
         str(weights_dir / f'worker{index}.npz')],
        env=env, stderr=subprocess.PIPE, text=True))
  return processes


def _checkpoint_steps(model_dir):
  state = tf.train.get_checkpoint_state(str(model_dir))
  return sorted(int(path.rsplit('-', 1)[1]) for path in state.all_model_checkpoint_paths)


@pytest.mark.slow
def test_two_workers_train_identical_weights_and_one_checkpoint_series(tfrecord_dir, tmp_path):
  started = time.time()
  processes = _start_workers(tfrecord_dir, tmp_path / 'run', 6, tmp_path)
  outputs = [process.communicate(timeout=300)[1] for process in processes]
  for process, stderr in zip(processes, outputs):
    assert process.returncode == 0, stderr[-3000:]
  print(f'multi-worker training wall time: {time.time() - started:.1f} s')
  first, second = np.load(tmp_path / 'worker0.npz'), np.load(tmp_path / 'worker1.npz')
  assert len(first.files) == len(second.files) > 0
  for key in first.files:
    np.testing.assert_array_equal(first[key], second[key])
  assert _checkpoint_steps(tmp_path / 'run')[-1] == 6
  assert not tf.io.gfile.glob(str(tmp_path / 'run' / '.workers' / '*' / 'ckpt-*'))
  assert 'replicas in sync: 2' in outputs[0] and 'reached step 6' in outputs[1]


@pytest.mark.slow
def test_a_killed_worker_run_restarts_from_the_checkpoint(tfrecord_dir, tmp_path):
  processes = _start_workers(tfrecord_dir, tmp_path / 'run', 100000, tmp_path)
  # Wait until the chief has saved at least one checkpoint, then kill worker 1.
  deadline = time.time() + 240
  while time.time() < deadline and not tf.train.latest_checkpoint(str(tmp_path / 'run')):
    time.sleep(0.5)
  assert tf.train.latest_checkpoint(str(tmp_path / 'run'))
  processes[1].kill()
  processes[1].wait()
  # The surviving worker cannot go on alone; a cluster manager restarts both.
  processes[0].kill()
  processes[0].wait()
  saved = _checkpoint_steps(tmp_path / 'run')[-1]
  assert saved >= 2
  restarted = _start_workers(tfrecord_dir, tmp_path / 'run', saved + 4, tmp_path)
  outputs = [process.communicate(timeout=300)[1] for process in restarted]
  for process, stderr in zip(restarted, outputs):
    assert process.returncode == 0, stderr[-3000:]
    assert f'at step {saved}' in stderr  # "Resumed from ... at step N"
  assert _checkpoint_steps(tmp_path / 'run')[-1] == saved + 4


@pytest.mark.slow
def test_sigterm_to_one_worker_saves_on_all_and_stops(tfrecord_dir, tmp_path):
  processes = _start_workers(tfrecord_dir, tmp_path / 'run', 100000, tmp_path)
  deadline = time.time() + 240
  while time.time() < deadline and not tf.train.latest_checkpoint(str(tmp_path / 'run')):
    time.sleep(0.5)
  before = _checkpoint_steps(tmp_path / 'run')[-1]
  processes[1].send_signal(signal.SIGTERM)
  outputs = [process.communicate(timeout=240)[1] for process in processes]
  for stderr in outputs:
    assert 'Traceback' not in stderr, stderr[-3000:]
  # TensorFlow's handler saves on every worker at one agreed step, then exits with 42
  # (its "restart me" status for cluster managers).
  assert [process.returncode for process in processes] == [42, 42]
  assert _checkpoint_steps(tmp_path / 'run')[-1] > before
