import pytest

from n2n.training import schedules


def test_ramp_down_is_flat_then_cosine_squared_to_zero():
  schedule = schedules.RampDownSchedule(3e-4, 1000, 0.3)
  assert float(schedule(0)) == pytest.approx(3e-4)
  assert float(schedule(700)) == pytest.approx(3e-4)
  assert float(schedule(850)) == pytest.approx(3e-4 * 0.25)  # ((1 + cos(pi/2)) / 2)^2
  assert float(schedule(1000)) == pytest.approx(0.0, abs=1e-12)
  assert float(schedule(775)) < 3e-4


def test_no_ramp_down():
  assert float(schedules.RampDownSchedule(1e-3, 100, 0.0)(99)) == pytest.approx(1e-3)
