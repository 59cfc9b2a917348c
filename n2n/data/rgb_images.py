"""Images as 8-bit RGB arrays, what training datasets and the evaluation hold:
any common image file decoded to [H, W, 3] uint8, RGB <-> luma conversion
(numpy, and TensorFlow for tf.data), PNG encoding for the shards.

Real folders mix grayscale, RGBA, palette, CMYK and 16-bit files; every
reader of training or evaluation images goes through decode_image so they are
all treated alike. Users' files at their own bit depth: native_images.
"""

import imageio.v3 as iio
import numpy as np
import tensorflow as tf

from n2n import errors

# Colour spaces Pillow can convert to RGB itself but imageio returns unconverted.
CONVERT_TO_RGB_MODES = ('CMYK', 'YCbCr', 'LAB', 'HSV', '1')


class ImageDecodeError(ValueError):
  """The bytes are not an image imageio can read, or the image is broken."""


def to_rgb_uint8(array):
  """Converts a decoded image array to 8-bit RGB.

  Args:
    array: [H, W] or [H, W, C] with C in 1..4, of dtype uint8, uint16, bool,
      or float (assumed in [0, 1]). Alpha (C = 2 or 4) is dropped, one
      channel is repeated to three, 16-bit values are scaled by 255/65535.

  Returns:
    [H, W, 3] uint8.

  Raises:
    ImageDecodeError: for shapes or dtypes that are not an image.
  """
  if array.ndim == 2:
    array = array[:, :, np.newaxis]
  if array.ndim != 3 or array.shape[2] not in (1, 2, 3, 4) or min(array.shape[:2]) < 1:
    raise ImageDecodeError(f'unsupported image array shape {array.shape}')
  if array.shape[2] in (2, 4):
    array = array[:, :, :-1]
  if array.dtype == np.uint8:
    pass
  elif array.dtype == bool:
    array = array.astype(np.uint8) * 255
  elif array.dtype == np.uint16:
    array = np.round(array.astype(np.float32) * (255.0 / 65535.0)).astype(np.uint8)
  elif np.issubdtype(array.dtype, np.floating):
    array = np.round(np.clip(array, 0.0, 1.0) * 255.0).astype(np.uint8)
  else:
    raise ImageDecodeError(f'unsupported image dtype {array.dtype}')
  if array.shape[2] == 1:
    array = np.repeat(array, 3, axis=2)
  return np.ascontiguousarray(array)


def decode_image(data):
  """Decodes encoded image bytes (PNG, JPEG, BMP, GIF, TIFF, WebP, ...) to RGB.

  Args:
    data: bytes of one image file. For animations, the first frame is used.

  Returns:
    [H, W, 3] uint8.

  Raises:
    ImageDecodeError: the bytes are not a readable image (names the cause).
  """
  try:
    meta = iio.immeta(data, index=0)
    mode = meta.get('mode')
    if mode in CONVERT_TO_RGB_MODES:
      array = iio.imread(data, index=0, mode='RGB')
    else:
      array = iio.imread(data, index=0)
  except Exception as error:  # imageio raises many types; all mean "not readable".
    message = errors.first_line(error)
    if 'Could not find a backend' in message:
      message = 'not an image format imageio can read'
    raise ImageDecodeError(message) from None
  return to_rgb_uint8(np.asarray(array))


# Rec. 601 luma: how every RGB -> grayscale conversion in n2n weighs the channels.
LUMA_WEIGHTS = (0.299, 0.587, 0.114)


def convert_channels(values, channels):
  """[..., C] -> [..., channels], C and channels 1 or 3: the numpy conversion.

  RGB to one channel is luma (LUMA_WEIGHTS), one channel to RGB repeats it.
  Integer pixels stay integers (luma rounded); anything else becomes float32.
  """
  values = np.asarray(values)
  if values.shape[-1] == channels:
    return values if values.dtype.kind in 'iu' else values.astype(np.float32, copy=False)
  if channels == 1 and values.shape[-1] == 3:
    luma = values.astype(np.float32) @ np.array(LUMA_WEIGHTS, np.float32)[:, np.newaxis]
    return np.round(luma).astype(values.dtype) if values.dtype.kind in 'iu' else luma
  if channels == 3 and values.shape[-1] == 1:
    return np.repeat(values if values.dtype.kind in 'iu' else values.astype(np.float32),
                     3, axis=-1)
  raise ValueError(f'cannot convert {values.shape[-1]} channel(s) to {channels}')


def convert_channels_tf(values, channels):
  """convert_channels for tensors (tf.data pipelines): the same rule, in TensorFlow."""
  have = values.shape[-1]
  if have == channels:
    return values
  if channels == 1:
    luma = tf.cast(values, tf.float32) @ tf.constant(LUMA_WEIGHTS)[:, tf.newaxis]
    return tf.cast(tf.round(luma), values.dtype) if values.dtype.is_integer else luma
  return tf.repeat(values, channels, axis=-1)


def encode_png(image):
  """Encodes [H, W, 3] uint8 as PNG bytes (fast zlib level: shards are rewritten rarely)."""
  return iio.imwrite('<bytes>', image, extension='.png', compress_level=3)
