"""Neighbor2Neighbor's tensors (n2n/methods/neighbor2neighbor.py): the pair of
neighbour sub-images, the paper's regulariser and the held-out loss."""

import numpy as np
import tensorflow as tf

from n2n.data import single_image_pairs
from n2n.methods import neighbor2neighbor
from n2n.pipelines import single_image


def regulariser_weight(gamma, step_fraction):
  """The regulariser's weight at a point of training, scalar float32: ramped
  linearly from 0 to gamma, as the official schedule (1 then 2 * epoch / epochs)."""
  return gamma * tf.clip_by_value(tf.cast(step_fraction, tf.float32), 0.0, 1.0)


def regulariser_term(prediction, target, full_prediction, positions, cells='xy'):
  """The paper's regulariser per example, [B] float32.

  || f(g1(y)) - g2(y) - (g1(f(y)) - g2(f(y))) ||^2, averaged over pixels and
  channels, where f(y) (full_prediction) carries no gradient.

  Args:
    prediction: f(g1(y)), [B, S/2, S/2, C] (volumes: [B, D, S/2, S/2, C]).
    target: g2(y), same shape.
    full_prediction: f(y), [B, S, S, C] ([B, D, S, S, C]); its gradient is
      stopped here.
    positions: the sampler's [B, S/2, S/2, 2] ([B, D, S/2, S/2, 2]) choice that
      made the pair ([B, D/2, S/2, S/2, 2] in 0..7 with cells='xyz').
    cells: the sampler's cells (single_image_pairs.subsample).
  """
  full_prediction = tf.stop_gradient(tf.cast(full_prediction, tf.float32))
  expected = (single_image_pairs.subsample(full_prediction, positions[..., 0], cells)
              - single_image_pairs.subsample(full_prediction, positions[..., 1], cells))
  return tf.reduce_mean(tf.square(prediction - target - expected),
                        axis=list(range(1, prediction.shape.rank)))


class Neighbor2NeighborPipeline(single_image.SingleImagePipeline):
  method = neighbor2neighbor.METHOD

  def elements(self, noisy, seed, config):
    return single_image_pairs.neighbor2neighbor_pair(noisy, seed,
                                                     self.method.settings(config).cells)

  def regulariser(self, config):
    gamma = self.method.settings(config).gamma
    cells = self.method.settings(config).cells

    def term(prediction, batch, predict_without_gradient, step_fraction):
      # The whole noisy image through the network: the regulariser's f(y).
      full_prediction = predict_without_gradient(batch['full'])
      return regulariser_weight(gamma, step_fraction) * regulariser_term(
          tf.cast(prediction, tf.float32), batch['target'], full_prediction, batch['positions'],
          cells)

    return term

  def held_out_view_loss(self, denoise, noisy, seed, config=None):
    """The reconstruction term on the whole image: mean squared error of
    f(g1(y)) against g2(y) (the regulariser compares the network with itself,
    not with the data, and is left out). An odd last row or column is dropped."""
    even = single_image_pairs.even_crop(tf.constant(noisy[np.newaxis], tf.float32))
    positions = single_image_pairs.neighbour_positions(1, even.shape[1], even.shape[2], seed)
    first = single_image_pairs.subsample(even, positions[..., 0])[0].numpy()
    second = single_image_pairs.subsample(even, positions[..., 1])[0].numpy()
    return float(np.mean(np.square(denoise(first) - second)))


PIPELINE = Neighbor2NeighborPipeline()
