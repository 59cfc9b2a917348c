"""bench/shipping.train_in_parts: a shipped model's training, recorded part by part at one
clean commit (issue 63 §2: commit, precision, host, steps and time recorded when trained)."""

import signal
import subprocess
import time

import pytest
import tensorflow as tf

from bench import shipping
from n2n import shipped
from n2n.training import preemption
from tests.conftest import REPO_ROOT


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


def _trainer(model_dir, step, seconds=0.0):
  """A stand-in for n2n.train: waits `seconds`, then leaves a checkpoint at `step` in
  model_dir, as a run trained to there does."""
  def train():
    time.sleep(seconds)
    saved = tf.train.Checkpoint(step=tf.Variable(step, dtype=tf.int64))
    return tf.train.CheckpointManager(saved, model_dir, max_to_keep=1).save(
        checkpoint_number=step)
  return train


SETTINGS = {'train_steps': 90, 'seed': 0}


def test_each_part_is_recorded_with_its_commit_steps_seconds_and_precision(checkout, tmp_path):
  repo, head = checkout
  model_dir = str(tmp_path / 'run')
  shipping.train_in_parts(str(repo), model_dir, 'model.json', _trainer(model_dir, 40, 1.1),
                          'auto', SETTINGS)
  # A resumed run at the same commit adds a second part from where the first stopped.
  shipping.train_in_parts(str(repo), model_dir, 'model.json', _trainer(model_dir, 90),
                          'float32', SETTINGS)
  record = shipping.read_record(model_dir, 'model.json')
  assert [(part['from_step'], part['to_step']) for part in record['parts']] == [(0, 40), (40, 90)]
  assert [part['precision'] for part in record['parts']] == ['auto', 'float32']
  assert record['parts'][1]['resolved_precision'] == 'float32'
  assert record['parts'][0]['resolved_precision'] in ('float32', 'mixed_bfloat16')
  assert {part['commit'] for part in record['parts']} == {head}
  assert record['parts'][0]['seconds'] >= 1
  assert record['train_steps'] == 90 and record['seed'] == 0
  # The README's words name the precision each part resolved to.
  assert (f'resolved to {record["parts"][0]["resolved_precision"]})'
          in shipping.parts_text(record).split(';')[0])
  # A rerun with nothing left to train adds no part.
  shipping.train_in_parts(str(repo), model_dir, 'model.json', lambda: None, 'auto', SETTINGS)
  assert len(shipping.read_record(model_dir, 'model.json')['parts']) == 2


def test_a_dirty_checkout_another_commit_or_other_settings_are_refused(checkout, tmp_path):
  repo, head = checkout
  model_dir = str(tmp_path / 'run')
  trained = []
  (repo / 'code.py').write_text('x = 2\n')
  with pytest.raises(ValueError, match='clean commit'):
    shipping.train_in_parts(str(repo), model_dir, 'model.json', lambda: trained.append(1),
                            'auto', SETTINGS)
  _git(repo, 'checkout', '-q', 'code.py')
  shipping.train_in_parts(str(repo), model_dir, 'model.json', _trainer(model_dir, 5), 'auto',
                          SETTINGS)
  with pytest.raises(ValueError, match='with other settings'):
    shipping.train_in_parts(str(repo), model_dir, 'model.json', lambda: trained.append(1),
                            'auto', dict(SETTINGS, seed=1))
  record = shipping.read_record(model_dir, 'model.json')
  record['parts'][0]['commit'] = 'abc1234'
  shipping.write_record(model_dir, 'model.json', record)
  with pytest.raises(ValueError, match=f'trained at abc1234; resume it at that commit, not {head}'):
    shipping.train_in_parts(str(repo), model_dir, 'model.json', lambda: trained.append(1),
                            'auto', SETTINGS)
  assert not trained  # refused before any training


def test_a_checkpoint_no_part_records_is_refused(checkout, tmp_path):
  # A part that died unrecorded (SIGKILL, out of memory): its commit and time are unknown.
  repo, _ = checkout
  model_dir = str(tmp_path / 'run')
  _trainer(model_dir, 20)()
  with pytest.raises(ValueError, match='checkpoint is at step 20, its record model.json at 0'):
    shipping.train_in_parts(str(repo), model_dir, 'model.json', _trainer(model_dir, 90),
                            'auto', SETTINGS)


def test_a_part_stopped_by_a_signal_is_recorded_to_its_checkpoint(checkout, tmp_path):
  repo, _ = checkout
  model_dir = str(tmp_path / 'run')

  def stopped():
    checkpoint = _trainer(model_dir, 30)()
    raise preemption.TrainingInterrupted(signal.SIGTERM, 30, checkpoint)

  with pytest.raises(preemption.TrainingInterrupted):
    shipping.train_in_parts(str(repo), model_dir, 'model.json', stopped, 'auto', SETTINGS)
  # Written before the stop was passed on, with the settings: the next part resumes it.
  record = shipping.read_record(model_dir, 'model.json')
  assert [(part['from_step'], part['to_step']) for part in record['parts']] == [(0, 30)]
  assert record['train_steps'] == 90
  shipping.train_in_parts(str(repo), model_dir, 'model.json', _trainer(model_dir, 90), 'auto',
                          SETTINGS)
  assert len(shipping.read_record(model_dir, 'model.json')['parts']) == 2


def test_a_training_script_s_refusal_or_stop_ends_in_one_line_and_its_exit_status(capsys):
  def refused(model_dir):
    raise ValueError(f'{model_dir} was trained at abc1234')

  with pytest.raises(SystemExit) as ended:
    shipping.train_from_main(refused, 'runs/x')
  assert ended.value.code == 'error: runs/x was trained at abc1234'  # printed, status 1

  def stopped(unused_model_dir):
    raise preemption.TrainingInterrupted(signal.SIGTERM, 30, 'runs/x/ckpt-30')

  with pytest.raises(SystemExit) as ended:
    shipping.train_from_main(stopped, 'runs/x')
  assert ended.value.code == 128 + signal.SIGTERM  # as train.py exits
  assert capsys.readouterr().err.strip().splitlines() == [
      'stopped by SIGTERM at step 30; saved runs/x/ckpt-30; resume with the same command '
      'at the same commit']


def _scored(name, commit, **weights):
  return {'commit': commit, 'sets': {'sidd24': {'images': 24, 'outputs': {
      'noisy': {'mean_psnr_db': 23.0},
      f'model:{name}': {'model': name, 'tta': False, 'mean_psnr_db': 30.0, **weights}}}}}


def test_a_shipped_model_is_credited_only_with_scores_of_its_own_weights(monkeypatch):
  name = shipped.CAMERA_SRGB
  weights = shipping.trained_at(name)
  before = subprocess.run(['git', '-C', REPO_ROOT, 'rev-parse', '--short', f'{weights}~1'],
                          check=True, capture_output=True, text=True).stdout.strip()
  runs = [('a.json', _scored(name, before)),  # before these weights, naming none
          ('b.json', _scored(name, 'HEAD', trained_at='0000000')),  # other weights
          ('c.json', _scored(name, 'HEAD')),  # after them, naming none
          ('d.json', _scored(name, before, trained_at=weights))]  # naming them
  monkeypatch.setattr(shipping.results_real_dev, 'read_results', lambda: runs)
  credited = shipping.measured_lines(name)
  assert [line.rsplit('docs/bench/', 1)[1] for line in credited] == ['c.json)', 'd.json)']
