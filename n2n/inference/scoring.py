"""Scoring a denoiser on whole images with fixed, reproducible noise.

Shared by the periodic evaluation in training and by validate.py, so both
report the same number for the same checkpoint.
"""

import numpy as np
import tensorflow as tf

from n2n.evaluation import metrics
from n2n.model import unet as model_lib
from n2n.corruptions import noise as noise_lib


def pad_to_multiple(image, multiple=model_lib.SIZE_MULTIPLE):
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


def evaluate(denoise, images, noise, levels, seed, keep_images=0):
  """Denoises every image at every level and scores it.

  Args:
    denoise: fn([H, W, C] float32) -> [H, W, C] float32, e.g. make_denoiser(model).
    images: list of (name, [H, W, C] uint8).
    noise: corruption name.
    levels: iterable of levels in the corruption's user units.
    seed: int, seed of the fixed evaluation noise.
    keep_images: keep 'noisy' and 'denoised' arrays for the first this many
      images of each level (all with -1).

  Returns:
    dict level -> list of dicts per image: 'name', 'psnr' (of the output
    clipped and rounded to 8 bits), 'input_psnr' (of the unclipped noisy input
    the network sees), both in dB, and, when kept, 'noisy' and
    'denoised' [H, W, C] float32.
  """
  # Traced once: corruptions with loops (text) are slow op by op in eager mode.
  corrupt = tf.function(lambda clean, level, seed: noise_lib.corrupt(clean, noise, level, seed),
                        reduce_retracing=True)
  results = {}
  for level in levels:
    rows = []
    for index, (name, image) in enumerate(images):
      clean = tf.constant(image, tf.float32) / 255.0
      noisy = corrupt(clean, tf.constant(level, tf.float32),
                      noise_lib.evaluation_seed(seed, index, level))
      denoised = denoise(noisy.numpy())
      row = {
          'name': name,
          'psnr': float(metrics.psnr(denoised, clean)),
          'input_psnr': float(metrics.psnr(noisy, clean, quantize=False)),
      }
      if keep_images < 0 or index < keep_images:
        row['noisy'] = noisy.numpy()
        row['denoised'] = denoised
      rows.append(row)
    results[level] = rows
  return results


def mean_psnrs(rows):
  """(mean output PSNR, mean input PSNR) in dB over one level's rows."""
  return (float(np.mean([row['psnr'] for row in rows])),
          float(np.mean([row['input_psnr'] for row in rows])))


def format_level(level):
  """A level as a short string for tags and JSON keys: 25.0 -> '25', 0.5 -> '0.5'."""
  return f'{level:g}'
