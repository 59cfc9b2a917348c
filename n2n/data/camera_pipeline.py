"""A camera's processing, inverted and run forward: real-looking sRGB noise from
clean photographs.

Clean sRGB photographs are unprocessed to linear raw sensor values, as in
Brooks et al., "Unprocessing Images for Learned Raw Denoising" (CVPR 2019):
inverse tone curve, inverse gamma, sRGB -> camera colour matrix, inverse white
balance, then an RGGB Bayer mosaic. Optionally the lens
blurs the scene first (optics_blur). Each capture gets its own shot and read
noise on the raw values (variance shot * x + read), and is processed forward
as a camera does: bilinear demosaicing, white balance, camera -> sRGB colour
matrix, gamma, tone curve, optionally a mild unsharp mask, 8 bits, and JPEG.

Why: demosaicing spreads each raw pixel's noise over its neighbours, the
colour matrix mixes it between channels, sharpening and JPEG spread it
further, so the noise of the result is correlated over several pixels as in
real photographs, while the raw noise of two captures is independent (what
Noise2Noise on two captures needs). n2n's other corruptions are independent
from pixel to pixel.

Pure numpy; images are [H, W, 3] float64 in [0, 1] unless stated.
"""

import dataclasses
import io

import imageio.v3 as iio
import numpy as np

from n2n.data import gaussian_blur as gaussian_blur_lib

GAMMA = 2.2
# Brooks et al. 2019, section 3.2: shot-noise variance per unit signal drawn
# log-uniformly from [0.0001, 0.012]; log(read variance) on a line in
# log(shot) with Gaussian scatter. Their white-balance gains: red 1.9-2.4,
# blue 1.5-1.9.
PAPER_SHOT_RANGE = (0.0001, 0.012)
READ_LINE = (2.18, 1.2, 0.26)  # slope, intercept, standard deviation of log(read)
RED_GAIN_RANGE = (1.9, 2.4)
BLUE_GAIN_RANGE = (1.5, 1.9)
# The colour matrix's diagonal: how much of each camera channel is its own colour.
CAMERA_DIAGONAL_RANGE = (0.6, 0.85)


@dataclasses.dataclass(frozen=True)
class CameraSettings:
  """One simulated camera and exposure (the same for every capture of a scene).

  Attributes:
    rgb_to_camera: [3, 3] matrix, rows summing to 1 (white stays white), from
      linear sRGB to the sensor's colour channels; the forward pipeline applies
      its inverse.
    red_gain, blue_gain: white-balance gains (green is 1).
    shot: raw noise variance per unit of raw signal (photon shot noise).
    read: raw noise variance at zero signal (read noise).
    sharpen: unsharp-mask amount after the tone curve (0: none).
    jpeg_quality: 1-100, or 0 for no JPEG.
    chroma_blur: in-camera chroma noise reduction: the standard deviation in
      pixels of a Gaussian blur of the colour differences from the luma, after
      the tone curve and before sharpening (0: none).
    luma_blur: in-camera luma noise reduction: the same for the luma (0: none).
    optics_blur: the lens and anti-aliasing filter: the standard deviation in
      pixels of a Gaussian blur of the scene's linear camera values before the
      mosaic, in the reference and the captures alike (0: none). The demo's
      photographs are downscaled, sharper at the pixel than a camera's own
      pixels, and the sharpness of a scene decides how much of it a
      denoiser that guesses a pixel from its neighbours loses.
  """
  rgb_to_camera: np.ndarray
  red_gain: float
  blue_gain: float
  shot: float
  read: float
  sharpen: float = 0.0
  jpeg_quality: int = 0
  chroma_blur: float = 0.0
  luma_blur: float = 0.0
  optics_blur: float = 0.0


def random_settings(rng, shot_range=PAPER_SHOT_RANGE, sharpen=0.0, jpeg_quality=0,
                    chroma_blur=0.0, luma_blur=0.0, optics_blur=0.0):
  """A random camera as Brooks et al. draw one (a colour matrix of our own making:
  rows summing to 1 with a dominant diagonal, in place of their measured ones).

  Args:
    rng: numpy Generator.
    shot_range: (low, high) of the shot variance, drawn log-uniformly.
    sharpen, jpeg_quality, chroma_blur, luma_blur, optics_blur: see CameraSettings.
  """
  matrix = np.zeros((3, 3))
  for row in range(3):
    diagonal = rng.uniform(*CAMERA_DIAGONAL_RANGE)
    split = rng.uniform(0.2, 0.8)
    others = [column for column in range(3) if column != row]
    matrix[row, row] = diagonal
    matrix[row, others[0]] = (1 - diagonal) * split
    matrix[row, others[1]] = (1 - diagonal) * (1 - split)
  shot = float(np.exp(rng.uniform(np.log(shot_range[0]), np.log(shot_range[1]))))
  slope, intercept, spread = READ_LINE
  read = float(np.exp(slope * np.log(shot) + intercept + rng.normal(0.0, spread)))
  return CameraSettings(matrix, float(rng.uniform(*RED_GAIN_RANGE)),
                        float(rng.uniform(*BLUE_GAIN_RANGE)), shot, read, float(sharpen),
                        int(jpeg_quality), float(chroma_blur), float(luma_blur),
                        float(optics_blur))


def inverse_tone(srgb):
  """The inverse of the smoothstep tone curve 3x^2 - 2x^3 on [0, 1]."""
  srgb = np.clip(srgb, 0.0, 1.0)
  return 0.5 - np.sin(np.arcsin(1.0 - 2.0 * srgb) / 3.0)


def tone(linear):
  """The smoothstep tone curve 3x^2 - 2x^3 (a camera's S-curve)."""
  linear = np.clip(linear, 0.0, 1.0)
  return 3.0 * linear**2 - 2.0 * linear**3


def _white_balance_gains(settings):
  return np.array([settings.red_gain, 1.0, settings.blue_gain])


def unprocess(srgb, settings):
  """Clean sRGB -> linear raw camera values, before the mosaic.

  Args:
    srgb: [H, W, 3] in [0, 1].
    settings: CameraSettings.

  Returns:
    [H, W, 3] in [0, 1]: the sensor's colour channels at every pixel.
  """
  linear = np.maximum(inverse_tone(srgb), 1e-8)**GAMMA
  camera = linear @ settings.rgb_to_camera.T
  return np.clip(camera / _white_balance_gains(settings), 0.0, 1.0)


def process(camera, settings):
  """Linear camera values (demosaicked) -> sRGB, as a camera renders them:
  white balance, colour matrix, gamma, tone curve, unsharp mask.

  Args:
    camera: [H, W, 3], any range (noisy values are clipped as a sensor does).
    settings: CameraSettings.

  Returns:
    [H, W, 3] in [0, 1], float (no quantisation, no JPEG).
  """
  balanced = np.clip(camera * _white_balance_gains(settings), 0.0, 1.0)
  linear = np.clip(balanced @ np.linalg.inv(settings.rgb_to_camera).T, 0.0, 1.0)
  srgb = tone(np.maximum(linear, 1e-8)**(1.0 / GAMMA))
  if settings.chroma_blur or settings.luma_blur:
    srgb = np.clip(reduce_noise(srgb, settings.chroma_blur, settings.luma_blur), 0.0, 1.0)
  if settings.sharpen:
    srgb = np.clip(srgb + settings.sharpen * (srgb - _binomial_blur(srgb)), 0.0, 1.0)
  return srgb


# Rec. 601 luma weights: the luma a camera's YCbCr noise reduction keeps.
LUMA = np.array([0.299, 0.587, 0.114])


def gaussian_blur(image, sigma):
  """[H, W, ...] blurred along H and W by a Gaussian of standard deviation sigma
  pixels (gaussian_blur.blur: truncated at 3 sigma, mirrored borders); sigma > 0."""
  if not sigma > 0:
    raise ValueError(f'a Gaussian blur of standard deviation {sigma}: it must be positive')
  return gaussian_blur_lib.blur(image, (sigma, sigma))


def reduce_noise(srgb, chroma_sigma, luma_sigma=0.0):
  """A camera's noise reduction in luma and chroma: [H, W, 3] split into its luma
  (LUMA) and its colour differences from it, each blurred by gaussian_blur of its
  own standard deviation (0: kept), and put together again. It spreads each
  pixel's noise over several pixels, the colour part the farther."""
  luma = srgb @ LUMA
  chroma = srgb - luma[..., np.newaxis]
  if luma_sigma:
    luma = gaussian_blur(luma, luma_sigma)
  if chroma_sigma:
    chroma = gaussian_blur(chroma, chroma_sigma)
  return luma[..., np.newaxis] + chroma


def bayer_masks(height, width):
  """[H, W, 3] 0/1 masks of an RGGB mosaic: red at (even, even), green at (even,
  odd) and (odd, even), blue at (odd, odd)."""
  rows = np.arange(height)[:, None] % 2
  columns = np.arange(width)[None, :] % 2
  red = (rows == 0) & (columns == 0)
  blue = (rows == 1) & (columns == 1)
  return np.stack([red, ~(red | blue), blue], axis=-1).astype(np.float64)


def mosaic(camera):
  """[H, W, 3] -> [H, W] raw: each pixel keeps the channel of its Bayer site."""
  return np.sum(camera * bayer_masks(*camera.shape[:2]), axis=-1)


def _filter3(plane, kernel):
  """A 3x3 filter of [H, W] (or [H, W, C]) with mirrored borders ('reflect'
  keeps the Bayer parity: the pixel beyond the edge is the one two sites in)."""
  pad = ((1, 1), (1, 1)) + ((0, 0),) * (plane.ndim - 2)
  padded = np.pad(plane, pad, mode='reflect')
  height, width = plane.shape[:2]
  out = np.zeros_like(plane, dtype=np.float64)
  for dy in range(3):
    for dx in range(3):
      if kernel[dy][dx]:
        out += kernel[dy][dx] * padded[dy:dy + height, dx:dx + width]
  return out


def _binomial_blur(image):
  return _filter3(image, np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16.0)


def demosaic(raw):
  """Bilinear demosaicing of an RGGB [H, W] raw frame -> [H, W, 3] (H, W even).

  Each missing value is the mean of its nearest sites of that colour, so one
  raw pixel's noise reaches up to 2 pixels away in the result.
  """
  masks = bayer_masks(*raw.shape)
  red_blue = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 4.0
  green = np.array([[0, 1, 0], [1, 4, 1], [0, 1, 0]]) / 4.0
  return np.stack([_filter3(raw * masks[..., 0], red_blue),
                   _filter3(raw * masks[..., 1], green),
                   _filter3(raw * masks[..., 2], red_blue)], axis=-1)


def raw_noise(raw, settings, rng):
  """One capture's noise on a clean raw frame: Gaussian with variance
  shot * x + read (shot and read noise), then clipped to the sensor's [0, 1]."""
  sigma = np.sqrt(settings.shot * np.clip(raw, 0.0, 1.0) + settings.read)
  return np.clip(raw + sigma * rng.standard_normal(raw.shape), 0.0, 1.0)


def to_uint8(srgb):
  return np.round(np.clip(srgb, 0.0, 1.0) * 255.0).astype(np.uint8)


def jpeg_round_trip(image_uint8, quality):
  """[H, W, 3] uint8 encoded as a JPEG at quality (1-100) and decoded again."""
  buffer = io.BytesIO()
  iio.imwrite(buffer, image_uint8, extension='.jpg', quality=int(quality))
  return iio.imread(buffer.getvalue(), extension='.jpg')


def even_crop(srgb):
  """The image cut to even height and width (whole Bayer cells)."""
  height, width = srgb.shape[0] // 2 * 2, srgb.shape[1] // 2 * 2
  return srgb[:height, :width]


def captures_of(srgb, settings, count, rng):
  """`count` noisy captures of one clean photograph and its clean rendering.

  Args:
    srgb: [H, W, 3] clean sRGB in [0, 1], H and W even (even_crop).
    settings: CameraSettings of the scene.
    count: number of captures.
    rng: numpy Generator (each capture draws its own raw noise).

  Returns:
    (captures, reference): captures a list of [H, W, 3] uint8 (after JPEG when
    settings.jpeg_quality), reference the noise-free rendering through the same
    optics, mosaic, demosaicing, colour processing and sharpening ([H, W, 3] uint8, no
    JPEG): what a perfect denoiser of these captures can give back.
  """
  scene = unprocess(srgb, settings)
  if settings.optics_blur:
    scene = gaussian_blur(scene, settings.optics_blur)
  raw = mosaic(scene)
  reference = to_uint8(process(demosaic(raw), settings))
  captures = []
  for _ in range(count):
    noisy = to_uint8(process(demosaic(raw_noise(raw, settings, rng)), settings))
    if settings.jpeg_quality:
      noisy = jpeg_round_trip(noisy, settings.jpeg_quality)
    captures.append(noisy)
  return captures, reference
