"""Simulated fluorescence micrographs, 2D, one channel: what the shipped microscopy model
trains on (bench/fluorescence_model.py, issue 63 §2). Nothing here is real data.

A field (clean_field) is the expected fluorescence, float64 in [0, 1], of a random mix of
the structures widefield and confocal images show:
- filaments: smooth random curves a pixel wide (microtubules, actin);
- puncta: spots of a few pixels (vesicles, single molecules);
- membranes: the outlines of Voronoi cells (cell edges, organelle walls);
- nuclei: filled ellipses with a grainy interior;
- a smooth background and, for widefield, out-of-focus haze (the structures blurred wide);
all blurred by a Gaussian PSF (sigma 0.8-2.5 pixels).

An acquisition (acquisition) is counts on a camera: Poisson photons at a peak of
`photons` per pixel plus background, Gaussian read noise, a gain and an offset, then the
file's pixel type: 16-bit, 12-bit in a 16-bit file, or an 8-bit export contrast-stretched
by the first capture's percentiles (as the 8-bit W2S copy and many papers' figures are),
stored as 8-bit levels times 257 in the same uint16 arrays so one run trains on all of
them (a percentile-normalised run maps either to the same values). Two acquisitions of
one field are independent: Noise2Noise pairs.

The ranges (PEAK_PHOTONS and the rest) span confocal (a few photons at the brightest
pixel) to bright widefield (hundreds), from microscopy's textbook figures (sCMOS read noise
1-2 e-, EMCCD-free cameras 2-6 e-; offsets of 100-500 counts), not fitted to any real set.
"""

import dataclasses

import numpy as np

from n2n.data import gaussian_blur

# Peak expected photons at the brightest structure: log-uniform over this range.
PEAK_PHOTONS = (2.0, 400.0)
# Background photons, as a share of the peak.
BACKGROUND_SHARE = (0.0, 0.15)
READ_NOISE_ELECTRONS = (0.5, 4.0)
GAIN_COUNTS_PER_ELECTRON = (0.3, 4.0)
OFFSET_COUNTS = (0.0, 500.0)
PSF_SIGMA = (0.8, 2.5)
# Pixel types of the files, drawn with these weights: 16-bit, 12-bit in 16-bit files,
# contrast-stretched 8-bit exports.
FILE_KINDS = (('uint16', 0.35), ('uint12', 0.3), ('stretched_uint8', 0.35))
# An 8-bit export's stretch: this share of the pixels clipped at each end (the W2S 8-bit
# copy clips about 0.17%).
STRETCH_CLIP_PERCENT = 0.2


@dataclasses.dataclass(frozen=True)
class Camera:
  """One acquisition setting: photons, background, read noise, gain, offset, file kind."""
  peak_photons: float
  background_photons: float
  read_noise: float
  gain: float
  offset: float
  file_kind: str


def _filaments(rng, shape, count):
  """count smooth random curves a pixel wide, [H, W] float64 deposited brightness."""
  lines = np.zeros(shape, np.float64)
  height, width = shape
  for _ in range(count):
    point = rng.uniform(0, 1, 2) * shape
    angle = rng.uniform(0, 2 * np.pi)
    bend = rng.uniform(0.02, 0.15)
    brightness = rng.uniform(0.4, 1.0)
    steps = int(rng.uniform(0.5, 2.0) * max(shape) * 2)
    turns = np.cumsum(rng.normal(0.0, bend, steps))
    path = point + np.cumsum(0.5 * np.stack([np.sin(angle + turns), np.cos(angle + turns)], 1),
                             axis=0)
    index = np.floor(path).astype(int)
    keep = (index[:, 0] >= 0) & (index[:, 0] < height) & (index[:, 1] >= 0) & (
        index[:, 1] < width)
    np.add.at(lines, (index[keep, 0], index[keep, 1]), brightness * 0.5)
  return np.minimum(lines, 1.5)


def _puncta(rng, shape, count):
  """count spots one to a few pixels wide, [H, W] float64."""
  spots = np.zeros(shape, np.float64)
  rows = rng.integers(0, shape[0], count)
  columns = rng.integers(0, shape[1], count)
  np.add.at(spots, (rows, columns), rng.uniform(0.3, 1.0, count))
  return gaussian_blur.blur(spots, (rng.uniform(0.5, 1.5),) * 2) * 6.0


def _membranes(rng, shape, cells):
  """Outlines of `cells` Voronoi cells, about a pixel or two wide, [H, W] float64 in [0, 1]."""
  seeds = rng.uniform(0, 1, (cells, 2)) * shape
  y, x = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float64)
  distances = np.sqrt((y[..., None] - seeds[:, 0]) ** 2 + (x[..., None] - seeds[:, 1]) ** 2)
  nearest = np.sort(distances, axis=-1)[..., :2]
  width = rng.uniform(0.6, 2.0)
  return np.clip(1.0 - (nearest[..., 1] - nearest[..., 0]) / width, 0.0, 1.0) * rng.uniform(
      0.4, 1.0)


def _nuclei(rng, shape, count):
  """count filled ellipses with a grainy interior, [H, W] float64 in [0, 1]."""
  y, x = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float64)
  grain = gaussian_blur.blur(rng.normal(size=shape), (1.5, 1.5))
  grain = grain / (np.abs(grain).max() + 1e-9)
  filled = np.zeros(shape, np.float64)
  for _ in range(count):
    centre = rng.uniform(0, 1, 2) * shape
    radii = rng.uniform(0.05, 0.2, 2) * min(shape)
    angle = rng.uniform(0, np.pi)
    dy, dx = y - centre[0], x - centre[1]
    along = dy * np.cos(angle) + dx * np.sin(angle)
    across = -dy * np.sin(angle) + dx * np.cos(angle)
    inside = (along / radii[0]) ** 2 + (across / radii[1]) ** 2 <= 1.0
    filled = np.maximum(filled, inside * rng.uniform(0.2, 0.7) * (1.0 + 0.3 * grain))
  return filled


def clean_field(rng, size):
  """One random field's expected fluorescence: [size, size] float64 in [0, 1], its
  brightest pixel 1."""
  shape = (size, size)
  area = size * size / 256.0 ** 2
  structures = np.zeros(shape, np.float64)
  # Each structure present in about half the fields, at least one in every field.
  present = rng.uniform(size=4) < 0.55
  if not present.any():
    present[rng.integers(4)] = True
  if present[0]:
    structures += _filaments(rng, shape, max(1, int(rng.uniform(3, 40) * area)))
  if present[1]:
    structures += _puncta(rng, shape, max(1, int(rng.uniform(10, 300) * area)))
  if present[2]:
    structures += _membranes(rng, shape, max(2, int(rng.uniform(4, 40) * area)))
  if present[3]:
    structures += _nuclei(rng, shape, max(1, int(rng.uniform(1, 8) * area)))
  psf = rng.uniform(*PSF_SIGMA)
  field = gaussian_blur.blur(structures, (psf, psf))
  # Out-of-focus light: the same structures blurred wide (widefield), or none (confocal).
  haze = rng.uniform(0.0, 0.6) if rng.uniform() < 0.6 else 0.0
  if haze:
    wide = rng.uniform(6.0, 20.0)
    field = field + haze * gaussian_blur.blur(structures, (wide, wide))
  smooth = gaussian_blur.blur(rng.uniform(size=(max(2, size // 32),) * 2), (1.0, 1.0))
  background = np.kron(smooth, np.ones((size // smooth.shape[0] + 1,) * 2))[:size, :size]
  field = field + rng.uniform(0.0, 0.1) * background
  return field / field.max()


def random_camera(rng):
  """A Camera drawn from the module's ranges (peak photons log-uniform)."""
  peak = float(np.exp(rng.uniform(*np.log(PEAK_PHOTONS))))
  kinds, weights = zip(*FILE_KINDS)
  return Camera(peak, peak * rng.uniform(*BACKGROUND_SHARE), rng.uniform(*READ_NOISE_ELECTRONS),
                rng.uniform(*GAIN_COUNTS_PER_ELECTRON), rng.uniform(*OFFSET_COUNTS),
                str(rng.choice(kinds, p=np.array(weights) / sum(weights))))


def _counts(field, camera, rng):
  """One noisy acquisition's counts before the file's pixel type, float64 [H, W]."""
  photons = rng.poisson(camera.background_photons + camera.peak_photons * field)
  electrons = photons + rng.normal(0.0, camera.read_noise, field.shape)
  return camera.offset + camera.gain * electrons


def acquisitions(field, camera, rng, count=2):
  """count independent noisy acquisitions of field through camera: [H, W] uint16 each
  (8-bit exports as their levels times 257)."""
  counts = [_counts(field, camera, rng) for _ in range(count)]
  if camera.file_kind == 'stretched_uint8':
    low, high = np.percentile(counts[0], (STRETCH_CLIP_PERCENT, 100 - STRETCH_CLIP_PERCENT))
    scale = 255.0 / max(high - low, 1e-6)
    return [(np.clip(np.round((value - low) * scale), 0, 255) * 257).astype(np.uint16)
            for value in counts]
  top = 4095 if camera.file_kind == 'uint12' else 65535
  return [np.clip(np.round(value), 0, top).astype(np.uint16) for value in counts]


def stretched_pairs(fields, size, seed):
  """[(noisy uint8 [size, size], reference uint8 [size, size])] of `fields` fields drawn
  with `seed`: one acquisition of each, exported as contrast-stretched 8 bits as W2S's
  8-bit copy is, and the field on 0-255 (bench/fluorescence_sim_set.py writes them)."""
  rng = np.random.default_rng(seed)
  pairs = []
  for _ in range(fields):
    field = clean_field(rng, size)
    camera = dataclasses.replace(random_camera(rng), file_kind='stretched_uint8')
    # 8-bit exports come as their levels times 257 (acquisitions).
    noisy = (acquisitions(field, camera, rng, count=1)[0] // 257).astype(np.uint8)
    pairs.append((noisy, np.round(field * 255).astype(np.uint8)))
  return pairs
