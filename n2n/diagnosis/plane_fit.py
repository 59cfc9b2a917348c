"""A 16x16 patch's plane fit and what it does to noise: the single-image estimate
(n2n/diagnosis/noise_statistics.py) reads noise as each patch minus its least-squares
plane, which takes more of noise correlated over several pixels than of independent
noise. The effect is exact, and undone here. Pure numpy."""

import functools

import numpy as np


def residuals(patches):
  """Each [N, P, P, C] patch minus its least-squares plane a + b*y + c*x."""
  size = patches.shape[1]
  rows, columns = np.meshgrid(np.arange(size, dtype=np.float64),
                              np.arange(size, dtype=np.float64), indexing='ij')
  design = np.stack([np.ones(size * size), rows.ravel(), columns.ravel()], axis=1)
  flat = patches.reshape(patches.shape[0], size * size, -1)
  # The plane's three coefficients, then the plane: design @ pinv(design) applied
  # in two thin products, not as the [P*P, P*P] projector (43x fewer multiply-adds;
  # denoise.py runs this on every file it checks).
  fitted = design @ (np.linalg.pinv(design) @ flat)
  return (flat - fitted).reshape(patches.shape)


@functools.lru_cache(maxsize=4)
def fit_operator(patch, max_lag):
  """[(2L+1)^2, (2L+1)^2] float (L = max_lag): the mean product of two patch x patch
  residuals (after residuals()) at each lag (row, flattened (dy, dx)), per unit of
  the noise's covariance at each lag (column; a lag and its opposite together, as a
  covariance has them), for noise whose covariance vanishes past L. Worked out
  exactly: the residual is Q n, Q = I - the plane's projector, so its covariance is
  Q S Q for the noise's S."""
  size = 2 * max_lag + 1
  rows, columns = np.meshgrid(np.arange(patch), np.arange(patch), indexing='ij')
  rows, columns = rows.ravel(), columns.ravel()
  design = np.stack([np.ones(patch * patch), rows, columns], axis=1).astype(np.float64)
  keep = np.eye(patch * patch) - design @ np.linalg.pinv(design)
  lag_y, lag_x = rows[np.newaxis] - rows[:, np.newaxis], columns[np.newaxis] - columns[:, np.newaxis]
  at_lag = {(dy, dx): (lag_y == dy) & (lag_x == dx)
            for dy in range(-max_lag, max_lag + 1) for dx in range(-max_lag, max_lag + 1)}
  operator = np.zeros((size * size, size * size))
  for (dy, dx), pairs in at_lag.items():
    residual = keep @ (pairs | at_lag[(-dy, -dx)]).astype(np.float64) @ keep
    operator[:, (dy + max_lag) * size + dx + max_lag] = [residual[where].mean()
                                                        for where in at_lag.values()]
  return operator


def corrected_covariance(covariance, patch):
  """The noise's covariance [2L+1, 2L+1, C] at lags (dy, dx) from the mean products
  of its patch x patch residuals at those lags (the plane fit undone by least squares
  through fit_operator, taking the covariance past L as 0)."""
  size = covariance.shape[0]
  max_lag = size // 2
  solved = np.linalg.lstsq(fit_operator(patch, max_lag), covariance.reshape(size * size, -1),
                           rcond=None)[0].reshape(covariance.shape)
  # The operator has one column per lag and another, the same, for its opposite:
  # the least-squares solution splits each covariance evenly between them.
  corrected = solved + solved[::-1, ::-1]
  corrected[max_lag, max_lag] = solved[max_lag, max_lag]
  return corrected
