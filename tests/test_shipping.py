"""bench/shipping.train_in_parts: a shipped model's training, recorded part by part at one
clean commit (issue 63 §2: commit, precision, host, steps and time recorded when trained)."""

import json
import os
import signal
import subprocess
import types

import pytest
import tensorflow as tf

from bench import shipping
from n2n.training import preemption


def _git(repo, *args):
  subprocess.run(['git', '-C', str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path):
  """A clean git checkout with one commit, and its short hash."""
  repo = tmp_path / 'repo'
  repo.mkdir()
  _git(repo, 'init', '-q')
  (repo / 'code.py').write_text('x = 1\n')
  _git(repo, 'add', 'code.py')
  _git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one')
  head = subprocess.run(['git', '-C', str(repo), 'rev-parse', '--short', 'HEAD'], check=True,
                        capture_output=True, text=True).stdout.strip()
  return repo, head


def _run_to(step):
  return lambda: types.SimpleNamespace(step=step)


def test_each_part_is_recorded_with_commit_steps_seconds_and_precision(checkout, tmp_path):
  repo, head = checkout
  model_dir = str(tmp_path / 'run')
  os.makedirs(model_dir)
  record = shipping.train_in_parts(str(repo), model_dir, 'model.json', _run_to(40), 'auto')
  shipping.write_record(model_dir, 'model.json', record)
  # A resumed run at the same commit adds a second part; the first is kept as it was.
  record = shipping.train_in_parts(str(repo), model_dir, 'model.json', _run_to(90), 'float32')
  assert [part['to_step'] for part in record['parts']] == [40, 90]
  assert [part['precision'] for part in record['parts']] == ['auto', 'float32']
  assert {part['commit'] for part in record['parts']} == {head}
  assert all(part['seconds'] >= 0 and part['machine'] and part['date']
             for part in record['parts'])
  assert 'resolved to' in shipping.parts_text(record).split(';')[0]


def test_a_dirty_checkout_or_another_commits_run_is_refused(checkout, tmp_path):
  repo, head = checkout
  model_dir = str(tmp_path / 'run')
  os.makedirs(model_dir)
  trained = []
  (repo / 'code.py').write_text('x = 2\n')
  with pytest.raises(ValueError, match='clean commit'):
    shipping.train_in_parts(str(repo), model_dir, 'model.json',
                            lambda: trained.append(1), 'auto')
  _git(repo, 'checkout', '-q', 'code.py')
  with open(os.path.join(model_dir, 'model.json'), 'w') as record_file:
    json.dump({'parts': [{'commit': 'abc1234', 'to_step': 5}]}, record_file)
  with pytest.raises(ValueError, match=f'trained at abc1234; resume it at that commit, not {head}'):
    shipping.train_in_parts(str(repo), model_dir, 'model.json',
                            lambda: trained.append(1), 'auto')
  assert not trained  # refused before any training


def test_a_part_stopped_by_a_signal_is_recorded_to_its_checkpoint(checkout, tmp_path):
  repo, _ = checkout
  model_dir = str(tmp_path / 'run')
  saved = tf.train.Checkpoint(step=tf.Variable(30, dtype=tf.int64))
  checkpoint = tf.train.CheckpointManager(saved, model_dir, max_to_keep=1).save(
      checkpoint_number=30)

  def stopped():
    raise preemption.TrainingInterrupted(signal.SIGTERM, 31, checkpoint)

  with pytest.raises(preemption.TrainingInterrupted):
    shipping.train_in_parts(str(repo), model_dir, 'model.json', stopped, 'auto')
  # Written before the stop was passed on: the next part resumes with this one on record.
  assert [part['to_step'] for part in shipping.read_record(model_dir, 'model.json')['parts']
          ] == [30]
