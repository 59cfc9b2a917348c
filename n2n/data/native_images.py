"""Users' image files as they are: bit depth, channels and pages kept.

The training data path converts everything to 8-bit RGB (rgb_images); denoising
must hand back what it was given, so this module reads and writes arrays in
their own dtype: 8- and 16-bit PNG (through TensorFlow's codec: Pillow cannot
write 16-bit RGB), TIFF of any dtype and any number of pages (tifffile), and
JPEG, BMP, WebP, GIF through imageio.
"""

import dataclasses
import io
import os

import imageio.v3 as iio
import numpy as np
import tensorflow as tf
import tifffile

from n2n import errors
from n2n.data import rgb_images

# Formats written back as they came; lossy ones become PNG unless asked.
LOSSLESS_FAMILIES = ('png', 'tiff', 'bmp')
_SUFFIX = {'png': '.png', 'tiff': '.tif', 'jpeg': '.jpg', 'bmp': '.bmp'}


def family_of(path):
  """'png', 'tiff', 'jpeg', 'bmp', 'webp', 'gif' or the bare suffix, from the file name."""
  suffix = os.path.splitext(path)[1].lower()
  return {'.tif': 'tiff', '.tiff': 'tiff', '.jpg': 'jpeg', '.jpeg': 'jpeg'}.get(
      suffix, suffix.lstrip('.'))


# Larger images are refused before decoding: a header can claim any size, and
# decoding 100000x100000 pixels would take the machine's memory.
MAX_MEGAPIXELS = 1000


@dataclasses.dataclass(frozen=True)
class ImageFile:
  """An image file's pixels, as they are stored.

  Attributes:
    pages: list of [H, W] or [H, W, C] arrays (uint8, uint16, float32, ...);
      one per TIFF page (an ImageJ hyperstack's planes in file order), one for
      any other file. Planar TIFF pages come as [H, W, C] like the rest.
    colour_channels: per page, how many leading channels are colour (1 or 3),
      where the file says so (TIFF); the rest are alpha or extra samples. None:
      decided from the channel count (split_alpha).
    imagej_axes, imagej_shape: an ImageJ hyperstack's axes ('TZCYX') and shape,
      so it is written back as one; '' and () otherwise.
  """
  pages: list
  colour_channels: tuple = None
  imagej_axes: str = ''
  imagej_shape: tuple = ()


def _check_size(height, width):
  if height * width > MAX_MEGAPIXELS * 1e6:
    raise rgb_images.ImageDecodeError(
        f'{width}x{height} pixels ({height * width / 1e6:.0f} MP) is more than the '
        f'{MAX_MEGAPIXELS} MP this tool decodes')


def _read_tiff(data):
  with tifffile.TiffFile(io.BytesIO(data)) as tiff:
    for page in tiff.pages:
      _check_size(*page.shape[-3:-1] if page.axes.endswith('S') else page.shape[-2:])
    pages, colour = [], []
    for page in tiff.pages:
      array = page.asarray()
      if page.axes.startswith('S') and array.ndim == 3:  # planar: [C, H, W]
        array = np.moveaxis(array, 0, -1)
      pages.append(array)
      colour.append(3 if page.photometric == tifffile.PHOTOMETRIC.RGB else 1)
    series = tiff.series[0] if tiff.is_imagej and tiff.series else None
    if series is not None and len(series.axes.rstrip('S')) > 2:
      return ImageFile(pages, tuple(colour), series.axes, tuple(series.shape))
    return ImageFile(pages, tuple(colour))


def read_image(path):
  """Reads every page of an image file, keeping dtype, channels and layout.

  JPEGs (and other files with EXIF orientation) come upright.

  Returns:
    ImageFile.

  Raises:
    rgb_images.ImageDecodeError: not a readable image (one line, names the cause).
  """
  with tf.io.gfile.GFile(path, 'rb') as image_file:
    data = image_file.read()
  if not data:
    raise rgb_images.ImageDecodeError('empty file (0 bytes)')
  try:
    if family_of(path) == 'tiff':
      return _read_tiff(data)
    if data[:8] == b'\x89PNG\r\n\x1a\n':
      # The IHDR chunk: width and height at bytes 16-23, bit depth at byte 24.
      if len(data) > 24:
        _check_size(int.from_bytes(data[20:24], 'big'), int.from_bytes(data[16:20], 'big'))
      dtype = tf.uint16 if len(data) > 24 and data[24] == 16 else tf.uint8
      page = tf.io.decode_png(data, channels=0, dtype=dtype).numpy()
      # Grayscale as [H, W], as every other reader returns it.
      return ImageFile([page[:, :, 0] if page.shape[2] == 1 else page])
    meta = iio.immeta(data, index=0)
    mode = 'RGB' if meta.get('mode') in rgb_images.CONVERT_TO_RGB_MODES else None
    # rotate: apply EXIF orientation, so a phone photograph comes out upright.
    return ImageFile([np.asarray(iio.imread(data, index=0, mode=mode, rotate=True))])
  except rgb_images.ImageDecodeError:
    raise
  except Exception as error:  # every reader raises its own types; all mean "not readable"
    message = errors.first_line(error)
    if 'Could not find a backend' in message:
      message = 'not an image format this tool can read'
    raise rgb_images.ImageDecodeError(message) from None


def read_pages(path):
  """read_image(path).pages: every page of an image file, dtype and channels kept."""
  return read_image(path).pages


def split_alpha(array, colour_channels=None):
  """[H, W] or [H, W, C] -> (colour [H, W, 1 or 3], the rest [H, W, C'] or None).

  Args:
    colour_channels: how many leading channels are colour, where the file says
      (ImageFile.colour_channels); None: 2 is grey + alpha, 4 RGB + alpha,
      more RGB + extra samples.
  """
  if array.ndim == 2:
    array = array[:, :, np.newaxis]
  if array.ndim != 3 or array.shape[2] < 1 or min(array.shape[:2]) < 1:
    raise rgb_images.ImageDecodeError(f'unsupported image array shape {array.shape}')
  if colour_channels is None:
    colour_channels = 1 if array.shape[2] <= 2 else 3
  colour_channels = min(colour_channels, array.shape[2])
  if array.shape[2] == colour_channels:
    return array, None
  return array[:, :, :colour_channels], array[:, :, colour_channels:]


def to_unit_range(array, white_level=None):
  """Pixels to float32 with 1.0 at white: divided by white_level if given, else
  integers by their dtype's maximum and floats kept."""
  if array.dtype == bool:
    return array.astype(np.float32)
  if white_level:
    return array.astype(np.float32) / np.float32(white_level)
  if np.issubdtype(array.dtype, np.integer):
    return array.astype(np.float32) / np.iinfo(array.dtype).max
  return array.astype(np.float32)


def like_input(values, original, white_level=None):
  """Denoised [0, 1]-unit values back to the input's dtype and range.

  Integers are rounded and clipped to the dtype's range (to [0, white_level]
  if given, the data's own white); floats are clipped to the range the input
  itself spans.
  """
  if original.dtype == bool:
    return values >= 0.5
  # One float copy, then in place: images can be tens of megapixels.
  if np.issubdtype(original.dtype, np.integer):
    scaled = np.clip(values, 0.0, 1.0)
    scaled *= white_level or np.iinfo(original.dtype).max
    return np.round(scaled, out=scaled).astype(original.dtype)
  scaled = values * np.float32(white_level) if white_level else np.array(values)
  np.clip(scaled, original.min(), original.max(), out=scaled)
  return scaled.astype(original.dtype, copy=False)


def in_dtype_of(pixels, original):
  """float32 pixels in the original's own units -> the original's dtype:
  integers rounded and clipped to the dtype's range, floats clipped to the
  range the original spans."""
  if np.issubdtype(original.dtype, np.integer):
    limits = np.iinfo(original.dtype)
    clipped = np.clip(pixels, limits.min, limits.max)
    return np.round(clipped, out=clipped).astype(original.dtype)
  return np.clip(pixels, original.min(), original.max()).astype(original.dtype, copy=False)


def output_family(input_path, requested='auto'):
  """The format written for an input: its own when lossless, else PNG, unless requested."""
  if requested != 'auto':
    return requested
  family = family_of(input_path)
  return family if family in LOSSLESS_FAMILIES else 'png'


def output_suffix(family):
  """'.png', '.tif', '.jpg' or '.bmp'."""
  return _SUFFIX[family]


def encode_pages(pages, family, like=None, png_compression=-1):
  """Encodes pages in a format family; bytes.

  Args:
    like: the ImageFile the pages came from: TIFF keeps its colour channels
      and extra samples, and an ImageJ hyperstack stays one.
    png_compression: zlib level of PNG, 0-9 (-1: zlib's default, 6).

  Raises:
    ValueError: the format cannot hold these pages (naming why).
  """
  if family == 'tiff':
    buffer = io.BytesIO()
    if like is not None and like.imagej_axes:
      tifffile.imwrite(buffer, np.stack(pages).reshape(like.imagej_shape), imagej=True,
                       metadata={'axes': like.imagej_axes})
      return buffer.getvalue()
    colour = like.colour_channels if like is not None and like.colour_channels else None
    with tifffile.TiffWriter(buffer) as writer:
      for index, page in enumerate(pages):
        channels = page.shape[2] if page.ndim == 3 else 1
        colour_channels = colour[index] if colour else (3 if channels >= 3 else 1)
        photometric = 'rgb' if colour_channels == 3 and channels >= 3 else 'minisblack'
        extra_count = channels - (3 if photometric == 'rgb' else 1)
        # The first extra sample as alpha, any further ones of unspecified meaning.
        extras = (['unassalpha'] + ['unspecified'] * (extra_count - 1)) if extra_count > 0 \
            else None
        writer.write(page, photometric=photometric, extrasamples=extras,
                     planarconfig='contig' if page.ndim == 3 else None)
    return buffer.getvalue()
  if len(pages) != 1:
    raise ValueError(f'{family} holds one page, not {len(pages)}; use --format=tiff')
  page = pages[0]
  if family == 'png':
    if page.dtype not in (np.uint8, np.uint16):
      raise ValueError(f'PNG holds 8- or 16-bit integers, not {page.dtype}; use --format=tiff')
    if page.ndim == 2:
      page = page[:, :, np.newaxis]
    return tf.io.encode_png(page, compression=png_compression).numpy()
  if page.dtype != np.uint8:
    raise ValueError(f'{family} holds 8-bit images, not {page.dtype}; use --format=png or tiff')
  if family == 'jpeg':
    if page.ndim == 3 and page.shape[2] in (2, 4):
      raise ValueError('JPEG has no alpha channel; use --format=png')
    return iio.imwrite('<bytes>', page, extension='.jpg', quality=95)
  return iio.imwrite('<bytes>', page, extension=output_suffix(family))
