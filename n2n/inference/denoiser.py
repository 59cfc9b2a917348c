"""Running a trained U-Net on whole images of any size."""

import numpy as np
import tensorflow as tf

from n2n.model import unet


def pad_to_multiple(image, multiple=unet.SIZE_MULTIPLE):
  """Reflect-pads the bottom and right edges up to a multiple of `multiple`.

  Args:
    image: [H, W, C] array, any size (even smaller than the padding).

  Returns:
    [H', W', C] array with H', W' the next multiples; crop [:H, :W] to undo.
  """
  height, width = image.shape[:2]
  pad_height = -height % multiple
  pad_width = -width % multiple
  # numpy's reflect mode handles pads larger than the image by reflecting again.
  return np.pad(image, ((0, pad_height), (0, pad_width), (0, 0)), mode='reflect')


def make_denoiser(model):
  """Wraps a Keras model as fn([H, W, C] float32 array) -> [H, W, C] float32 array."""
  channels = model.input_shape[-1]

  @tf.function(input_signature=[tf.TensorSpec([1, None, None, channels], tf.float32)],
               reduce_retracing=True)
  def run_model(batch):
    return model(batch, training=False)

  def denoise(noisy):
    height, width = noisy.shape[:2]
    padded = pad_to_multiple(noisy)
    output = run_model(tf.constant(padded[np.newaxis], tf.float32))
    return output.numpy()[0, :height, :width]

  return denoise
