import imageio.v3 as iio
import numpy as np
import pytest
import tensorflow as tf

from n2n.data import rgb_images
from tests.conftest import pillow_bytes

RNG = np.random.default_rng(0)
RGB = RNG.integers(0, 256, size=(20, 30, 3), dtype=np.uint8)


def test_rgb_png_round_trips_exactly():
  np.testing.assert_array_equal(rgb_images.decode_image(rgb_images.encode_png(RGB)), RGB)


def test_grayscale_is_repeated_to_three_channels():
  gray = RGB[:, :, 0]
  decoded = rgb_images.decode_image(iio.imwrite('<bytes>', gray, extension='.png'))
  assert decoded.shape == (20, 30, 3)
  np.testing.assert_array_equal(decoded[:, :, 2], gray)


def test_alpha_is_dropped():
  rgba = np.concatenate([RGB, np.zeros((20, 30, 1), np.uint8)], axis=-1)
  np.testing.assert_array_equal(
      rgb_images.decode_image(iio.imwrite('<bytes>', rgba, extension='.png')), RGB)


def test_16_bit_is_scaled_to_8_bit():
  gray16 = np.full((8, 8), 65535, np.uint16)
  gray16[0, 0] = 257 * 100
  decoded = rgb_images.decode_image(iio.imwrite('<bytes>', gray16, extension='.png'))
  assert decoded.dtype == np.uint8 and decoded[1, 1, 0] == 255 and decoded[0, 0, 0] == 100
  rgb16 = tf.io.encode_png(tf.constant(RGB.astype(np.uint16) * 257)).numpy()
  np.testing.assert_array_equal(rgb_images.decode_image(rgb16), RGB)


@pytest.mark.parametrize('mode,fmt', [('P', 'PNG'), ('CMYK', 'JPEG'), ('LA', 'PNG'), ('P', 'GIF')])
def test_palette_cmyk_and_gray_alpha_become_rgb(mode, fmt):
  decoded = rgb_images.decode_image(pillow_bytes(RGB, mode, fmt))
  assert decoded.shape == (20, 30, 3) and decoded.dtype == np.uint8


@pytest.mark.parametrize('data,message', [
    (b'hello world', 'not an image format'),
    (rgb_images.encode_png(RGB)[:100], 'truncated'),
])
def test_unreadable_bytes_raise_a_one_line_error(data, message):
  with pytest.raises(rgb_images.ImageDecodeError, match=message) as error:
    rgb_images.decode_image(data)
  assert '\n' not in str(error.value)


def test_one_channel_conversion_per_backend_luma_and_repeat():
  gray = rgb_images.convert_channels(np.full((2, 2, 3), [255, 0, 0], np.uint8), 1)
  assert gray.shape == (2, 2, 1) and gray.dtype == np.uint8 and gray[0, 0, 0] == 76
  floats = np.full((2, 2, 3), [1.0, 0.5, 0.0], np.float32)
  luma = rgb_images.convert_channels(floats, 1)
  assert luma.dtype == np.float32 and luma[0, 0, 0] == pytest.approx(0.299 + 0.5 * 0.587)
  assert rgb_images.convert_channels(luma, 3).shape == (2, 2, 3)
  # The TensorFlow one gives the same values for both dtypes.
  for values in (np.full((2, 2, 3), [255, 0, 0], np.uint8), floats):
    np.testing.assert_array_equal(rgb_images.convert_channels_tf(tf.constant(values), 1).numpy(),
                                  rgb_images.convert_channels(values, 1))
  with pytest.raises(ValueError, match='cannot convert 4 channel'):
    rgb_images.convert_channels(np.zeros((1, 1, 4)), 1)
