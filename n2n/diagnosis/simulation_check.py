"""What a simulated set's measured noise should be, from the simulator's own
settings, where that has a closed form (datasets/make_noisy_scenes.py prints
the comparison)."""

import numpy as np

from n2n.data import microscope_noise

# How far a measurement may stray from the settings and still read "as set".
SENSOR_SIGMA_TOLERANCE = 0.1
INDEPENDENT_BELOW = 0.05
ROW_CORRELATION_TOLERANCE = 0.05
SHOT_TOLERANCE = 0.15


def check_sensor(profile, gain, read_variance):
  """(ok, line): the sensor pipeline's sigma sqrt(gain x + read_variance) at
  the signal bins away from 0 and 1 (clipping narrows the noise there), and
  independent pixels."""
  middle = (profile.signal > 0.15) & (profile.signal < 0.85)
  if not np.any(middle):
    return False, 'settings: no signal between 0.15 and 0.85 to compare the level at'
  expected = np.sqrt(gain * profile.signal[middle] + read_variance)
  error = float(np.nanmax(np.abs(profile.sigma[middle] / expected[:, None] - 1)))
  ok = profile.correlation_lag1 < INDEPENDENT_BELOW and error < SENSOR_SIGMA_TOLERANCE
  return ok, (f'settings: sigma sqrt({gain:g} x signal + {read_variance:g}), independent pixels; '
              f'measured sigma within {error:.1%} of it at signals 0.15-0.85, lag-1 correlation '
              f'{profile.correlation_lag1:.3f} ({"as set" if ok else "NOT as set"})')


def check_microscope(profile, settings, white_level=microscope_noise.MAX_COUNT):
  """(ok, line): the microscope pipeline's variance, counts above the offset
  plus read, row and column variances (in the files' 0-1 units: shot
  1 / white_level), and its correlation along rows at the mean signal."""
  mean_counts = float(np.mean(profile.mean_signal)) * white_level
  signal = max(mean_counts - settings.offset, 0.0) / settings.photons
  expected = microscope_noise.expected_correlation_along_rows(settings, signal)
  measured = float(profile.correlation_x[-1])
  shot = float(np.mean(profile.fit[:, 0]))
  expected_shot = 1.0 / white_level
  ok = (abs(measured - expected) < ROW_CORRELATION_TOLERANCE
        and abs(shot / expected_shot - 1) < SHOT_TOLERANCE)
  return ok, (f'settings: variance 1/{white_level:g} per unit of signal (Poisson counts), and row '
              f'offsets of {settings.row_sigma:g} counts correlating a row by {expected:.3f} at '
              f'the mean signal ({mean_counts:.0f} counts); measured 1/{1 / max(shot, 1e-30):.0f} '
              f'and {measured:.3f} at lag 4 along x ({"as set" if ok else "NOT as set"})')
