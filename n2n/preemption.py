"""Stopping cleanly on SIGTERM / SIGINT: finish the step, checkpoint, exit."""

import signal
import threading

from absl import logging


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

  def __init__(self):
    self.signal_number = None
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
    if threading.current_thread() is threading.main_thread():
      for signal_number in self.SIGNALS:
        self._previous[signal_number] = signal.signal(signal_number, self._handle)
    return self

  def __exit__(self, *unused_exc_info):
    for signal_number, handler in self._previous.items():
      signal.signal(signal_number, handler)
    self._previous = {}
