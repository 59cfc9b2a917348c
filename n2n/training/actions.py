"""What the controller runs between training calls: each a small object with one job.

See n2n/training/controller.py for the interface.
"""

import time

from absl import logging
import numpy as np
import tensorflow as tf

from n2n.evaluation import scoring
from n2n.training import controller
from n2n.training import preemption


class NonFiniteLossError(FloatingPointError):
  """The training loss became NaN or infinite."""


class EveryBoundary:
  """Base for actions that look at every loop result and never ask for a stop."""

  def next_boundary(self, unused_step):
    return None

  def is_due(self, unused_step, unused_final):
    return True


class Periodic:
  """Base for actions due every `every` steps and at the run's last step."""

  def __init__(self, every, train_steps):
    self.every = every
    self.train_steps = train_steps

  def next_boundary(self, step):
    return min((step // self.every + 1) * self.every, self.train_steps)

  def is_due(self, step, final):
    return final or step % self.every == 0


class CheckFiniteLoss(EveryBoundary):
  """Stops training when the loss is NaN or inf, before anything can save it."""

  def __init__(self, last_checkpoint_fn):
    self._last_checkpoint_fn = last_checkpoint_fn

  def run(self, result):
    if not np.isfinite(result.loss):
      raise NonFiniteLossError(
          f'loss became {result.loss} between steps {result.step - result.num_steps} and '
          f'{result.step}; last good checkpoint: {self._last_checkpoint_fn() or "none"}')


class SyncPreemption(EveryBoundary):
  """Multi-worker/TPU: every worker agrees on this step, saves together, and
  exits if one of them was preempted (TensorFlow's PreemptionCheckpointHandler)."""

  def __init__(self, handler):
    self._handler = handler

  def run(self, result):
    self._handler.save_checkpoint_if_preempted(checkpoint_number=result.step)


class LogProgress(Periodic):
  """Console line and training scalars (loss, gradient norm, clipped steps,
  learning rate, images/s, extras)."""

  def __init__(self, every, train_steps, batch_size, writer, learning_rate_fn,
               extra_scalars_fn=None):
    """
    Args:
      every, train_steps: see Periodic.
      batch_size: global batch, for images/s.
      writer: tf.summary writer (a no-op writer off the chief).
      learning_rate_fn: fn() -> the current learning rate.
      extra_scalars_fn: fn(step) -> {name: value} of further scalars, or None.
    """
    super().__init__(every, train_steps)
    self._batch_size = batch_size
    self._writer = writer
    self._learning_rate_fn = learning_rate_fn
    self._extra_scalars_fn = extra_scalars_fn or (lambda step: {})
    self._reset()

  def _reset(self):
    self._loss_sum = self._norm_sum = self._steps = self._norm_steps = self._seconds = 0.0
    self._max_norm_ratio = float('nan')
    self._clipped_steps = self._skipped_steps = 0

  def is_due(self, step, final):
    # Every result is accumulated; the line is written only at the period.
    return True

  def run(self, result):
    stats = result.stats
    self._loss_sum += stats.loss * result.num_steps
    norm_steps = result.num_steps - stats.skipped_steps
    if norm_steps:
      self._norm_sum += stats.mean_gradient_norm * norm_steps
      self._norm_steps += norm_steps
    self._steps += result.num_steps
    self._seconds += result.seconds
    self._clipped_steps += stats.clipped_steps
    self._skipped_steps += stats.skipped_steps
    self._max_norm_ratio = np.fmax(self._max_norm_ratio, stats.max_norm_ratio)
    if not super().is_due(result.step, result.final):
      return
    images_per_second = self._steps * self._batch_size / self._seconds
    mean_loss = self._loss_sum / self._steps
    mean_norm = self._norm_sum / self._norm_steps if self._norm_steps else float('nan')
    learning_rate = float(self._learning_rate_fn())
    eta_seconds = (self.train_steps - result.step) * self._seconds / self._steps
    clipped = (f'  clipped {self._clipped_steps} step(s), largest gradient '
               f'{self._max_norm_ratio:.3g}x the running average' if self._clipped_steps else '')
    skipped = (f'  skipped {self._skipped_steps} step(s) with non-finite gradients'
               if self._skipped_steps else '')
    logging.info('step %d/%d  loss %.6f  gradient norm %.3g  lr %.2e  %.1f images/s  ETA %s%s%s',
                 result.step, self.train_steps, mean_loss, mean_norm, learning_rate,
                 images_per_second, time.strftime('%H:%M:%S', time.gmtime(eta_seconds)), clipped,
                 skipped)
    with self._writer.as_default(step=result.step):
      tf.summary.scalar('loss', mean_loss)
      tf.summary.scalar('gradient_norm', mean_norm)
      tf.summary.scalar('clipped_steps', self._clipped_steps)
      tf.summary.scalar('skipped_steps', self._skipped_steps)
      tf.summary.scalar('learning_rate', learning_rate)
      tf.summary.scalar('images_per_second', images_per_second)
      for name, value in self._extra_scalars_fn(result.step).items():
        tf.summary.scalar(name, value)
    self._reset()

  def end(self, unused_step):
    self._writer.flush()


class SaveCheckpoint(Periodic):
  """Saves every `every` steps and at the end; remembers the last step saved."""

  def __init__(self, every, train_steps, save_fn):
    """save_fn: fn(step) -> path, writes a checkpoint numbered step."""
    super().__init__(every, train_steps)
    self._save_fn = save_fn
    self.last_saved_step = None

  def save(self, step):
    path = self._save_fn(step)
    self.last_saved_step = step
    return path

  def save_unless_saved(self, step):
    """Saves step unless it is the last step saved (a stop keeps its last step)."""
    if self.last_saved_step != step:
      self.save(step)

  def run(self, result):
    self.save(result.step)


class StopOnSignal(EveryBoundary):
  """After SIGTERM/SIGINT: make sure this step is saved, then stop the run."""

  def __init__(self, stop_request, saver, latest_checkpoint_fn):
    """
    Args:
      stop_request: preemption.StopRequest (its signal_number is polled).
      saver: the run's SaveCheckpoint action.
      latest_checkpoint_fn: fn() -> path of the newest checkpoint.
    """
    self._stop_request = stop_request
    self._saver = saver
    self._latest_checkpoint_fn = latest_checkpoint_fn

  def run(self, result):
    if self._stop_request.signal_number is None:
      return
    self._saver.save_unless_saved(result.step)
    raise preemption.TrainingInterrupted(self._stop_request.signal_number, result.step,
                                         self._latest_checkpoint_fn())


class StopWhenAsked(EveryBoundary):
  """After `stop` is set (from another thread): make sure this step is saved,
  then end the run (controller.StopTraining); training again resumes there."""

  def __init__(self, stop, saver):
    """
    Args:
      stop: a threading.Event, or any object whose is_set() says to stop.
      saver: the run's SaveCheckpoint action.
    """
    self._stop = stop
    self._saver = saver

  def run(self, result):
    if not self._stop.is_set():
      return
    self._saver.save_unless_saved(result.step)
    logging.info('Stopped as asked at step %d (checkpoint saved); training again resumes here.',
                 result.step)
    raise controller.StopTraining()


class ReportProgress(EveryBoundary):
  """Hands progress(step, train_steps, logs) the run's progress: once at the
  start (logs empty), then after every loop, with logs {'loss': the loop's
  mean loss, 'seconds_per_step'}, 'reconstruction_loss' (the loss without the
  method's own term) for a method with one, and, after an evaluation at that
  step, its headline values (scoring.headline_values: 'psnr', 'held_out_loss',
  'noisy_target_mse', as the evaluation has them)."""

  def __init__(self, progress, train_steps, evaluate=None):
    """progress: the callable; evaluate: the run's Evaluate action, or None."""
    self._progress = progress
    self._train_steps = train_steps
    self._evaluate = evaluate

  def begin(self, step):
    self._progress(step, self._train_steps, {})

  def run(self, result):
    logs = {'loss': float(result.loss), 'seconds_per_step': result.seconds / result.num_steps}
    if not np.isnan(result.stats.reconstruction_loss):
      logs['reconstruction_loss'] = float(result.stats.reconstruction_loss)
    if self._evaluate is not None and self._evaluate.step == result.step:
      logs.update(scoring.headline_values(self._evaluate.results))
    self._progress(result.step, self._train_steps, logs)


class Evaluate(Periodic):
  """Evaluates every `every` steps, at the end, and once on a finished run."""

  def __init__(self, every, train_steps, evaluate_fn):
    """evaluate_fn: fn(step) -> evaluation result, which is kept in .results
    (and the step it was of in .step)."""
    super().__init__(every, train_steps)
    self._evaluate_fn = evaluate_fn
    self.results = None
    self.step = None

  def run(self, result):
    self.results, self.step = self._evaluate_fn(result.step), result.step

  def end(self, step):
    # A run stopped early (controller.StopTraining) returns without it.
    if self.results is None and step >= self.train_steps:
      self.results, self.step = self._evaluate_fn(step), step


class Profile:
  """A TensorBoard profiler trace of steps (start, end]."""

  def __init__(self, start, end, logdir):
    self._start, self._end, self._logdir = start, end, logdir

  def next_boundary(self, step):
    return next((boundary for boundary in (self._start, self._end) if boundary > step), None)

  def is_due(self, step, unused_final):
    return step in (self._start, self._end)

  def begin(self, step):
    if step == self._start:
      tf.profiler.experimental.start(self._logdir)

  def run(self, result):
    if result.step == self._start:
      tf.profiler.experimental.start(self._logdir)
    elif result.step == self._end:
      tf.profiler.experimental.stop()
      logging.info('Profiler trace of steps %d-%d written under %s/plugins/profile.',
                   self._start, self._end, self._logdir)
