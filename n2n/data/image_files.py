"""Users' image files as they are: bit depth, channels and pages kept.

The training data path converts everything to 8-bit RGB (image_io); denoising
must hand back what it was given, so this module reads and writes arrays in
their own dtype: 8- and 16-bit PNG (through TensorFlow's codec: Pillow cannot
write 16-bit RGB), TIFF of any dtype and any number of pages (tifffile), and
JPEG, BMP, WebP, GIF through imageio.
"""

import io
import os

import imageio.v3 as iio
import numpy as np
import tensorflow as tf
import tifffile

from n2n import errors
from n2n.data import image_io

TIFF_SUFFIXES = ('.tif', '.tiff')
# Formats written back as they came; lossy ones become PNG unless asked.
LOSSLESS_FAMILIES = ('png', 'tiff', 'bmp')
OUTPUT_FORMATS = ('auto', 'png', 'tiff', 'jpeg')
_SUFFIX = {'png': '.png', 'tiff': '.tif', 'jpeg': '.jpg', 'bmp': '.bmp'}


def family_of(path):
  """'png', 'tiff', 'jpeg', 'bmp', 'webp', 'gif' or the bare suffix, from the file name."""
  suffix = os.path.splitext(path)[1].lower()
  return {'.tif': 'tiff', '.tiff': 'tiff', '.jpg': 'jpeg', '.jpeg': 'jpeg'}.get(
      suffix, suffix.lstrip('.'))


def read_pages(path):
  """Reads every page of an image file, keeping dtype and channels.

  Returns:
    list of [H, W] or [H, W, C] arrays (uint8, uint16, float32, ...); one per
    TIFF page, one for any other file.

  Raises:
    image_io.ImageDecodeError: not a readable image (one line, names the cause).
  """
  with tf.io.gfile.GFile(path, 'rb') as image_file:
    data = image_file.read()
  try:
    if family_of(path) == 'tiff':
      with tifffile.TiffFile(io.BytesIO(data)) as tiff:
        return [page.asarray() for page in tiff.pages]
    if data[:8] == b'\x89PNG\r\n\x1a\n':
      # Byte 24 of a PNG is its bit depth (in the IHDR chunk).
      dtype = tf.uint16 if len(data) > 24 and data[24] == 16 else tf.uint8
      page = tf.io.decode_png(data, channels=0, dtype=dtype).numpy()
      # Grayscale as [H, W], as every other reader returns it.
      return [page[:, :, 0] if page.shape[2] == 1 else page]
    meta = iio.immeta(data, index=0)
    mode = 'RGB' if meta.get('mode') in image_io.CONVERT_TO_RGB_MODES else None
    return [np.asarray(iio.imread(data, index=0, mode=mode))]
  except Exception as error:  # every reader raises its own types; all mean "not readable"
    message = errors.first_line(error)
    if 'Could not find a backend' in message:
      message = 'not an image format this tool can read'
    raise image_io.ImageDecodeError(message) from None


def split_alpha(array):
  """[H, W] or [H, W, C] -> (colour [H, W, 1 or 3], alpha [H, W, 1] or None)."""
  if array.ndim == 2:
    array = array[:, :, np.newaxis]
  if array.ndim != 3 or array.shape[2] not in (1, 2, 3, 4):
    raise image_io.ImageDecodeError(f'unsupported image array shape {array.shape}')
  if array.shape[2] in (2, 4):
    return array[:, :, :-1], array[:, :, -1:]
  return array, None


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


def output_family(input_path, requested='auto'):
  """The format written for an input: its own when lossless, else PNG, unless requested."""
  if requested != 'auto':
    return requested
  family = family_of(input_path)
  return family if family in LOSSLESS_FAMILIES else 'png'


def output_suffix(family):
  """'.png', '.tif', '.jpg' or '.bmp'."""
  return _SUFFIX[family]


def encode_pages(pages, family):
  """Encodes pages in a format family; bytes.

  Raises:
    ValueError: the format cannot hold these pages (naming why).
  """
  if family == 'tiff':
    buffer = io.BytesIO()
    with tifffile.TiffWriter(buffer) as writer:
      for page in pages:
        channels = page.shape[2] if page.ndim == 3 else 1
        photometric = 'rgb' if channels in (3, 4) else 'minisblack'
        extras = ['unassalpha'] if channels in (2, 4) else None
        writer.write(page, photometric=photometric, extrasamples=extras)
    return buffer.getvalue()
  if len(pages) != 1:
    raise ValueError(f'{family} holds one page, not {len(pages)}; use --format=tiff')
  page = pages[0]
  if family == 'png':
    if page.dtype not in (np.uint8, np.uint16):
      raise ValueError(f'PNG holds 8- or 16-bit integers, not {page.dtype}; use --format=tiff')
    if page.ndim == 2:
      page = page[:, :, np.newaxis]
    return tf.io.encode_png(page).numpy()
  if page.dtype != np.uint8:
    raise ValueError(f'{family} holds 8-bit images, not {page.dtype}; use --format=png or tiff')
  if family == 'jpeg':
    if page.ndim == 3 and page.shape[2] in (2, 4):
      raise ValueError('JPEG has no alpha channel; use --format=png')
    return iio.imwrite('<bytes>', page, extension='.jpg', quality=95)
  return iio.imwrite('<bytes>', page, extension=output_suffix(family))
