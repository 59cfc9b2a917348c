"""BM3D, the classical peer the evidence package scores beside n2n's runs.

The bm3d package is an optional extra (pip install bm3d): free for non-commercial
use only (its own licence), never in n2n's requirements or its tests.
"""

import numpy as np


def bm3d_version():
  """The installed bm3d package's version; SystemExit naming the install where it is absent."""
  from importlib import metadata  # pylint: disable=g-import-not-at-top
  try:
    return metadata.version('bm3d')
  except metadata.PackageNotFoundError:
    raise SystemExit('BM3D needs the bm3d package: pip install bm3d') from None


def true_sigma(noisy, reference):
  """[C] float: the standard deviation of noisy - reference per channel ([H, W, C])."""
  return np.std(noisy - reference, axis=(0, 1))


def bm3d_denoiser(sigma):
  """fn([H, W, C] float32) -> [H, W, C] float32: BM3D (C 1) or CBM3D (C 3) at sigma [C],
  in the image's own units."""
  import bm3d  # pylint: disable=g-import-not-at-top  (an optional extra)

  def denoise(noisy):
    if noisy.ndim != 3 or noisy.shape[-1] not in (1, 3):
      raise ValueError(f'BM3D takes [H, W, 1] or [H, W, 3] images, not {noisy.shape}')
    if noisy.shape[-1] == 1:
      return bm3d.bm3d(noisy[..., 0], float(sigma[0]))[..., None].astype(np.float32)
    return bm3d.bm3d_rgb(noisy, list(map(float, sigma))).astype(np.float32)
  return denoise


def bm3d_8_bit_denoiser(sigma):
  """fn([H, W, C] uint8) -> [H, W, C] uint8: bm3d_denoiser(sigma) on the image's 0-1 values
  (sigma on that scale), written back to 8 bits as a file would be."""
  denoise = bm3d_denoiser(sigma)
  return lambda image: np.round(
      np.clip(denoise(image.astype(np.float32) / 255), 0, 1) * 255).astype(np.uint8)
