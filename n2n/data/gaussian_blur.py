"""Separable Gaussian blurs in numpy: the phantom's optics and a camera's noise
reduction."""

import numpy as np


def gaussian_taps(sigma):
  """[2r + 1] weights summing to 1 of a Gaussian of standard deviation sigma,
  truncated at r = ceil(3 sigma) (at least 1); sigma 0 gives (0, 1, 0)."""
  radius = max(1, int(np.ceil(3 * sigma)))
  offsets = np.arange(-radius, radius + 1)
  taps = np.exp(-0.5 * (offsets / max(sigma, 1e-6)) ** 2)
  return taps / taps.sum()


def blur(array, sigmas):
  """array (float) blurred along its first len(sigmas) axes, each by a Gaussian of
  its sigma in pixels; edges reflected (repeated where an axis is shorter than the
  blur's radius)."""
  blurred = array
  for axis, sigma in enumerate(sigmas):
    taps = gaussian_taps(sigma)
    radius = len(taps) // 2
    pad = [(0, 0)] * blurred.ndim
    pad[axis] = (radius, radius)
    padded = np.pad(blurred, pad, mode='reflect' if blurred.shape[axis] > radius else 'edge')
    total = np.zeros_like(blurred)
    for index, tap in enumerate(taps):
      total += tap * np.take(padded, np.arange(index, index + blurred.shape[axis]), axis=axis)
    blurred = total
  return blurred
