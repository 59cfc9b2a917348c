"""make_noisy_scenes.py's check of a simulated set against its settings: it
reads "as set" for what the settings made and not for other settings."""

import numpy as np

from n2n.data import microscope_noise
from n2n.data import simulated_scenes
from n2n.diagnosis import noise_statistics
from n2n.diagnosis import simulation_check


def _ramp(height=128, width=256):
  return np.tile(np.linspace(0.05, 0.95, width), (height, 1))


def test_the_sensor_pipelines_level_and_independence_read_as_set():
  rng = np.random.default_rng(0)
  clean = _ramp()[..., None]
  pairs = [[simulated_scenes.sensor_noise(clean, 0.004, 0.0002, rng) for _ in range(2)]
           for _ in range(3)]
  profile = noise_statistics.measure_pairs(pairs)
  assert simulation_check.check_sensor(profile, 0.004, 0.0002)[0]
  ok, line = simulation_check.check_sensor(profile, 0.008, 0.0002)
  assert not ok and line.endswith('(NOT as set)')


def test_the_microscope_pipelines_level_and_row_correlation_read_as_set():
  """Bright counts (30,000 photons) and strong rows, where an unweighted mean of
  the signal bins misplaced the expected correlation."""
  rng = np.random.default_rng(1)
  settings = microscope_noise.ScmosSettings(photons=30000, read_sigma=2, row_sigma=60)
  clean = _ramp() ** 2  # most pixels dark: the mean signal is no bin's centre
  pairs = [[microscope_noise.capture(clean, settings, rng)[..., None] / 65535.0
            for _ in range(2)] for _ in range(3)]
  profile = noise_statistics.measure_pairs(pairs)
  ok, line = simulation_check.check_microscope(profile, settings)
  assert ok, line
  other = microscope_noise.ScmosSettings(photons=30000, read_sigma=2, row_sigma=20)
  assert not simulation_check.check_microscope(profile, other)[0]
