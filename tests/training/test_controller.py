"""The controller and each action on their own, with a fake trainer: no TensorFlow training."""

import math
import signal
import threading

import pytest
import tensorflow as tf

from n2n.evaluation import scoring
from n2n.training import actions
from n2n.training import controller
from n2n.training import preemption


class Recorder:
  """An action that records the boundaries it ran at."""

  def __init__(self, every, train_steps, log):
    self._periodic = actions.Periodic(every, train_steps)
    self.name = f'every{every}'
    self.log = log

  def next_boundary(self, step):
    return self._periodic.next_boundary(step)

  def is_due(self, step, final):
    return self._periodic.is_due(step, final)

  def run(self, result):
    self.log.append((self.name, result.step))


def _fake_train(losses, calls):
  def train(num_steps):
    calls.append(num_steps)
    return controller.TrainStats(losses.pop(0) if losses else 0.5)
  return train


def test_loop_stops_at_every_boundary_and_runs_due_actions_in_order():
  log, calls = [], []
  run = controller.Controller(_fake_train([], calls), 0, 10, 4,
                              [Recorder(3, 10, log), Recorder(5, 10, log)])
  assert run.next_boundary(0) == 3 and run.next_boundary(3) == 5 and run.next_boundary(9) == 10
  assert run.run() == 10
  assert calls == [3, 2, 1, 3, 1]  # boundaries 3, 5, 6, 9, 10
  assert log == [('every3', 3), ('every5', 5), ('every3', 6), ('every3', 9),
                 ('every3', 10), ('every5', 10)]


def test_resumed_controller_starts_at_its_step_and_a_finished_run_trains_nothing():
  log, calls = [], []
  assert controller.Controller(_fake_train([], calls), 7, 10, 10, [Recorder(5, 10, log)]).run() == 10
  assert calls == [3] and log == [('every5', 10)]
  calls.clear()
  assert controller.Controller(_fake_train([], calls), 10, 10, 10, []).run() == 10
  assert not calls


class FakeCluster:
  def __init__(self):
    self.saved_at = []

  def save_checkpoint_if_preempted(self, checkpoint_number):
    self.saved_at.append(checkpoint_number)


def test_a_nan_loss_stops_before_the_preemption_save_and_the_periodic_save():
  saved, cluster = [], FakeCluster()
  saver = actions.SaveCheckpoint(2, 10, lambda step: saved.append(step) or f'ckpt-{step}')
  # The same order train_lib uses: the finite-loss check first.
  run = controller.Controller(_fake_train([0.4, math.nan], []), 0, 10, 2, [
      actions.CheckFiniteLoss(lambda: 'ckpt-2'), actions.SyncPreemption(cluster), saver])
  with pytest.raises(actions.NonFiniteLossError,
                     match='loss became nan between steps 2 and 4; last good checkpoint: ckpt-2'):
    run.run()
  assert saved == [2] and cluster.saved_at == [2]


def test_log_progress_averages_loss_over_its_period_and_writes_scalars(tmp_path):
  writer = tf.summary.create_file_writer(str(tmp_path))
  log = actions.LogProgress(4, 8, batch_size=2, writer=writer, learning_rate_fn=lambda: 1e-3,
                            extra_scalars_fn=lambda step: {'gamma': step / 8})
  controller.Controller(_fake_train([1.0, 3.0, 0.5, 0.5], []), 0, 8, 2, [log]).run()
  values = {}
  for path in tf.io.gfile.glob(str(tmp_path / 'events.out.tfevents.*')):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        values[(event.step, value.tag)] = float(tf.make_ndarray(value.tensor))
  assert values[(4, 'loss')] == 2.0 and values[(8, 'loss')] == 0.5
  assert values[(8, 'gamma')] == 1.0 and values[(4, 'learning_rate')] == pytest.approx(1e-3)
  assert (2, 'loss') not in values


def test_stop_on_signal_saves_the_current_step_once_and_raises():
  saved = []
  saver = actions.SaveCheckpoint(4, 100, lambda step: saved.append(step) or f'ckpt-{step}')
  request = preemption.StopRequest(enabled=False)
  stop = actions.StopOnSignal(request, saver, lambda: f'ckpt-{saved[-1]}')
  run = controller.Controller(_fake_train([], []), 0, 100, 2, [saver, stop])
  request.signal_number = signal.SIGTERM
  with pytest.raises(preemption.TrainingInterrupted, match='SIGTERM at step 2; saved ckpt-2'):
    run.run()
  assert saved == [2]
  # At a step the saver just saved, no second save.
  request.signal_number = signal.SIGINT
  with pytest.raises(preemption.TrainingInterrupted, match='SIGINT at step 4; saved ckpt-4'):
    controller.Controller(_fake_train([], []), 2, 100, 2, [saver, stop]).run()
  assert saved == [2, 4]


def test_evaluate_runs_periodically_at_the_end_and_once_on_a_finished_run():
  steps = []
  evaluate = actions.Evaluate(4, 6, lambda step: steps.append(step) or step)
  controller.Controller(_fake_train([], []), 0, 6, 10, [evaluate]).run()
  assert steps == [4, 6] and evaluate.results == 6
  finished = actions.Evaluate(4, 6, lambda step: steps.append(step) or step)
  controller.Controller(_fake_train([], []), 6, 6, 10, [finished]).run()
  assert steps == [4, 6, 6]


def test_profile_asks_for_its_two_boundaries():
  profile = actions.Profile(3, 7, '/unused')
  assert profile.next_boundary(0) == 3 and profile.next_boundary(3) == 7
  assert profile.next_boundary(7) is None
  assert profile.is_due(3, False) and profile.is_due(7, False) and not profile.is_due(5, True)


def test_a_stop_asked_for_saves_the_step_once_and_ends_the_run_without_a_final_evaluation():
  saved, evaluated = [], []
  stop = threading.Event()
  saver = actions.SaveCheckpoint(4, 100, lambda step: saved.append(step) or f'ckpt-{step}')
  evaluate = actions.Evaluate(50, 100, lambda step: evaluated.append(step) or step)
  asked = actions.StopWhenAsked(stop, saver)

  def train(num_steps):
    if len(saved) == 1:  # set from "another thread" while steps 4-6 run
      stop.set()
    return controller.TrainStats(0.5)

  run = controller.Controller(train, 0, 100, 2, [saver, evaluate, asked])
  assert run.run() == 6
  assert saved == [4, 6] and evaluated == [] and evaluate.results is None
  # Set at a step the saver has just saved: no second save of it.
  saved.clear()
  assert controller.Controller(_fake_train([], []), 6, 100, 2, [saver, asked]).run() == 8
  assert saved == [8]


def test_progress_is_reported_at_the_start_after_every_loop_and_with_evaluations():
  reports = []
  evaluate = actions.Evaluate(4, 6, lambda step: [scoring.LevelScores(
      'none', 0.0, (scoring.ImageScore('a', None, None, held_out_loss=step / 100),))])
  progress = actions.ReportProgress(lambda *report: reports.append(report), 6, evaluate)
  controller.Controller(_fake_train([0.25, 0.5, 0.75], []), 2, 6, 2, [evaluate, progress]).run()
  assert [(step, total) for step, total, _ in reports] == [(2, 6), (4, 6), (6, 6)]
  assert reports[0][2] == {}
  assert reports[1][2]['loss'] == 0.25 and reports[1][2]['held_out_loss'] == 0.04
  assert reports[2][2]['loss'] == 0.5 and reports[2][2]['held_out_loss'] == 0.06
  assert reports[1][2]['seconds_per_step'] >= 0
