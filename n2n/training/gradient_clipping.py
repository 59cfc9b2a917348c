"""Adaptive gradient-norm clipping: a step's gradient may be at most `multiple`
times the running average of recent gradient norms.

Why a trainer needs it: one batch far outside the usual distribution (Poisson
noise at lambda near its floor of 0.001, where a pixel is 0 or hundreds) has a
gradient tens to a hundred thousand times the usual one. Adam divides by the
root of its second moment, so such a step moves every weight it dominates by
about the learning rate, coherently, for about ten steps; and the inflated
second moment then damps every ordinary update for about a thousand steps, so
the broken network cannot repair itself before the learning rate ramps down.
bench/collapse_trace.py measured this on the Poisson demo run
(docs/collapse_trace/): a batch at 1.4e5x the running norm raised the RMS of
Adam's second moment 3000x, the next updates were ~10x the usual size, 100 steps
later 20x below it, and validation PSNR fell from 26 to 4 dB. Scaling such a
gradient down to a few times the usual norm keeps its direction and bounds the
damage.

A fixed clip norm would need a value per corruption, loss and data set; the
running average needs none. It is an exponential moving average (decay 0.99,
about 100 steps) of the norms after clipping, so an outlier cannot raise its
own threshold, and it follows gradual changes (early training, the annealed
L0 loss's exponent) at up to (multiple - 1)% per step.
"""

import tensorflow as tf

AVERAGE_DECAY = 0.99


def replica_gradient_norm(gradients, loss_scale=None):
  """The gradient-norm statistic every replica agrees on; call in a replica context.

  With one replica it is the global norm of the gradient. With several it is
  the root-sum-square of each replica's own gradient norm, which needs one
  scalar all-reduce rather than a second all-reduce of every gradient; it has
  the same scale from step to step, which is all the running average needs.

  Args:
    gradients: list of this replica's gradient tensors (float32).
    loss_scale: scalar the loss was multiplied by (mixed_float16), or None.

  Returns:
    scalar float32 >= 0, inf or NaN when a gradient is not finite.
  """
  squared = tf.add_n([tf.reduce_sum(tf.square(tf.cast(gradient, tf.float32)))
                      for gradient in gradients])
  context = tf.distribute.get_replica_context()
  if context is not None and context.num_replicas_in_sync > 1:
    squared = context.all_reduce(tf.distribute.ReduceOp.SUM, squared)
  norm = tf.sqrt(squared)
  if loss_scale is not None:
    norm = norm / tf.cast(loss_scale, tf.float32)
  return norm


def clip_threshold(average, multiple):
  """The largest norm a step may keep: multiple * average; inf while the
  average is unset (0, before the first step) or clipping is off (multiple 0)."""
  average = tf.cast(average, tf.float32)
  enabled = tf.logical_and(average > 0.0, multiple > 0)
  return tf.where(enabled, multiple * average, float('inf'))


def clip_factor(norm, average, multiple):
  """What to multiply the gradients by: min(1, threshold / norm).

  A norm that is not finite gets 1: such gradients are for the loss-scale
  optimizer (which skips the step) or the finite-loss check to handle.

  Args:
    norm: scalar float32, replica_gradient_norm().
    average: scalar, the running average of clipped norms (0: unset).
    multiple: python float, the threshold in averages (0: never clip).

  Returns:
    scalar float32 in (0, 1].
  """
  threshold = clip_threshold(average, multiple)
  clip = tf.logical_and(tf.math.is_finite(norm), norm > threshold)
  return tf.where(clip, threshold / norm, 1.0)


def updated_average(average, norm, multiple):
  """The running average after a step of this norm.

  The first finite norm starts it; later ones enter clipped to the threshold,
  so an outlier moves it by at most (multiple - 1)%. Non-finite norms leave it.

  Args:
    average, norm, multiple: as in clip_factor.

  Returns:
    scalar float32 >= 0.
  """
  average = tf.cast(average, tf.float32)
  kept = tf.minimum(norm, clip_threshold(average, multiple))
  moved = tf.where(average > 0.0, AVERAGE_DECAY * average + (1.0 - AVERAGE_DECAY) * kept, norm)
  return tf.where(tf.math.is_finite(norm), moved, average)
