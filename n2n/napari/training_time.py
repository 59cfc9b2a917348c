"""How long a training run takes on this host: before Train is pressed, from
the speed this host recorded in its earlier runs of the same kind, and while
it runs, from its own steps.

A run's kind is its method and its network's dimensions ('neighbor2neighbor
2D'); the speed of a kind is seconds per unit of work, a step's work being
batch size x crop pixels (x crop depth for 3D) x (network width / 48)^2: the
convolutions cost about the square of the width (--network_width's help) and
grow with the pixels. A kind's start-up (TensorFlow's import, the network's
build and tracing) is recorded beside it. The record is one JSON file per
user (XDG's cache: ~/.cache/n2n/training_speed.json), by host name, so a home
folder shared by several machines keeps each one's speed apart.
"""

import json
import logging
import os
import socket
import statistics
import time

from n2n.config import network

_LOG = logging.getLogger(__name__)
# The run's length the widget's Steps starts at where this host's speed is recorded, in
# seconds of training, and the steps it is rounded down to and kept between.
BUDGET_SECONDS = 15 * 60
STEPS_ROUNDING, FEWEST_STEPS, MOST_STEPS = 100, 100, 20_000


def work_units(batch_size, crop_size, network_width, crop_depth=1):
  """A training step's work in the units the record divides by (the module says why)."""
  return batch_size * crop_size**2 * crop_depth * (network_width / network.PAPER_NETWORK_WIDTH)**2


def describe(seconds):
  """seconds as a person reads a run's length: '40 s', '12 min', '1 h 05 min'."""
  if seconds < 60:
    return f'{max(1, round(seconds))} s'
  minutes = round(seconds / 60)
  if minutes < 60:
    return f'{minutes} min'
  return f'{minutes // 60} h {minutes % 60:02d} min'


def record_path():
  """The record's file: $XDG_CACHE_HOME (else ~/.cache) /n2n/training_speed.json."""
  cache = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
  return os.path.join(cache, 'n2n', 'training_speed.json')


def _read_all():
  try:
    with open(record_path()) as file:
      return json.load(file)
  except (OSError, ValueError):
    return {}


def recorded(kind):
  """This host's record of kind: {'seconds_per_unit', 'startup_seconds'}, or None."""
  return _read_all().get(socket.gethostname(), {}).get(kind)


def record(kind, seconds_per_unit, startup_seconds):
  """Keeps kind's speed for this host (the latest run's); a record that cannot be written
  (a read-only home) is only logged: the estimate is a help, not the run."""
  everything = _read_all()
  everything.setdefault(socket.gethostname(), {})[kind] = {
      'seconds_per_unit': seconds_per_unit, 'startup_seconds': startup_seconds}
  path = record_path()
  try:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '.tmp', 'w') as file:
      json.dump(everything, file, indent=1, sort_keys=True)
    os.replace(path + '.tmp', path)
  except OSError as error:
    _LOG.warning('could not record the training speed in %s: %s', path, error)


def estimate(kind, steps, units):
  """Seconds a run of kind takes for steps steps of units work each, start-up included,
  from this host's record; None where there is none."""
  speed = recorded(kind)
  if speed is None:
    return None
  return speed['startup_seconds'] + steps * units * speed['seconds_per_unit']


def fitting_steps(kind, units):
  """The steps of units work that fit BUDGET_SECONDS on this host (rounded down to
  STEPS_ROUNDING, between FEWEST_STEPS and MOST_STEPS); None without a record."""
  speed = recorded(kind)
  if speed is None:
    return None
  steps = BUDGET_SECONDS / (units * speed['seconds_per_unit'])
  return int(min(MOST_STEPS, max(FEWEST_STEPS, steps // STEPS_ROUNDING * STEPS_ROUNDING)))


class RunClock:
  """A run's speed from its progress reports (n2n.train's): seconds per step from
  its loops after the first (the first one traces the network), and its start-up.

  Attributes:
    seconds_per_step: the median of the last loops' seconds per step, None before
      the second loop.
  """
  # The loops the speed is the median of: recent enough to follow a host that gets busier.
  LOOPS = 5

  def __init__(self):
    self._started = time.monotonic()
    self._first = None  # (seconds after start, steps) of the first loop's report
    self._start_step = None
    self._per_step = []

  def report(self, step, logs):
    """One progress report: at the start (logs empty), then after each loop."""
    if not logs:
      self._start_step = step
    elif self._first is None:
      self._first = (time.monotonic() - self._started, step - (self._start_step or 0))
    else:
      self._per_step.append(logs['seconds_per_step'])

  @property
  def seconds_per_step(self):
    return statistics.median(self._per_step[-self.LOOPS:]) if self._per_step else None

  def remaining(self, step, total):
    """Seconds left to step total, None before the speed is known."""
    return None if self.seconds_per_step is None else (total - step) * self.seconds_per_step

  def startup_seconds(self):
    """Seconds from the call to the first loop's start: the first loop's time less its
    steps at the measured speed."""
    seconds, steps = self._first
    return max(0.0, seconds - steps * self.seconds_per_step)

  def save(self, kind, units):
    """Records kind's speed (record) where the run measured one."""
    if self.seconds_per_step is not None:
      record(kind, self.seconds_per_step / units, self.startup_seconds())
