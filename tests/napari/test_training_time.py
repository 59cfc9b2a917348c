"""The Train widget's time estimates (n2n/napari/training_time.py): a step's
work, this host's record, the steps that fit the budget, a run's own clock.
No viewer: no X server needed."""

import json
import socket

import pytest

from n2n.napari import training_time


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
  monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
  return tmp_path


def test_a_step_s_work_grows_with_its_pixels_and_the_square_of_the_width():
  base = training_time.work_units(4, 128, 48)
  assert base == 4 * 128 * 128
  assert training_time.work_units(4, 128, 96) == 4 * base
  assert training_time.work_units(8, 256, 48, crop_depth=16) == 2 * 4 * 16 * base


def test_lengths_read_as_a_person_reads_them():
  assert [training_time.describe(seconds) for seconds in (0.2, 40, 719, 3900, 21600)] == [
      '1 s', '40 s', '12 min', '1 h 05 min', '6 h 00 min']


def test_the_record_is_this_host_s_and_sets_the_estimate_and_the_steps_that_fit(cache):
  kind = 'neighbor2neighbor 2D'
  assert training_time.recorded(kind) is None
  assert training_time.estimate(kind, 1000, 1.0) is None
  assert training_time.fitting_steps(kind, 1.0) is None
  # Another host's speed (a home folder shared by a cluster) is not this one's.
  path = cache / 'n2n' / 'training_speed.json'
  path.parent.mkdir()
  path.write_text(json.dumps({'elsewhere': {kind: {'seconds_per_unit': 1.0,
                                                    'startup_seconds': 1.0}}}))
  assert training_time.recorded(kind) is None
  training_time.record(kind, seconds_per_unit=1e-6, startup_seconds=20.0)
  saved = json.loads(path.read_text())
  assert set(saved) == {'elsewhere', socket.gethostname()}
  units = training_time.work_units(4, 128, 48)  # 65536: 0.0655 s a step
  assert training_time.estimate(kind, 1000, units) == pytest.approx(20.0 + 1000 * 0.065536)
  # 900 s / 0.0655 s = 13732 steps, rounded down to hundreds; a run 100x slower gets the
  # fewest steps, one 100x faster the most.
  assert training_time.fitting_steps(kind, units) == 13700
  assert training_time.fitting_steps(kind, 100 * units) == training_time.FEWEST_STEPS
  assert training_time.fitting_steps(kind, units / 100) == training_time.MOST_STEPS


def test_a_run_s_clock_leaves_its_first_loop_out_of_its_speed():
  clock = training_time.RunClock()
  clock.report(100, {})  # resumed at step 100
  clock.report(110, {'loss': 1.0, 'seconds_per_step': 5.0})  # the first loop traces
  assert clock.seconds_per_step is None and clock.remaining(110, 400) is None
  for seconds in (0.2, 0.4, 0.3):
    clock.report(120, {'loss': 1.0, 'seconds_per_step': seconds})
  assert clock.seconds_per_step == 0.3
  assert clock.remaining(140, 400) == pytest.approx(78.0)
