"""What a set of images' noise is: its level against the signal, per channel, and
its spatial correlation at lags 1 to 4 in x and y.

Two ways, both pure numpy on [H, W, C] float images on a 0-1 scale:
- from two captures of a scene (measure_pairs): their difference holds the
  noise of both and nothing of the scene, so the statistics are measured on
  every pixel, without assumptions about the content;
- from single noisy images (estimate_single): only where the scene is flat
  does the image show its noise. Each image is cut into 16x16 patches and a
  plane is fitted and subtracted in each. A first estimate takes the quarter of
  the patches whose 4x4 block means vary least (texture survives block means,
  noise is averaged down); then, as in Liu et al.'s weak-texture selection
  (IEEE TIP 2013), patches are kept only while they look like the noise the
  kept ones show (a residual variance under 2.5 times the kept patches' median
  variance at their signal, block-mean variance under twice what that noise's
  correlation predicts), and the estimate is made again from them until the
  selection settles. What the tests measure it to recover, and where it fails (images
  with no flat area), is in docs/diagnosis.md.
"""

import dataclasses

import numpy as np

from n2n.diagnosis import plane_fit

MAX_LAG = 4
PATCH = 16
BLOCK = 4
# Share of an image's patches (the flattest by their block means) that
# estimate_single keeps.
FLAT_SHARE = 0.25
SIGNAL_BINS = 8
# A kept patch's residual variance and block-mean variance may exceed what the
# estimated noise predicts by these factors (the spread of a 256-pixel variance
# estimate, and more for block means: 16 values).
VARIANCE_FACTOR = 2.5
TEXTURE_FACTOR = 2.0
SELECTION_ROUNDS = 8
MIN_PATCHES = 16
# A patch with more of its values at the image's lowest or highest than this
# is left out: clipped noise is narrower than the noise. None at all: allowing
# 2% let pixel-independent noise at sigma 2/255 read 0.20 at lag 1 on the demo
# photographs (0.08 without); an image clipped everywhere (a dark sky) then
# has no usable patch, and says so.
CLIPPED_SHARE = 0.0
# Patches drawn from an image at most (a 12-megapixel photograph has 47,000).
MAX_PATCHES_PER_IMAGE = 4096
# Subsample pairs to about this many pixels per image: the statistics of a
# million pixels are as good as those of forty million, and far cheaper.
MAX_PIXELS = 1 << 20
# A negative shot coefficient says the Poisson-Gaussian model does not fit
# where the fitted level (sigma) falls by more than this share over the signals
# measured; a smaller fall is a flat level read with the estimate's error. On
# smooth synthetic images (no texture or noise of their own; single 256x256 and
# 1024x1024 images, 6 seeds) constant Gaussian noise at sigma 3-25/255 fell by
# at most 2%, the camera simulator's processed sRGB by 31-54%. Single demo
# photographs, whose texture the estimate partly takes for noise, read more:
# constant noise fell by up to 33% at sigma 10/255, 15% at 25 and 7% at 50 (3
# seeds), processed sRGB by 11-45%; the report says so.
LEVEL_FALL_LIMIT = 0.1
# Nor does it fit where a level bin's sigma is more than this factor above or
# below the fit's. Constant Gaussian (sigma 10-50/255) and Poisson-Gaussian
# noise on single demo photographs came within 1.49 of the fit in every bin (2
# seeds); the camera simulator's processed sRGB, whose level rises and then
# falls with the signal, up to 2.78 (pairs).
FIT_FACTOR_LIMIT = 2.0


@dataclasses.dataclass(frozen=True)
class NoiseProfile:
  """The noise of a set of images.

  Attributes:
    source: 'pairs' (measured from two captures) or 'single' (estimated from
      flat patches of single images).
    channels: C.
    correlation: [2 * MAX_LAG + 1, 2 * MAX_LAG + 1] float, the noise's
      autocorrelation at lag (dy, dx) = (row - MAX_LAG, column - MAX_LAG),
      averaged over channels; 1 at the centre.
    correlation_x: [MAX_LAG] float, at lags 1..MAX_LAG along a row (x).
    correlation_y: [MAX_LAG] float, at lags 1..MAX_LAG down a column (y).
    signal: [B] float, the mean signal of each level bin (0-1 scale).
    sigma: [B, C] float, the noise's standard deviation in each bin per channel
      (NaN where a bin holds no pixel of that channel).
    fit: [C, 2] float, (shot, read) of variance = shot * signal + read per
      channel, least squares over the bins (Poisson-Gaussian).
    samples: pixels (pairs) or pixels of the kept patches (single) measured.
    mean_signal: [C] the mean signal of those pixels.
    channel_correlation: [C, C] float, the correlation between the channels'
      noise at the same pixel (1 on the diagonal; NaN beside a channel
      without noise).
    level_correction: [C] float, single images only (1 for pairs): what the
      variance measured on patch residuals is multiplied by to undo the
      plane fit, which takes more of correlated noise than of independent
      noise (plane_fit.corrected_covariance).
    corrected_correlation: [2L + 1, 2L + 1] float, correlation as the
      noise's own, the plane fit undone (the same as correlation for pairs).
      The single-image reading of correlation is left as it was measured:
      diagnose.py's thresholds were set on it.
  """
  source: str
  channels: int
  correlation: np.ndarray
  correlation_x: np.ndarray
  correlation_y: np.ndarray
  signal: np.ndarray
  sigma: np.ndarray
  fit: np.ndarray
  samples: int
  mean_signal: np.ndarray = None
  channel_correlation: np.ndarray = None
  level_correction: np.ndarray = None
  corrected_correlation: np.ndarray = None

  @property
  def correlation_lag1(self):
    """The larger of the lag-1 correlations in x and y (what a blind-spot or
    Neighbor2Neighbor network can exploit)."""
    return float(max(self.correlation_x[0], self.correlation_y[0]))

  def correlation_length(self, threshold):
    """The first lag (1..MAX_LAG) at which the correlation in x and y is below
    threshold; MAX_LAG + 1 where it never falls below it."""
    for lag in range(1, MAX_LAG + 1):
      if max(self.correlation_x[lag - 1], self.correlation_y[lag - 1]) < threshold:
        return lag
    return MAX_LAG + 1

  @property
  def level(self):
    """The noise's standard deviation, mean over level bins and channels, 0-1 scale."""
    return float(np.nanmean(self.sigma))

  def fitted_variance(self):
    """[C, 2] the fit's variance at the lowest and highest signal measured."""
    ends = np.array([np.min(self.signal), np.max(self.signal)])
    return self.fit[:, :1] * ends + self.fit[:, 1:]

  def fit_misses(self):
    """Per channel, why variance = shot x signal + read does not describe the
    noise over the signals measured, or None where it does (or where no fit was
    made: too few samples): 'falls' (a negative shot whose level falls by more
    than LEVEL_FALL_LIMIT; a smaller fall is a flat level, no shot noise
    measured), 'negative' (a negative variance at the lowest signal) or
    'departs' (a bin's sigma more than FIT_FACTOR_LIMIT times off the fit's)."""
    return [_fit_miss(shot, read, low, high, self.signal, sigma)
            for (shot, read), (low, high), sigma
            in zip(self.fit, self.fitted_variance(), self.sigma.T)]

  def to_dict(self):
    """JSON-ready. fit_shot_read is the least-squares fit as found, negative
    coefficients included; poisson_gaussian_fits says where it describes the noise."""
    return {'source': self.source, 'channels': self.channels, 'samples': self.samples,
            'correlation_x': [round(float(v), 4) for v in self.correlation_x],
            'correlation_y': [round(float(v), 4) for v in self.correlation_y],
            'signal': [round(float(v), 4) for v in self.signal],
            'sigma': [[None if np.isnan(v) else round(float(v), 5) for v in row]
                      for row in self.sigma],
            'fit_shot_read': [[float(f'{v:.4g}') for v in row] for row in self.fit],
            'poisson_gaussian_fits': [miss is None for miss in self.fit_misses()]}


def _fit_miss(shot, read, low, high, signal, sigma):
  """NoiseProfile.fit_misses for one channel: its fit, the fit's variance at
  the lowest and highest signal, and the bins' signal [B] and sigma [B]."""
  if shot == 0 and read == 0:
    return None  # no fit made
  if shot < 0 and np.sqrt(max(high, 0.0)) < (1 - LEVEL_FALL_LIMIT) * np.sqrt(max(low, 0.0)):
    return 'falls'
  if low < 0:
    return 'negative'
  measured = ~np.isnan(sigma)
  fitted = np.sqrt(np.maximum(shot * signal[measured] + read, 1e-30))
  off = np.maximum(sigma[measured] / fitted, fitted / np.maximum(sigma[measured], 1e-30))
  return 'departs' if np.any(off > FIT_FACTOR_LIMIT) else None


def _autocovariance(residual, per_item=False):
  """Sums of residual products at every lag up to MAX_LAG, and their counts.

  Args:
    residual: [N, H, W, C] float (N patches or images), every value counted.
    per_item: keep the N items apart.

  Returns:
    (products, counts): each [2L + 1, 2L + 1, C], or [N, 2L + 1, 2L + 1, C]
    with per_item.
  """
  size = 2 * MAX_LAG + 1
  channels = residual.shape[-1]
  lead = (residual.shape[0],) if per_item else ()
  products = np.zeros(lead + (size, size, channels))
  counts = np.zeros(lead + (size, size, channels))
  axes = (1, 2) if per_item else (0, 1, 2)
  height, width = residual.shape[1:3]
  for dy in range(-MAX_LAG, MAX_LAG + 1):
    for dx in range(-MAX_LAG, MAX_LAG + 1):
      rows_a = slice(max(0, -dy), height - max(0, dy))
      rows_b = slice(max(0, dy), height - max(0, -dy))
      cols_a = slice(max(0, -dx), width - max(0, dx))
      cols_b = slice(max(0, dx), width - max(0, -dx))
      products[..., dy + MAX_LAG, dx + MAX_LAG, :] = np.sum(
          residual[:, rows_a, cols_a] * residual[:, rows_b, cols_b], axis=axes)
      # Pairs at this lag: every item has the same number of them.
      pairs = (height - abs(dy)) * (width - abs(dx)) * (1 if per_item else residual.shape[0])
      counts[..., dy + MAX_LAG, dx + MAX_LAG, :] = pairs
  return products, counts


def _correlation(products, counts):
  """Autocorrelation per lag, averaged over channels: [2L + 1, 2L + 1]."""
  covariance = products / np.maximum(counts, 1)
  centre = covariance[MAX_LAG, MAX_LAG]
  noisy = centre > 0
  if not np.any(noisy):
    raise ValueError('no noise to measure: the images hold no variation where they were read')
  # A channel without noise (constant) has no correlation to average in.
  return np.mean(covariance[..., noisy] / centre[noisy], axis=-1)


def _signal_bin_edges(signal):
  """[SIGNAL_BINS + 1] edges of the level bins over signal's values (any shape): its
  own range (16-bit microscopy often uses a few hundred of 65535 levels), from its 0.5
  to its 99.5 percentile, the lowest and highest bins open-ended."""
  low, high = np.percentile(signal, [0.5, 99.5])
  edges = np.linspace(low, max(high, low + 1e-12), SIGNAL_BINS + 1)
  edges[0], edges[-1] = -np.inf, np.inf
  return edges


def _levels(signal, squares, channels):
  """Noise sigma per signal bin and channel, and the Poisson-Gaussian fit.

  Args:
    signal, squares: [M, C] float: each sample's signal and its squared noise
      value (a variance estimate).
  """
  edges = _signal_bin_edges(signal)
  centres = np.full(SIGNAL_BINS, np.nan)
  sigma = np.full((SIGNAL_BINS, channels), np.nan)
  counts = np.zeros((SIGNAL_BINS, channels))
  for index in range(SIGNAL_BINS):
    inside = (signal >= edges[index]) & (signal < edges[index + 1])
    total = np.sum(inside, axis=0).astype(np.float64)
    counts[index] = total
    if np.sum(total) > 0:
      centres[index] = np.sum(signal * inside) / np.sum(total)
    for channel in range(channels):
      if total[channel] > 0:
        sigma[index, channel] = np.sqrt(np.sum((squares * inside)[:, channel]) / total[channel])
  fit = np.zeros((channels, 2))
  for channel in range(channels):
    usable = (counts[:, channel] > 20) & ~np.isnan(sigma[:, channel])
    if np.sum(usable) >= 2:
      design = np.stack([centres[usable], np.ones(np.sum(usable))], axis=1)
      root = np.sqrt(counts[usable, channel])[:, None]
      fit[channel] = np.linalg.lstsq(design * root, sigma[usable, channel]**2 * root[:, 0],
                                     rcond=None)[0]
    elif np.sum(usable) == 1:
      fit[channel] = (0.0, sigma[usable, channel][0]**2)
  keep = ~np.isnan(centres)
  return centres[keep], sigma[keep], fit


def _subsample(images, rng):
  """A random window of at most MAX_PIXELS pixels of each image (the same
  window of every image of a pair)."""
  height, width = images[0].shape[:2]
  if height * width <= MAX_PIXELS:
    return images
  side = int(np.sqrt(MAX_PIXELS))
  window_h, window_w = min(height, side), min(width, MAX_PIXELS // min(height, side))
  top = int(rng.integers(0, height - window_h + 1))
  left = int(rng.integers(0, width - window_w + 1))
  return [image[top:top + window_h, left:left + window_w] for image in images]


def measure_pairs(pairs, seed=0):
  """The noise of pairs of independent captures of the same scenes.

  Args:
    pairs: iterable of (first, second), each [H, W, C] float on a 0-1 scale
      (the same shape within a pair).
    seed: seed of the window taken from images over MAX_PIXELS.

  Returns:
    NoiseProfile with source 'pairs': the difference (first - second) / sqrt(2)
    has the noise's variance and correlation (each capture's noise
    independent of the other's), and the mean of the two is the signal.
  """
  rng = np.random.default_rng(seed)
  products = counts = None
  signals, squares = [], []
  samples = 0
  channel_products = 0.0
  for first, second in pairs:
    if min(np.shape(first)[:2]) <= 2 * MAX_LAG:
      raise ValueError(f'captures of {np.shape(first)[1]}x{np.shape(first)[0]} pixels are too '
                       f'small to measure noise correlation up to lag {MAX_LAG}')
    first, second = _subsample([np.asarray(first, np.float64),
                                np.asarray(second, np.float64)], rng)
    noise = (first - second) / np.sqrt(2.0)
    noise = noise - np.mean(noise, axis=(0, 1))
    image_products, image_counts = _autocovariance(noise[np.newaxis])
    products = image_products if products is None else products + image_products
    counts = image_counts if counts is None else counts + image_counts
    channels = noise.shape[-1]
    signals.append(((first + second) / 2.0).reshape(-1, channels))
    squares.append((noise**2).reshape(-1, channels))
    channel_products = channel_products + np.einsum('yxc,yxd->cd', noise, noise)
    samples += noise.shape[0] * noise.shape[1]
  if products is None:
    raise ValueError('no pair of captures to measure')
  return _profile('pairs', products, counts, np.concatenate(signals), np.concatenate(squares),
                  samples, channel_products)


@dataclasses.dataclass(frozen=True)
class _Patches:
  """Patches of images, each with what the selection and the estimate need.

  Attributes:
    means: [N, C] mean per channel.
    variances: [N, C] residual variance per channel (after the plane fit,
      unbiased for the 3 fitted parameters).
    textures: [N] mean squared residual of the 4x4 block means.
    products, counts: [N, 2L+1, 2L+1, C] residual products and their counts
      at each lag (_autocovariance per patch).
    channel_products: [N, C, C] sums of residual products between channels
      at the same pixel.
  """
  means: np.ndarray
  variances: np.ndarray
  textures: np.ndarray
  products: np.ndarray
  counts: np.ndarray
  channel_products: np.ndarray


def _patches(image, rng, max_patches=MAX_PATCHES_PER_IMAGE):
  """The 16x16 patches of one [H, W, C] image (at most max_patches, drawn at
  random) as _Patches."""
  height, width, channels = image.shape
  rows, columns = height // PATCH, width // PATCH
  if not rows or not columns:
    raise ValueError(f'an image of {height}x{width} pixels is smaller than a {PATCH}x{PATCH} '
                     'patch')
  chosen = np.arange(rows * columns)
  if len(chosen) > max_patches:
    chosen = np.sort(rng.choice(len(chosen), max_patches, replace=False))
  # Only the chosen patches are copied (as float64): a 24-megapixel image stays as it is.
  patches = np.stack([image[top:top + PATCH, left:left + PATCH]
                      for top, left in zip(chosen // columns * PATCH, chosen % columns * PATCH)]
                     ).astype(np.float64)
  residuals = plane_fit.residuals(patches)
  blocks = residuals.reshape(-1, PATCH // BLOCK, BLOCK, PATCH // BLOCK, BLOCK,
                             channels).mean(axis=(2, 4))
  # Patches with values at the image's extremes (noise clipped at black or
  # white, a saturated sky) or without variation (a noise-free area) do not
  # show the noise as it is.
  lowest, highest = float(np.min(image)), float(np.max(image))
  scale = max(abs(lowest), abs(highest), 1e-30)
  clipped = np.mean((patches <= lowest) | (patches >= highest), axis=(1, 2, 3))
  usable = ((clipped <= CLIPPED_SHARE)
            & (np.mean(residuals**2, axis=(1, 2, 3)) > (1e-9 * scale)**2))
  patches, residuals, blocks = patches[usable], residuals[usable], blocks[usable]
  products, counts = _autocovariance(residuals, per_item=True)
  # A plane fit takes 3 of a patch's P*P degrees of freedom from its residual.
  unbias = PATCH * PATCH / (PATCH * PATCH - 3)
  return _Patches(patches.mean(axis=(1, 2)), np.mean(residuals**2, axis=(1, 2)) * unbias,
                  np.mean(blocks**2, axis=(1, 2, 3)), products, counts,
                  np.einsum('nyxc,nyxd->ncd', residuals, residuals))


def _block_mean_share(correlation):
  """Variance of a 4x4 block mean over the pixel variance, for noise of this
  autocorrelation ([2L+1, 2L+1]): 1/16 for independent noise, more when
  correlated."""
  total = 0.0
  for dy in range(1 - BLOCK, BLOCK):
    for dx in range(1 - BLOCK, BLOCK):
      total += (BLOCK - abs(dy)) * (BLOCK - abs(dx)) * correlation[MAX_LAG + dy, MAX_LAG + dx]
  return max(total / BLOCK**4, 1.0 / BLOCK**2)


def _median_variance(kept_signal, kept_variance, signal):
  """[N] float: the median residual variance of the kept patches ([K] signals and
  variances, averaged over channels) in each of SIGNAL_BINS bins of their signal,
  interpolated at each patch's signal ([N]).

  The selection measures patches against the median, not the mean: a textured patch
  only ever adds to a patch's variance, and where one bin's flat patches are few (a
  sky's tone on one photograph) a handful of textured ones from another photograph
  raised the mean enough to keep them. On the calibrated camera simulator's first 8
  photographs (profiles 1 and 2) the worst bin's level read 1.52 and 1.84 times the
  truth's against the mean, 1.26 and 1.28 against the median
  (docs/bench/noise_model_levels_*.json)."""
  edges = _signal_bin_edges(kept_signal)
  centres, medians = [], []
  for lower, upper in zip(edges[:-1], edges[1:]):
    inside = (kept_signal >= lower) & (kept_signal < upper)
    if np.any(inside):
      centres.append(np.mean(kept_signal[inside]))
      medians.append(np.median(kept_variance[inside]))
  return np.maximum(np.interp(signal, centres, medians), 1e-12)


def _estimate(patches, keep):
  return _profile('single', patches.products[keep].sum(axis=0), patches.counts[keep].sum(axis=0),
                  patches.means[keep], patches.variances[keep],
                  int(np.sum(keep)) * PATCH * PATCH, patches.channel_products[keep].sum(axis=0))


def estimate_single(images, seed=0, max_patches=MAX_PATCHES_PER_IMAGE):
  """The noise of single noisy images, from their flattest patches.

  Args:
    images: iterable of [H, W, C] float on a 0-1 scale (the same C), all of
      the same kind of noise (one camera).
    seed: seed of the patches drawn from large images.
    max_patches: patches drawn from each image at most (fewer: faster, less
      certain).

  Returns:
    NoiseProfile with source 'single'; its samples count the pixels of the
    patches kept. Patches with more than CLIPPED_SHARE of their values at
    their image's lowest or highest, or without variation, are left out:
    clipped or saturated areas do not show the noise as it is.

  Raises:
    ValueError: no usable patch.
  """
  rng = np.random.default_rng(seed)
  parts = [_patches(np.asarray(image), rng, max_patches) for image in images]
  if not parts:
    raise ValueError('no image to estimate the noise of')
  patches = _Patches(*(np.concatenate([getattr(part, field.name) for part in parts])
                       for field in dataclasses.fields(_Patches)))
  if not len(patches.textures):
    raise ValueError('no patch shows noise: every 16x16 patch is saturated (reaches 0 or white) '
                     'or holds no variation')
  keep = np.zeros(len(patches.textures), bool)
  keep[np.argsort(patches.textures)[:max(1, int(round(len(keep) * FLAT_SHARE)))]] = True
  profile = _estimate(patches, keep)
  signal = patches.means.mean(axis=1)
  for _ in range(SELECTION_ROUNDS):
    variance = _median_variance(signal[keep], patches.variances[keep].mean(axis=1), signal)
    consistent = ((patches.variances.mean(axis=1) < VARIANCE_FACTOR * variance)
                  & (patches.textures
                     < TEXTURE_FACTOR * _block_mean_share(profile.correlation) * variance))
    if np.sum(consistent) < MIN_PATCHES or np.array_equal(consistent, keep):
      break
    keep = consistent
    profile = _estimate(patches, keep)
  return profile


def _channel_correlation(channel_products):
  """[C, C] correlation from summed products between channels [C, C]; NaN
  beside a channel without noise."""
  deviation = np.sqrt(np.diag(channel_products))
  with np.errstate(invalid='ignore', divide='ignore'):
    return channel_products / np.outer(deviation, deviation)


def _profile(source, products, counts, signal, squares, samples, channel_products):
  """NoiseProfile from summed lag products [2L+1, 2L+1, C], per-sample signals
  and squared noise values [M, C], and summed products between channels [C, C]."""
  correlation = _correlation(products, counts)
  level_correction = np.ones(signal.shape[-1])
  corrected_correlation = correlation
  if source == 'single':
    covariance = products / np.maximum(counts, 1)
    corrected = plane_fit.corrected_covariance(covariance, PATCH)
    centre_raw, centre_corrected = covariance[MAX_LAG, MAX_LAG], corrected[MAX_LAG, MAX_LAG]
    noisy = (centre_raw > 0) & (centre_corrected > 0)
    # The levels (sigma) already hold _patches' unbiasing for the plane's 3 parameters,
    # which the correction makes for any correlation: the ratio is to the unbiased variance.
    unbiased = centre_raw * PATCH * PATCH / (PATCH * PATCH - 3)
    level_correction[noisy] = centre_corrected[noisy] / unbiased[noisy]
    if np.any(noisy):
      corrected_correlation = np.mean(corrected[..., noisy] / centre_corrected[noisy], axis=-1)
  centre = MAX_LAG
  centres, sigma, fit = _levels(signal, squares, signal.shape[-1])
  return NoiseProfile(
      source=source, channels=int(signal.shape[-1]), correlation=correlation,
      correlation_x=correlation[centre, centre + 1:].copy(),
      correlation_y=correlation[centre + 1:, centre].copy(),
      signal=centres, sigma=sigma, fit=fit, samples=int(samples),
      mean_signal=np.mean(signal, axis=0),
      channel_correlation=_channel_correlation(channel_products),
      level_correction=level_correction, corrected_correlation=corrected_correlation)
