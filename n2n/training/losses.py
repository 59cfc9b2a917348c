"""Per-example training losses, one per corruption family of the paper.

Every loss maps (prediction, target, target_mask, step_fraction) to a [B]
vector; the training step sums it and divides by the global batch size, so
the result is correct however the batch is split across replicas.
"""

import tensorflow as tf

# Keeps the annealed L0 loss differentiable where the error is exactly zero.
L0_EPSILON = 1e-8


def _per_example(tensor):
  """Every axis but the batch's: [B, H, W, C] images and [B, D, H, W, C] volumes alike."""
  return list(range(1, len(tensor.shape)))


def l2_loss(prediction, target, target_mask=None, step_fraction=None):
  """Mean squared error per example: [B, H, W, C] float32 pair -> [B] float32."""
  del target_mask, step_fraction
  return tf.reduce_mean(tf.square(prediction - target), axis=_per_example(prediction))


def l1_loss(prediction, target, target_mask=None, step_fraction=None):
  """Mean absolute error per example (median-seeking: removes text overlays)."""
  del target_mask, step_fraction
  return tf.reduce_mean(tf.abs(prediction - target), axis=_per_example(prediction))


def annealed_l0_gamma(step_fraction):
  """The annealed L0 exponent: 2 at the start of training, 0 at the end (linear)."""
  return 2.0 * (1.0 - tf.clip_by_value(tf.cast(step_fraction, tf.float32), 0.0, 1.0))


def annealed_l0_loss(prediction, target, target_mask=None, step_fraction=0.0):
  """(|prediction - target| + 1e-8) ** gamma, averaged per example (mode-seeking).

  Args:
    prediction, target: [B, H, W, C] float32.
    step_fraction: scalar, training progress in [0, 1]; gamma = 2 * (1 - it).
  """
  del target_mask
  gamma = annealed_l0_gamma(step_fraction)
  return tf.reduce_mean(tf.pow(tf.abs(prediction - target) + L0_EPSILON, gamma), axis=_per_example(prediction))


def masked_l2_loss(prediction, target, target_mask=None, step_fraction=None):
  """Squared error over the target's kept pixels only, normalised by their count.

  Args:
    prediction, target: [B, H, W, C] float32.
    target_mask: [B, H, W, 1] float32 in {0, 1}, 1 where the target pixel was
      kept (None: all kept).

  Returns:
    [B] float32: sum(mask * error^2) / (count(mask) * C) per example.
  """
  del step_fraction
  if target_mask is None:
    return l2_loss(prediction, target)
  channels = tf.cast(tf.shape(prediction)[-1], tf.float32)
  squared = tf.reduce_sum(target_mask * tf.square(prediction - target), axis=_per_example(prediction))
  kept = tf.reduce_sum(target_mask, axis=_per_example(target_mask)) * channels
  return squared / tf.maximum(kept, 1.0)


LOSSES = {
    'l2': l2_loss,
    'l1': l1_loss,
    'annealed_l0': annealed_l0_loss,
    'masked_l2': masked_l2_loss,
}


def get_loss(name):
  """The per-example loss function called name; ValueError naming the choices."""
  if name not in LOSSES:
    raise ValueError(f'unknown loss {name!r}; choose one of {", ".join(sorted(LOSSES))}')
  return LOSSES[name]
