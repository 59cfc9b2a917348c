"""Neighbor2Neighbor's own terms: the regulariser's value and stopped gradient,
its weight schedule. The Trainer's use of it: tests/training/test_single_image.py."""

import numpy as np
import tensorflow as tf

from n2n.data import single_image_pairs as pairs
from n2n.pipelines import neighbor2neighbor


def test_the_regulariser_passes_no_gradient_to_the_full_image_output():
  rng = np.random.default_rng(0)
  full = tf.Variable(rng.uniform(size=(2, 8, 8, 3)).astype(np.float32))
  prediction = tf.Variable(rng.uniform(size=(2, 4, 4, 3)).astype(np.float32))
  target = tf.constant(rng.uniform(size=(2, 4, 4, 3)).astype(np.float32))
  positions = pairs.neighbour_positions(2, 8, 8, tf.constant([1, 1]))
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(neighbor2neighbor.regulariser_term(prediction, target, full, positions))
  to_full, to_prediction = tape.gradient(loss, [full, prediction])
  assert to_full is None and np.abs(to_prediction.numpy()).sum() > 0
  # Its value: || f(g1 y) - g2 y - (g1 f(y) - g2 f(y)) ||^2 per example, the
  # sub-images taken here by explicit indexing of each 2x2 cell (0 1 / 2 3).
  cells = positions.numpy()
  rows, columns = np.mgrid[0:4, 0:4]
  sub = lambda which: np.stack([full.numpy()[b, 2 * rows + cells[b, ..., which] // 2,
                                             2 * columns + cells[b, ..., which] % 2]
                                for b in range(2)])
  expected = prediction.numpy() - target.numpy() - (sub(0) - sub(1))
  np.testing.assert_allclose(
      neighbor2neighbor.regulariser_term(prediction, target, full, positions),
      np.mean(np.square(expected), axis=(1, 2, 3)), rtol=1e-6)


def test_the_weight_ramps_linearly_to_gamma_and_stays_there():
  weights = [float(neighbor2neighbor.regulariser_weight(2.0, fraction))
             for fraction in (0.0, 0.25, 1.0, 1.5)]
  assert weights == [0.0, 0.5, 2.0, 2.0]
