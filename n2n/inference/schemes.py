"""A trained network with its method's inference scheme, as one Keras model.

A method that trains on pixel-shuffled sub-images (n2n/methods/single_image.py)
denoises through the same rearrangement: the image is reflect-padded to a
multiple of stride x 32, split into its stride x stride sub-images of every
stride-th pixel (n2n/data/pixel_shuffle.py), each denoised, put back and
cropped. AP-BSN's random-replacing refinement (Lee et al., CVPR 2022) may
follow: passes of the network at stride 1 over the denoised image with a share
of its pixels put back to their noisy values, averaged. All of it may run over
the image's 8 flips and rotations, averaged (test-time augmentation).

Wrapping the network in the scheme once, here, is what makes validate.py,
denoise.py, --tta and every export (SavedModel, TFLite, ONNX, the BMZ package)
run it the same way: they all run this model. Its graph is reshapes,
transposes, gathers and a constant replacement pattern, which the converters
keep exact. The checkpoint holds the bare network; the wrapper has no weights
of its own.
"""

import keras
import numpy as np
import tensorflow as tf

from n2n.data import pixel_shuffle
from n2n.inference import graph_padding
from n2n.inference import whole_images
from n2n.model import unet

# The refinement's replacement pattern is one fixed random tile, repeated over
# the image: the same pixels in every run and every export (no random op in
# the graph), and a pattern too irregular for the network to see at 64 pixels.
REFINEMENT_TILE = 64
REFINEMENT_SEED = 0x5233


def refinement_pattern(passes, share):
  """[passes, REFINEMENT_TILE, REFINEMENT_TILE, 1] bool: True where a pass puts
  the noisy pixel back, about `share` of each tile."""
  rng = np.random.default_rng(REFINEMENT_SEED)
  return rng.random((passes, REFINEMENT_TILE, REFINEMENT_TILE, 1)) < share


def _quarter_turns(images, turns):
  """[N, H, W, C] turned by `turns` (0-3) quarter turns counter-clockwise, as
  np.rot90(images, turns, axes=(1, 2)), in plain reverses and transposes
  (tf.image.rot90 adds conditionals and asserts the converters need not see)."""
  if turns == 1:
    return tf.transpose(tf.reverse(images, [2]), [0, 2, 1, 3])
  if turns == 2:
    return tf.reverse(images, [1, 2])
  if turns == 3:
    return tf.reverse(tf.transpose(images, [0, 2, 1, 3]), [2])
  return images


class SchemeLayer(keras.layers.Layer):
  """[N, H, W, C] float32 (any H, W) -> the same: the network through an InferenceScheme."""

  def __init__(self, network, scheme, **kwargs):
    super().__init__(**kwargs)
    self.network = network
    self.scheme = scheme
    self._pattern = (refinement_pattern(scheme.refinement_passes, scheme.refinement_share)
                     if scheme.refinement_passes else None)

  def _denoise(self, images, stride):
    height, width = tf.shape(images)[1], tf.shape(images)[2]
    padded = graph_padding.reflect_pad_to_multiple(images, stride * unet.SIZE_MULTIPLE)
    sub_images = pixel_shuffle.shuffle_down(padded, stride)
    denoised = tf.cast(self.network(sub_images, training=False), images.dtype)
    return pixel_shuffle.shuffle_up(denoised, stride)[:, :height, :width, :]

  def call(self, images):
    if self.scheme.orientations == 1:
      return self._refined(images)
    # The 8 flips and rotations of the plane, those --tta takes, each turned back
    # before the mean.
    total = 0.0
    for turns, flip in whole_images.DIHEDRAL_TRANSFORMS:
      turned = _quarter_turns(images, turns)
      turned = tf.reverse(turned, [2]) if flip else turned
      output = self._refined(turned)
      output = tf.reverse(output, [2]) if flip else output
      total += _quarter_turns(output, -turns % 4)
    return total / len(whole_images.DIHEDRAL_TRANSFORMS)

  def _refined(self, images):
    denoised = self._denoise(images, self.scheme.stride)
    if self._pattern is None:
      return denoised
    shape = tf.shape(images)
    repeats = [(shape[1] + REFINEMENT_TILE - 1) // REFINEMENT_TILE,
               (shape[2] + REFINEMENT_TILE - 1) // REFINEMENT_TILE, 1]
    refined = []
    for pattern in self._pattern:
      noisy_back = tf.tile(tf.constant(pattern), repeats)[tf.newaxis, :shape[1], :shape[2]]
      refined.append(self._denoise(tf.where(noisy_back, images, denoised), 1))
    return tf.add_n(refined) / float(len(refined))

  def compute_output_shape(self, input_shape):
    return input_shape


def with_scheme(network, scheme):
  """network as it runs on whole images: itself for the plain scheme, else a
  keras.Model [N, H, W, C] float32 -> same around it (sharing its weights)."""
  if scheme.plain:
    return network
  images = keras.Input((None, None, network.input_shape[-1]), dtype='float32', name='images')
  return keras.Model(images, SchemeLayer(network, scheme, name='inference_scheme')(images),
                     name=f'{network.name}_with_scheme')

