"""The patch plane fit's effect on noise, undone exactly (n2n/diagnosis/plane_fit.py);
the reference correlation is worked out by hand."""

import numpy as np
import pytest

from n2n.diagnosis import noise_statistics
from n2n.diagnosis import plane_fit


def test_the_plane_fit_is_undone_for_noise_correlated_over_several_pixels():
  # White noise summed over 3 neighbours along x: correlation 2/3 at lag 1 and
  # 1/3 at lag 2 along x, 0 elsewhere (worked out by hand). A 16x16 patch's
  # plane fit takes more of it than of white noise, most at the far lags.
  rng = np.random.default_rng(6)
  white = rng.standard_normal((40 * 16, 40 * 16 + 2, 1))
  noise = (white[:, :-2] + white[:, 1:-1] + white[:, 2:]) / np.sqrt(3)
  patches = noise.reshape(40, 16, 40, 16, 1).transpose(0, 2, 1, 3, 4).reshape(-1, 16, 16, 1)
  products, counts = noise_statistics._autocovariance(plane_fit.residuals(patches))
  measured = products / counts
  corrected = plane_fit.corrected_covariance(measured, 16)
  lag = noise_statistics.MAX_LAG
  along_x = corrected[lag, lag + 1:, 0] / corrected[lag, lag, 0]
  np.testing.assert_allclose(along_x, [2 / 3, 1 / 3, 0, 0], atol=0.01)
  np.testing.assert_allclose(corrected[lag + 1:, lag, 0] / corrected[lag, lag, 0], 0, atol=0.01)
  assert corrected[lag, lag, 0] == pytest.approx(1.0, rel=0.02)
  # What the residuals read before the correction: the plane takes some of the
  # far lags and of the variance.
  assert np.all(measured[lag, lag + 3:, 0] / measured[lag, lag, 0] < -0.015)
  assert measured[lag, lag, 0] < 0.98
