"""Pixel-shuffle downsampling (Zhou et al., ECCV 2020 workshops; AP-BSN, Lee et
al., CVPR 2022): an image as the stride x stride sub-images of every stride-th
pixel, and back.

Noise that is correlated over a few pixels (demosaicing, sharpening, JPEG) is
nearly independent between pixels `stride` apart, so within one sub-image the
single-image methods' assumption holds again. The sub-images go into the batch
axis (not a mosaic of one image), so the U-Net sees each as an image of its
own, padded at its borders like any other.

Written with reshape and transpose only, which TFLite and ONNX convert as they
are, at any (dynamic) size.
"""

import tensorflow as tf


def shuffle_down(images, stride):
  """The stride x stride sub-images of a batch, stacked along the batch axis.

  Args:
    images: [B, H, W, C], H and W multiples of stride.
    stride: python int >= 1.

  Returns:
    [stride * stride * B, H / stride, W / stride, C], same dtype: item
    (dy * stride + dx) * B + b is images[b, dy::stride, dx::stride].
  """
  if stride == 1:
    return images
  shape = tf.shape(images)
  batch, height, width = shape[0], shape[1] // stride, shape[2] // stride
  channels = images.shape[-1] if images.shape[-1] is not None else shape[3]
  cells = tf.reshape(images, [batch, height, stride, width, stride, channels])
  cells = tf.transpose(cells, [2, 4, 0, 1, 3, 5])
  return tf.reshape(cells, [stride * stride * batch, height, width, channels])


def shuffle_up(sub_images, stride):
  """The inverse of shuffle_down: [stride^2 * B, h, w, C] -> [B, h * stride, w * stride, C]."""
  if stride == 1:
    return sub_images
  shape = tf.shape(sub_images)
  batch, height, width = shape[0] // (stride * stride), shape[1], shape[2]
  channels = sub_images.shape[-1] if sub_images.shape[-1] is not None else shape[3]
  cells = tf.reshape(sub_images, [stride, stride, batch, height, width, channels])
  cells = tf.transpose(cells, [2, 3, 0, 4, 1, 5])
  return tf.reshape(cells, [batch, height * stride, width * stride, channels])
