"""Reflect padding inside a graph, for every exporter: the same pixels as
numpy's 'reflect' (n2n/inference/tiling.py), exact after conversion."""

import tensorflow as tf

from n2n.model import unet


def reflect_pad_to_multiple(images, multiple=unet.SIZE_MULTIPLE):
  """Reflect-pads the bottom and right of [N, H, W, C] up to multiples of `multiple`;
  volumes [N, D, H, W, C] along z, y and x, `multiple` then one int per axis
  (a 3D network pools z fewer times than y and x) or one for all.

  The same pixels as numpy's 'reflect' (tiling.pad_to_multiple), which pads an
  axis shorter than the padding in several rounds: that is the mirror-periodic
  extension (period 2 * (size - 1); a one-pixel axis is repeated). Written as
  one gather per axis with computed indices, no loop or branch in the graph,
  so converters (tf2onnx, TFLite) keep it exact for every size.
  """

  spatial = images.shape.rank - 2
  multiples = tuple(multiple) if isinstance(multiple, (tuple, list)) else (multiple,) * spatial

  def pad_axis(images, axis):
    multiple = multiples[axis - 1]
    size = tf.shape(images)[axis]
    # Non-negative operands only: ONNX's integer Div truncates towards zero, so
    # the ceiling as -(-size // multiple) came out one multiple short there (the
    # cause of the failing odd sizes), while TensorFlow floors.
    target = (size + multiple - 1) // multiple * multiple
    period = tf.maximum(2 * (size - 1), 1)
    position = tf.range(target) % period
    source = tf.where(position < size, position, period - position)
    return tf.gather(images, source, axis=axis)

  for axis in range(1, spatial + 1):
    images = pad_axis(images, axis)
  return images
