"""A model of a run's real noise, to draw noise like it: what Recorrupted-to-Recorrupted
(R2R; Pang et al., CVPR 2021) draws its recorruptions from (the drawing:
n2n/pipelines/recorrupted.py). Numpy only: a run's config keeps the model.

Of one noisy image y R2R makes a Noise2Noise pair: input y + alpha * n, target
y - n / alpha, where n is drawn with the noise's own covariance. The input's
noise (noise + alpha * n) and the target's (noise - n / alpha) are then
uncorrelated, and independent for Gaussian noise, as two captures' are.

The noise model (NoiseModel, from a diagnosis: n2n/diagnosis/noise_statistics.py)
holds the noise's spatial correlation at lags up to 4 (the mean over channels),
the correlation between its channels and its level against the signal per
channel. n is white noise filtered by a kernel whose autocorrelation is the
spatial one (the square root of its spectrum, negative parts clipped), its
channels mixed by the Cholesky factor of their correlation, each scaled by the
level at the pixel's local signal (a Gaussian blur of SIGNAL_BLUR pixels of y).
Its channels share one spatial correlation: noise whose chroma is smoothed more
than its luma (in-camera noise reduction) is drawn with their mean.
"""

import dataclasses
import json

import numpy as np

# What the noise's covariance is taken to vanish past (noise_statistics.MAX_LAG), and
# the kernel's half-width: the square root of the spectrum reaches a little farther.
MAX_LAG = 4
KERNEL_RADIUS = 6
# The local signal at which each pixel's level is read: a Gaussian of this many pixels.
SIGNAL_BLUR = 2.0
# A noise model is read from at least this many pixels (of two captures, or of flat
# patches of single images: 16 patches of 16 x 16, the fewest the single-image estimate
# selects by). On 4 images of 192 x 192 textured everywhere and clipped at black and
# white, where few patches are flat and free of clipping, recorruptions drawn from the
# diagnosis's model gained -0.28 and +0.13 dB (seeds 1 and 2), where plain
# Neighbor2Neighbor gains 0.81-0.90 (bench/recipes/correlated.py's pixel-shuffle data at
# bcfad4d, when its recipe still let the diagnosis choose the model:
# docs/bench/learning_test_spread_recorrupted_clipped.json).
MIN_SAMPLES = 16 * 16 * 16


@dataclasses.dataclass(frozen=True)
class NoiseModel:
  """What recorruptions are drawn from.

  Attributes:
    correlation: [2L+1, 2L+1] float, the noise's autocorrelation at lag (dy, dx)
      = (row - L, column - L), L = MAX_LAG; 1 at the centre.
    channel_correlation: [C, C] float, between the channels at one pixel.
    signal: [B] float, increasing: the signals (0-1) the level is given at.
    sigma: [B, C] float, the noise's standard deviation there (0-1 scale);
      between them it is interpolated, beyond them held.
  """
  correlation: np.ndarray
  channel_correlation: np.ndarray
  signal: np.ndarray
  sigma: np.ndarray

  def to_json(self):
    """The model as compact JSON text (a run's config keeps it)."""
    rounded = lambda array: np.round(np.asarray(array, np.float64), 6).tolist()
    return json.dumps({'correlation': rounded(self.correlation),
                       'channel_correlation': rounded(self.channel_correlation),
                       'signal': rounded(self.signal), 'sigma': rounded(self.sigma)},
                      separators=(',', ':'))

  @classmethod
  def from_json(cls, text, what='the noise model'):
    """The model to_json wrote; ValueError naming `what` where text is not one."""
    try:
      fields = json.loads(text)
      model = cls(*(np.asarray(fields[name], np.float64)
                    for name in ('correlation', 'channel_correlation', 'signal', 'sigma')))
    except (ValueError, KeyError, TypeError) as error:
      raise ValueError(f'{what} is not a noise model as train.py writes one: {error}') from None
    size = 2 * MAX_LAG + 1
    channels = model.channel_correlation.shape[0] if model.channel_correlation.ndim == 2 else 0
    if (model.correlation.shape != (size, size) or not channels
        or model.channel_correlation.shape != (channels, channels)
        or model.signal.ndim != 1 or model.sigma.shape != (len(model.signal), channels)
        or not len(model.signal) or np.any(np.diff(model.signal) <= 0)
        or not np.all(np.isfinite(model.sigma)) or np.any(model.sigma < 0)):
      raise ValueError(f'{what} is not a noise model as train.py writes one: its arrays have '
                       'the wrong shapes or values')
    return model


def model_of_profile(profile, corrected=False):
  """NoiseModel of a noise_statistics.NoiseProfile (C channels).

  corrected: for a single-image profile, its correlation and level with the
  patches' plane fit undone (NoiseProfile.corrected_correlation). Not the
  default: on the calibrated camera simulator's profile 1 it gained 0.80 dB
  less than the reading as measured (bench/recorrupted.py, one seed),
  although its correlation came closer to the truth; it also raises the
  level, and which of the two cost the gain was not measured. Bins without a level take the channel's mean
  level; channels without noise are drawn uncorrelated with the others.
  """
  sigma = np.array(profile.sigma, np.float64)
  for channel in range(sigma.shape[1]):
    missing = np.isnan(sigma[:, channel])
    sigma[missing, channel] = np.nanmean(sigma[:, channel]) if not np.all(missing) else 0.0
  correlation = profile.correlation
  if corrected and profile.corrected_correlation is not None:
    correlation = profile.corrected_correlation
    sigma = sigma * np.sqrt(profile.level_correction)[np.newaxis]
  channels = np.nan_to_num(np.array(profile.channel_correlation, np.float64), nan=0.0)
  np.fill_diagonal(channels, 1.0)
  signal = np.asarray(profile.signal, np.float64)
  order = np.argsort(signal)
  return NoiseModel(np.asarray(correlation, np.float64), channels, signal[order], sigma[order])


def kernel(correlation, size=32):
  """[2R+1, 2R+1] float32 kernel (R = KERNEL_RADIUS) whose autocorrelation is
  `correlation` ([2L+1, 2L+1]) where its spectrum is non-negative; white noise
  filtered by it has unit variance."""
  wrapped = np.zeros((size, size))
  for dy in range(-MAX_LAG, MAX_LAG + 1):
    for dx in range(-MAX_LAG, MAX_LAG + 1):
      wrapped[dy % size, dx % size] = correlation[dy + MAX_LAG, dx + MAX_LAG]
  spectrum = np.maximum(np.real(np.fft.fft2(wrapped)), 0.0)
  filtered = np.fft.fftshift(np.real(np.fft.ifft2(np.sqrt(spectrum))))
  centre = size // 2
  filtered = filtered[centre - KERNEL_RADIUS:centre + KERNEL_RADIUS + 1,
                      centre - KERNEL_RADIUS:centre + KERNEL_RADIUS + 1]
  return (filtered / np.sqrt(np.sum(filtered ** 2))).astype(np.float32)


def mixing(channel_correlation):
  """[C, C] float32 lower-triangular factor L with L L^T the channels'
  correlation (nudged to positive definite)."""
  channels = len(channel_correlation)
  values, vectors = np.linalg.eigh(np.asarray(channel_correlation, np.float64))
  nearest = vectors @ np.diag(np.maximum(values, 1e-3)) @ vectors.T
  scale = np.sqrt(np.diag(nearest))
  return np.linalg.cholesky(nearest / np.outer(scale, scale) + 1e-9 * np.eye(channels)).astype(
      np.float32)
