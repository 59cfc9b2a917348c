"""Per-example training losses."""

import tensorflow as tf


def l2_loss(prediction, target):
  """Mean squared error per example.

  Args:
    prediction, target: [B, H, W, C] float32.

  Returns:
    [B] float32, the mean over H, W and C.
  """
  return tf.reduce_mean(tf.square(prediction - target), axis=[1, 2, 3])


LOSSES = {'l2': l2_loss}


def get_loss(name):
  """The per-example loss function called name; ValueError naming the choices."""
  if name not in LOSSES:
    raise ValueError(f'unknown loss {name!r}; choose one of {", ".join(sorted(LOSSES))}')
  return LOSSES[name]
