"""Every format denoise.py promises, round-tripped in its own dtype and layout."""

import imageio.v3 as iio
import numpy as np
import pytest
import tensorflow as tf

from n2n.data import native_images
from n2n.data import rgb_images

RNG = np.random.default_rng(0)


def _round_trip(tmp_path, name, pages, family):
  path = tmp_path / name
  path.write_bytes(native_images.encode_pages(pages, family))
  return native_images.read_pages(str(path))


@pytest.mark.parametrize('array', [
    RNG.integers(0, 256, (9, 7, 3), dtype=np.uint8),
    RNG.integers(0, 65536, (9, 7, 3), dtype=np.uint16),
    RNG.integers(0, 65536, (9, 7), dtype=np.uint16),
    RNG.integers(0, 256, (9, 7, 4), dtype=np.uint8),
    RNG.integers(0, 65536, (9, 7, 2), dtype=np.uint16),
])
def test_png_keeps_bit_depth_and_channels(tmp_path, array):
  (back,) = _round_trip(tmp_path, 'x.png', [array], 'png')
  np.testing.assert_array_equal(back.reshape(array.shape), array)
  assert back.dtype == array.dtype


def test_multi_page_tiff_of_mixed_dtypes_round_trips(tmp_path):
  pages = [RNG.uniform(-0.5, 3.0, (8, 6)).astype(np.float32),
           RNG.integers(0, 65536, (8, 6, 3), dtype=np.uint16),
           RNG.integers(0, 256, (8, 6, 4), dtype=np.uint8)]
  back = _round_trip(tmp_path, 'x.tif', pages, 'tiff')
  assert len(back) == 3
  for ours, theirs in zip(back, pages):
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_jpeg_and_bmp_are_8_bit(tmp_path):
  image = RNG.integers(0, 256, (16, 16, 3), dtype=np.uint8)
  (back,) = _round_trip(tmp_path, 'x.bmp', [image], 'bmp')
  np.testing.assert_array_equal(back, image)
  (jpeg,) = _round_trip(tmp_path, 'x.jpg', [image], 'jpeg')
  assert jpeg.shape == image.shape and jpeg.dtype == np.uint8
  with pytest.raises(ValueError, match='jpeg holds 8-bit images, not uint16'):
    native_images.encode_pages([image.astype(np.uint16)], 'jpeg')
  with pytest.raises(ValueError, match='png holds one page, not 2; use --format=tiff'):
    native_images.encode_pages([image, image], 'png')


def test_values_return_to_the_inputs_dtype_and_range():
  assert native_images.like_input(np.array([-0.1, 0.5, 1.2]), np.zeros(3, np.uint8)).tolist() == [
      0, 128, 255]
  assert native_images.like_input(np.array([0.5]), np.zeros(1, np.uint16)).tolist() == [32768]
  floats = np.array([0.2, 0.9], np.float32)
  np.testing.assert_allclose(native_images.like_input(np.array([0.0, 1.0]), floats), [0.2, 0.9])
  np.testing.assert_allclose(native_images.to_unit_range(np.array([65535], np.uint16)), [1.0])


def test_output_family_keeps_lossless_formats_and_turns_lossy_into_png():
  assert native_images.output_family('a/b.TIF') == 'tiff'
  family = native_images.output_family
  assert family('b.png') == 'png' and family('b.bmp') == 'bmp'
  assert family('b.jpeg') == 'png' and family('b.webp') == 'png'
  assert native_images.output_family('b.jpeg', 'jpeg') == 'jpeg'


def test_unreadable_bytes_are_one_line(tmp_path):
  (tmp_path / 'bad.png').write_bytes(b'\x89PNG\r\n\x1a\n broken')
  (tmp_path / 'notes.txt').write_text('hello')
  for name in ('bad.png', 'notes.txt'):
    with pytest.raises(rgb_images.ImageDecodeError) as raised:
      native_images.read_pages(str(tmp_path / name))
    assert '\n' not in str(raised.value)


def test_webp_reads_through_imageio(tmp_path):
  image = RNG.integers(0, 256, (16, 16, 3), dtype=np.uint8)
  iio.imwrite(tmp_path / 'x.webp', image, lossless=True)
  (back,) = native_images.read_pages(str(tmp_path / 'x.webp'))
  np.testing.assert_array_equal(back, image)


def test_png_compression_changes_the_size_and_never_the_pixels():
  rng = np.random.default_rng(0)
  page = (np.kron(rng.integers(0, 65535, (8, 8, 3)), np.ones((8, 8, 1)))
          + rng.integers(0, 50, (64, 64, 3))).astype(np.uint16)
  sizes = {}
  for level in (0, 2, 9):
    data = native_images.encode_pages([page], 'png', png_compression=level)
    sizes[level] = len(data)
    decoded = tf.io.decode_png(data, dtype=tf.uint16).numpy()
    np.testing.assert_array_equal(decoded, page)
  assert sizes[0] > sizes[2] >= sizes[9]
