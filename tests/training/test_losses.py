import numpy as np
import pytest
import tensorflow as tf

from n2n.training import losses

RNG = np.random.default_rng(0)
PREDICTION = RNG.uniform(size=(3, 8, 8, 3)).astype(np.float32)
TARGET = RNG.uniform(size=(3, 8, 8, 3)).astype(np.float32)
MASK = (RNG.uniform(size=(3, 8, 8, 1)) > 0.5).astype(np.float32)


def test_l2_and_l1_match_numpy():
  np.testing.assert_allclose(losses.l2_loss(PREDICTION, TARGET),
                             ((PREDICTION - TARGET) ** 2).mean(axis=(1, 2, 3)), rtol=1e-5)
  np.testing.assert_allclose(losses.l1_loss(PREDICTION, TARGET),
                             np.abs(PREDICTION - TARGET).mean(axis=(1, 2, 3)), rtol=1e-5)


@pytest.mark.parametrize('fraction,gamma', [(0.0, 2.0), (0.5, 1.0), (1.0, 0.0), (1.5, 0.0)])
def test_annealed_l0_gamma_goes_linearly_from_2_to_0(fraction, gamma):
  assert float(losses.annealed_l0_gamma(fraction)) == pytest.approx(gamma)


@pytest.mark.parametrize('fraction', [0.0, 0.25, 0.9])
def test_annealed_l0_matches_numpy(fraction):
  gamma = 2.0 * (1.0 - fraction)
  expected = ((np.abs(PREDICTION - TARGET) + 1e-8) ** gamma).mean(axis=(1, 2, 3))
  np.testing.assert_allclose(losses.annealed_l0_loss(PREDICTION, TARGET, None, fraction),
                             expected, rtol=1e-4)


def test_annealed_l0_at_start_is_l2():
  np.testing.assert_allclose(losses.annealed_l0_loss(PREDICTION, TARGET, None, 0.0),
                             losses.l2_loss(PREDICTION, TARGET), rtol=1e-4)


def test_masked_l2_sums_over_kept_pixels_normalised_by_their_count():
  squared = (PREDICTION - TARGET) ** 2 * MASK
  expected = squared.sum(axis=(1, 2, 3)) / (MASK.sum(axis=(1, 2, 3)) * 3)
  np.testing.assert_allclose(losses.masked_l2_loss(PREDICTION, TARGET, MASK), expected, rtol=1e-5)
  # Dropped target pixels cannot change the loss.
  scrambled = np.where(MASK > 0, TARGET, 123.0).astype(np.float32)
  np.testing.assert_allclose(losses.masked_l2_loss(PREDICTION, scrambled, MASK), expected,
                             rtol=1e-5)


def test_masked_l2_with_everything_dropped_is_zero_not_nan():
  assert np.all(losses.masked_l2_loss(PREDICTION, TARGET, np.zeros_like(MASK)).numpy() == 0.0)


@pytest.mark.parametrize('name', sorted(losses.LOSSES))
def test_losses_under_a_strategy_average_by_the_global_batch(name):
  strategy = tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'])
  loss_fn = losses.get_loss(name)
  global_batch = 4
  prediction = RNG.uniform(size=(global_batch, 8, 8, 3)).astype(np.float32)
  target = RNG.uniform(size=(global_batch, 8, 8, 3)).astype(np.float32)
  mask = (RNG.uniform(size=(global_batch, 8, 8, 1)) > 0.3).astype(np.float32)
  dataset = tf.data.Dataset.from_tensors((prediction, target, mask)).unbatch().batch(global_batch)
  batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

  def replica_loss(p, t, m):
    return tf.reduce_sum(loss_fn(p, t, m, 0.3)) / global_batch

  per_replica = strategy.run(replica_loss, args=batch)
  distributed = float(strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None))
  single = float(tf.reduce_mean(loss_fn(prediction, target, mask, 0.3)))
  assert distributed == pytest.approx(single, rel=1e-5)
