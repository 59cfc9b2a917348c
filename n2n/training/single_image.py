"""The loss terms of training from single noisy images: Neighbor2Neighbor's
regulariser and its weight schedule (Huang et al., CVPR 2021). The pairs
themselves (sub-images, blind-spot masks) are made in the input pipeline,
n2n/data/single_image_pairs.py.
"""

import tensorflow as tf

from n2n.data import single_image_pairs


def neighbor2neighbor_regulariser(prediction, target, full_prediction, positions):
  """The paper's regulariser per example, [B] float32.

  || f(g1(y)) - g2(y) - (g1(f(y)) - g2(f(y))) ||^2, averaged over pixels and
  channels, where f(y) (full_prediction) carries no gradient.

  Args:
    prediction: f(g1(y)), [B, S/2, S/2, C].
    target: g2(y), same shape.
    full_prediction: f(y), [B, S, S, C]; its gradient is stopped here.
    positions: the sampler's [B, S/2, S/2, 2] choice that made the pair.
  """
  full_prediction = tf.stop_gradient(tf.cast(full_prediction, tf.float32))
  expected = (single_image_pairs.subsample(full_prediction, positions[..., 0])
              - single_image_pairs.subsample(full_prediction, positions[..., 1]))
  return tf.reduce_mean(tf.square(prediction - target - expected), axis=[1, 2, 3])


def regulariser_weight(gamma, step_fraction):
  """The regulariser's weight at a point of training: ramped linearly from 0 to
  gamma, as the official Neighbor2Neighbor schedule (1 then 2 * epoch / epochs)."""
  return gamma * tf.clip_by_value(tf.cast(step_fraction, tf.float32), 0.0, 1.0)
