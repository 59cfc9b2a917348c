"""Pixel-shuffle downsampling and its inverse, against numpy's strided slices."""

import numpy as np
import pytest
import tensorflow as tf

from n2n.data import pixel_shuffle


def _images(batch, height, width, channels):
  """Every element different (its own index), so any misplaced pixel shows."""
  return np.arange(batch * height * width * channels, dtype=np.float32).reshape(
      batch, height, width, channels)


@pytest.mark.parametrize('stride,batch,height,width,channels', [
    (1, 2, 6, 4, 3), (2, 2, 6, 4, 3), (3, 1, 9, 12, 1), (4, 3, 8, 16, 3), (5, 1, 10, 5, 2)])
def test_every_sub_image_is_the_strided_slice_of_its_image(stride, batch, height, width,
                                                           channels):
  images = _images(batch, height, width, channels)
  sub_images = pixel_shuffle.shuffle_down(tf.constant(images), stride).numpy()
  assert sub_images.shape == (stride * stride * batch, height // stride, width // stride,
                              channels)
  for row in range(stride):
    for column in range(stride):
      for item in range(batch):
        np.testing.assert_array_equal(sub_images[(row * stride + column) * batch + item],
                                      images[item, row::stride, column::stride])


@pytest.mark.parametrize('stride,height,width', [(2, 6, 4), (3, 9, 12), (4, 8, 16), (5, 10, 5)])
def test_shuffling_up_puts_every_pixel_back(stride, height, width):
  images = _images(2, height, width, 3)
  sub_images = pixel_shuffle.shuffle_down(tf.constant(images), stride)
  np.testing.assert_array_equal(pixel_shuffle.shuffle_up(sub_images, stride).numpy(), images)


def test_unknown_sizes_in_a_traced_function_shuffle_the_same():
  shuffle = tf.function(lambda images: pixel_shuffle.shuffle_up(
      pixel_shuffle.shuffle_down(images, 3) * 2.0, 3),
                        input_signature=[tf.TensorSpec([None, None, None, 2], tf.float32)])
  images = _images(1, 12, 6, 2)
  np.testing.assert_array_equal(shuffle(tf.constant(images)).numpy(), 2.0 * images)
