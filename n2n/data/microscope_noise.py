"""sCMOS-like microscope captures: Poisson-Gaussian noise plus row and column noise.

A scientific CMOS camera counts photons (Poisson shot noise), adds read
noise per pixel (Gaussian), and reads each row (rolling shutter) and each
column (its own amplifier) with offsets that change from frame to frame: the
row offsets make the noise of a frame correlated along its rows, however far
apart the pixels are. Each capture draws all of it anew, so two captures'
noise is independent. Pure numpy.
"""

import dataclasses

import numpy as np

MAX_COUNT = 65535


@dataclasses.dataclass(frozen=True)
class ScmosSettings:
  """One camera and exposure.

  Attributes:
    photons: expected photons at the clean image's 1.0 (its brightest value).
    read_sigma: per-pixel read noise, standard deviation in counts.
    row_sigma: standard deviation of each row's offset in counts (per frame).
    column_sigma: the same for each column's offset.
    offset: the camera's baseline in counts (sCMOS cameras add 100 or so so
      that noise below zero is kept).
  """
  photons: float = 200.0
  read_sigma: float = 2.0
  row_sigma: float = 3.0
  column_sigma: float = 0.0
  offset: float = 100.0


def capture(clean, settings, rng):
  """One noisy 16-bit frame of a clean image.

  Args:
    clean: [H, W] float in [0, 1] (fluorescence, 1.0 the brightest).
    settings: ScmosSettings.
    rng: numpy Generator.

  Returns:
    [H, W] uint16 counts: Poisson(clean * photons) + read noise + row and
    column offsets + offset, rounded and clipped to 0-65535.
  """
  height, width = clean.shape
  counts = rng.poisson(np.clip(clean, 0.0, 1.0) * settings.photons).astype(np.float64)
  counts += settings.read_sigma * rng.standard_normal((height, width))
  counts += settings.row_sigma * rng.standard_normal((height, 1))
  counts += settings.column_sigma * rng.standard_normal((1, width))
  return np.clip(np.round(counts + settings.offset), 0, MAX_COUNT).astype(np.uint16)


def reference(clean, settings):
  """The expected frame without noise: clean * photons + offset, uint16."""
  return np.clip(np.round(np.clip(clean, 0.0, 1.0) * settings.photons + settings.offset), 0,
                 MAX_COUNT).astype(np.uint16)


def expected_correlation_along_rows(settings, signal):
  """The correlation of two pixels of one row (any distance apart) at a mean
  signal in [0, 1]: row variance over the total (columns add to the
  correlation down a column instead)."""
  total = (signal * settings.photons + settings.read_sigma**2 + settings.row_sigma**2
           + settings.column_sigma**2)
  return settings.row_sigma**2 / total
