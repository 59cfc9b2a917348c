"""Adaptive gradient clipping: the pure rules, and the regression it exists for
(one Poisson batch at lambda near the paper's floor wrecked a run, issue 15)."""

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes import clipping
from n2n import config as config_lib
from n2n.training import gradient_clipping
from n2n.training import trainer as trainer_lib


def test_a_norm_above_the_threshold_is_scaled_to_it_and_others_are_kept():
  assert float(gradient_clipping.clip_factor(40.0, 2.0, 4.0)) == pytest.approx(8.0 / 40.0)
  assert float(gradient_clipping.clip_factor(7.9, 2.0, 4.0)) == 1.0
  assert float(gradient_clipping.clip_factor(1e6, 0.0, 4.0)) == 1.0  # no average yet
  assert float(gradient_clipping.clip_factor(1e6, 2.0, 0.0)) == 1.0  # clipping off
  assert float(gradient_clipping.clip_factor(float('inf'), 2.0, 4.0)) == 1.0
  assert float(gradient_clipping.clip_factor(float('nan'), 2.0, 4.0)) == 1.0


def test_the_average_starts_at_the_first_norm_and_an_outlier_moves_it_by_the_threshold_only():
  assert float(gradient_clipping.updated_average(0.0, 3.0, 4.0)) == pytest.approx(3.0)
  ordinary = float(gradient_clipping.updated_average(2.0, 3.0, 4.0))
  assert ordinary == pytest.approx(0.99 * 2.0 + 0.01 * 3.0)
  outlier = float(gradient_clipping.updated_average(2.0, 1e6, 4.0))
  assert outlier == pytest.approx(0.99 * 2.0 + 0.01 * 8.0)
  assert float(gradient_clipping.updated_average(2.0, float('inf'), 4.0)) == 2.0
  # Clipping off: the average follows every norm, for logging.
  assert float(gradient_clipping.updated_average(2.0, 1e6, 0.0)) == pytest.approx(
      0.99 * 2.0 + 0.01 * 1e6)


def test_two_replicas_agree_on_one_norm_the_root_sum_square_of_theirs():
  strategy = tf.distribute.MirroredStrategy(
      [device.name for device in tf.config.list_logical_devices('CPU')],
      cross_device_ops=tf.distribute.ReductionToOneDevice())

  def norm_of_replica():
    replica = tf.distribute.get_replica_context().replica_id_in_sync_group
    gradient = tf.fill([4], tf.cast(replica + 1, tf.float32))  # norms 2 and 4
    return gradient_clipping.replica_gradient_norm([gradient], loss_scale=tf.constant(2.0))

  norms = strategy.experimental_local_results(strategy.run(norm_of_replica))
  assert [float(norm) for norm in norms] == pytest.approx([np.sqrt(4 + 16) / 2] * 2)


@pytest.fixture(scope='module')
def poisson_run_with_one_outlier_batch():
  return clipping.outlier_batch_training()


# Bounds of the two runs below, from network seeds 1-6 (python -m bench.learning_test_spread
# --tests=outlier_batch; docs/bench/learning_test_spread_outlier_batch.json). With
# clipping the run ended 0.0-0.61 dB below its best PSNR, without it 1.04-5.03 dB: the
# bound between them separates the two at every seed (the test's seed 1: 0.0 and 5.03).
# Clipping does not stop the fall right after the outlier (2.7-7.2 dB with it, 7.2-12.8
# without); it stops the lasting damage. The bounds before (at most 0.5 dB below the best,
# 0.5 dB above step 60 at the end; 2 dB below the best without clipping) each failed at 1
# to 3 seeds, together at 4 of the six (2, 3, 5 and 6).
RECOVERED_WITHIN_DB = 0.8
MIN_FALL_WITHOUT_CLIPPING_DB = 5.0


@pytest.mark.slow
def test_one_outlier_batch_no_longer_wrecks_the_run(poisson_run_with_one_outlier_batch):
  psnrs, clipped = poisson_run_with_one_outlier_batch(4.0)
  assert clipping.below_best_at_end(psnrs) < RECOVERED_WITHIN_DB, psnrs
  assert 1 <= clipped <= 6


@pytest.mark.slow
def test_without_clipping_the_same_run_still_collapses(poisson_run_with_one_outlier_batch):
  # The behaviour before the fix: this is what makes the test above able to fail.
  psnrs, clipped = poisson_run_with_one_outlier_batch(0.0)
  assert clipped == 0
  assert clipping.fall_at_outlier(psnrs) > MIN_FALL_WITHOUT_CLIPPING_DB, psnrs
  assert clipping.below_best_at_end(psnrs) > RECOVERED_WITHIN_DB, psnrs


@pytest.mark.slow
def test_a_step_the_loss_scale_optimizer_skips_is_counted_and_left_out_of_the_mean_norm():
  # mixed_float16 starts with a loss scale of 2^15: a batch of values ~1e3
  # overflows float16 in the scaled gradients, which the optimizer skips.
  config = config_lib.train_config(train_data='unused', model_dir='', crop_size=32,
                                  batch_size=2, train_steps=10, seed=2)
  trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'mixed_float16')
  rng = np.random.default_rng(0)
  ordinary = rng.uniform(0, 1, (2, 32, 32, 3)).astype(np.float32)
  batches = np.stack([ordinary * 1000.0, ordinary, ordinary, ordinary])
  trainer.attach_dataset(tf.data.Dataset.from_tensor_slices(
      {'input': batches, 'target': batches}))
  stats = trainer.train(4)
  assert stats.skipped_steps >= 1
  assert np.isfinite(stats.mean_gradient_norm) and stats.mean_gradient_norm > 0
  assert np.isfinite(float(trainer.gradient_norm_average.numpy()))
