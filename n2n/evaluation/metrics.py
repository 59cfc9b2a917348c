"""Peak signal-to-noise ratio, measured the way the paper's official code does.

The prediction is clipped to [0, 1] and rounded to 8 bits (as it would be
saved), the error is averaged over all pixels and channels of one image, and
PSNR = 10 * log10(1 / MSE). Datasets report the mean of per-image PSNRs, not
the PSNR of the mean error. Beside it, the per-channel mean error: a colour
shift that a mean PSNR can hide (a model that turned greens olive, issue 20).
"""

import numpy as np
import tensorflow as tf


def quantize_to_uint8_range(image):
  """Clips to [0, 1] and rounds to the nearest of 256 levels; float32 out."""
  return tf.round(tf.clip_by_value(tf.cast(image, tf.float32), 0.0, 1.0) * 255.0) / 255.0


def quantize_to_step(image, step):
  """Clips to [0, 1] and rounds to multiples of step (no rounding when step is 0)."""
  image = tf.clip_by_value(tf.cast(image, tf.float32), 0.0, 1.0)
  return tf.round(image / step) * step if step else image


def psnr(prediction, clean, quantize=True, step=None):
  """Per-image PSNR in dB.

  Args:
    prediction: [B, H, W, C] or [H, W, C] float32, any range.
    clean: same shape float32 in [0, 1] (exact 8-bit values).
    quantize: clip the prediction to [0, 1] and round it to 8 bits first (the
      official convention for network outputs). False scores the values as
      they are, which is what a noisy network input (unclipped) really is.
    step: with quantize, round to multiples of this instead of 1/255 (the
      data's own bit depth, e.g. 1/65535; 0 clips only, for float data).

  Returns:
    [B] (or scalar) float32 PSNR in dB; +inf where the images are equal.
  """
  if quantize:
    prediction = (quantize_to_uint8_range(prediction) if step is None
                  else quantize_to_step(prediction, step))
  error = tf.cast(prediction, tf.float32) - tf.cast(clean, tf.float32)
  mse = tf.reduce_mean(tf.square(error), axis=[-3, -2, -1])
  return -10.0 * tf.math.log(mse) / tf.math.log(10.0)


# How many standard errors of the noise's mean a colour shift may reach before
# it is more than the noise explains (4: about 6e-5 of chance per channel).
COLOUR_SHIFT_STANDARD_ERRORS = 4.0


def channel_mean_error(prediction, reference):
  """Per-channel mean of the prediction (clipped to [0, 1]) minus the reference.

  A colour shift the network made: 0 for every channel when the output keeps
  the reference's colours on average.

  Args:
    prediction: [H, W, C] float, any range.
    reference: [H, W, C] float in [0, 1].

  Returns:
    [C] float64.
  """
  prediction = np.clip(np.asarray(prediction, np.float64), 0.0, 1.0)
  return (prediction - np.asarray(reference, np.float64)).mean(axis=(0, 1))


def channel_mean_error_explained(noisy, reference):
  """Per-channel colour shift the noise alone explains: the noisy input's own
  mean offset from the reference (non-zero for clipped captures, dropped or
  overwritten pixels), plus COLOUR_SHIFT_STANDARD_ERRORS standard errors of the
  noise's per-channel mean.

  Args:
    noisy: [H, W, C] float, the network's input.
    reference: [H, W, C] float in [0, 1].

  Returns:
    [C] float64, >= 0.
  """
  residual = np.asarray(noisy, np.float64) - np.asarray(reference, np.float64)
  pixels = residual.shape[0] * residual.shape[1]
  standard_error = residual.std(axis=(0, 1)) / np.sqrt(pixels)
  return np.abs(residual.mean(axis=(0, 1))) + COLOUR_SHIFT_STANDARD_ERRORS * standard_error
