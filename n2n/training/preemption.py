"""Stopping cleanly on SIGTERM / SIGINT: finish the step, checkpoint, exit."""

import signal
import threading

from absl import logging
import tensorflow as tf


class TrainingInterrupted(Exception):
  """Training stopped on a signal after saving a checkpoint.

  Attributes:
    signal_number: the signal received; entry points exit with 128 + it.
  """

  def __init__(self, signal_number, step, checkpoint):
    super().__init__(f'stopped by {signal.Signals(signal_number).name} at step {step}; '
                     f'saved {checkpoint}')
    self.signal_number = signal_number


class StopRequest:
  """Records SIGTERM/SIGINT instead of dying, while active (a context manager).

  The training loop polls `signal_number` at step boundaries. A second signal
  of the same kind while one is pending falls back to the default action, so
  a stuck run can still be killed with a second Ctrl-C.
  """

  SIGNALS = (signal.SIGTERM, signal.SIGINT)

  def __init__(self, enabled=True):
    self.signal_number = None
    self._enabled = enabled
    self._previous = {}

  def _handle(self, signal_number, unused_frame):
    if self.signal_number is not None:
      signal.signal(signal_number, signal.SIG_DFL)
      signal.raise_signal(signal_number)
    self.signal_number = signal_number
    logging.warning('Received %s: stopping at the next step boundary.',
                    signal.Signals(signal_number).name)

  def __enter__(self):
    # Python only installs handlers from the main thread (tests may train elsewhere).
    if self._enabled and threading.current_thread() is threading.main_thread():
      for signal_number in self.SIGNALS:
        self._previous[signal_number] = signal.signal(signal_number, self._handle)
    return self

  def __exit__(self, *unused_exc_info):
    for signal_number, handler in self._previous.items():
      signal.signal(signal_number, handler)
    self._previous = {}


def cluster_preemption_handler(strategy, manager):
  """TensorFlow's PreemptionCheckpointHandler for multi-worker and TPU runs.

  On a cluster a signal reaches one worker, but every worker must stop at the
  same step and take part in the save; TensorFlow's handler coordinates that
  (and exits the processes). Returns None for single-process strategies,
  which use StopRequest instead.
  """
  multi_worker = isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)
  tpu = isinstance(strategy, tf.distribute.TPUStrategy)
  if not (multi_worker or tpu):
    return None
  return tf.distribute.experimental.PreemptionCheckpointHandler(strategy.cluster_resolver, manager)
