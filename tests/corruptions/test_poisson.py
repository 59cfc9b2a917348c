import math

import numpy as np
import pytest
import tensorflow as tf

from n2n.corruptions import poisson


def _exact_pmf(rate, size):
  return np.array([math.exp(k * math.log(rate) - rate - math.lgamma(k + 1)) if rate > 0
                   else float(k == 0) for k in range(size)])


@pytest.mark.parametrize('rate', [0.0, 0.3, 1.0, 7.5, 25.0, 50.0, 100.0])
def test_table_rows_leave_less_than_2_to_the_minus_24_in_the_tail(rate):
  length = int(poisson.table_length(rate))
  # The last entry absorbs every count >= length - 1.
  tail = 1.0 - _exact_pmf(rate, length - 1).sum()
  assert tail < 2.0**-24


def test_cdf_tables_match_the_exact_cdf():
  rates = np.array([0.0, 0.02, 1.0, 3.3, 30.0, 99.0], np.float32)
  length = int(poisson.table_length(rates.max()))
  cdf = poisson.poisson_cdf_tables(tf.constant(rates), length).numpy()
  assert cdf.shape == (len(rates), length)
  for row, rate in zip(cdf, rates):
    exact = np.cumsum(_exact_pmf(float(rate), length))
    np.testing.assert_allclose(row[:-1], exact[:-1], rtol=0, atol=5e-7)
    # The last entry is 2 on top of the row's sum before it.
    np.testing.assert_allclose(row[-1], 2.0 + exact[-2], rtol=0, atol=1e-6)
    assert np.all(np.diff(row) >= 0)


def test_inversion_equals_a_full_search_of_each_row():
  rates = tf.constant([0.0, 0.5, 4.0, 20.0, 50.0, 90.0])
  length = poisson.table_length(tf.reduce_max(rates))
  cdf = poisson.poisson_cdf_tables(rates, length)
  rng = np.random.default_rng(0)
  uniforms = np.concatenate([
      rng.random(20000),
      1.0 - rng.random(2000) * 1e-4,  # deep in the upper tail: many steps past the guide
      np.arange(64) / 64.0,  # exactly on bucket edges
      [np.nextafter(np.float32(1), np.float32(0))],
  ]).astype(np.float32)
  rows = rng.integers(0, 6, len(uniforms)).astype(np.int32)
  counts = poisson.invert_cdf_tables(cdf, poisson.guide_table(cdf), tf.constant(rows),
                                     tf.constant(uniforms)).numpy()
  table = cdf.numpy()
  expected = [np.searchsorted(table[row], u, side='right') for row, u in zip(rows, uniforms)]
  np.testing.assert_array_equal(counts, expected)


@pytest.mark.parametrize('code, rate', [(128, 50.0), (255, 3.0), (17, 90.0)])
def test_8bit_samples_follow_the_poisson_pmf(code, rate):
  codes = tf.fill([2, 128, 128, 3], code)
  counts = poisson.sample_poisson_8bit(codes, tf.constant([rate, rate]),
                                       tf.constant([5, 6])).numpy().ravel()
  mean = rate * np.float32(code / 255.0)
  size = int(poisson.table_length(mean)) + 10
  observed = np.bincount(counts.astype(np.int64), minlength=size)[:size]
  expected = _exact_pmf(mean, size) * counts.size
  # Every count's frequency within 5 binomial standard deviations (+1 for empty bins).
  assert np.all(np.abs(observed - expected) <= 5 * np.sqrt(expected) + 1)
  assert abs(counts.mean() - mean) < 5 * math.sqrt(mean / counts.size)


def test_rate_zero_and_black_pixels_give_zero_counts():
  codes = tf.constant(np.array([[0, 255], [0, 0]], np.int32).reshape(2, 1, 2, 1))
  counts = poisson.sample_poisson_8bit(codes, tf.constant([10.0, 0.0]), tf.constant([0, 1]))
  assert counts.numpy()[0, 0, 0, 0] == 0 and np.all(counts.numpy()[1] == 0)


def test_8bit_images_use_the_tables_and_others_tensorflow():
  rng = np.random.default_rng(1)
  codes = rng.integers(0, 256, (2, 8, 8, 3)).astype(np.int32)
  codes[0, 0, 0, :2] = [0, 255]
  seed = tf.constant([2, 3])
  rates = tf.constant([30.0, 10.0])
  eight_bit = tf.constant(codes.astype(np.float32) / 255.0)
  by_reciprocal = tf.constant(codes.astype(np.float32) * np.float32(1 / 255))
  in_graph = tf.function(poisson.sample_poisson)
  for images in (eight_bit, by_reciprocal):
    for sample in (poisson.sample_poisson, in_graph):
      np.testing.assert_array_equal(sample(images, rates, seed),
                                    poisson.sample_poisson_8bit(tf.constant(codes), rates, seed))
  sixteen_bit = tf.constant((codes * 256 + 1).astype(np.float32) / 65535.0)
  high_rates = tf.constant([30.0, poisson.MAX_TABLE_RATE + 1])
  # On the 8-bit grid but outside [0, 1]: no table row fits 256 / 255.
  above_white = tf.constant((codes + 1).astype(np.float32) / 255.0)
  below_black = tf.constant((codes - 1).astype(np.float32) / 255.0)
  for images, level in ((sixteen_bit, rates), (eight_bit, high_rates), (above_white, rates),
                        (below_black, rates)):
    reference = tf.random.stateless_poisson(
        images.shape, seed, lam=tf.maximum(images, 0.0) * level[:, None, None, None],
        dtype=tf.float32)
    np.testing.assert_array_equal(poisson.sample_poisson(images, level, seed), reference)
