import numpy as np
import pytest
import tensorflow as tf

from n2n.corruptions import noise


def _image(value=0.5, size=128):
  return tf.fill([size, size, 3], value)


def test_same_seed_same_noise_and_different_seed_different_noise():
  image = _image()
  for name in ('gaussian', 'poisson'):
    first = noise.corrupt(image, name, 25.0, tf.constant([1, 2]))
    again = noise.corrupt(image, name, 25.0, tf.constant([1, 2]))
    other = noise.corrupt(image, name, 25.0, tf.constant([1, 3]))
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert np.abs(first.numpy() - other.numpy()).mean() > 1e-3


def test_gaussian_std_matches_sigma_and_is_not_clipped():
  image = _image(0.02, size=256)
  noisy = noise.corrupt(image, 'gaussian', 25.0, tf.constant([0, 7])).numpy()
  residual = noisy - 0.02
  assert abs(residual.std() - 25.0 / 255.0) < 0.002
  assert abs(residual.mean()) < 0.002
  assert noisy.min() < 0.0  # Unclipped: N2N needs zero-mean corruption.


def test_standard_normal_matches_the_normal_distribution():
  samples = noise.standard_normal([3, 201, 101], tf.constant([4, 5])).numpy()
  assert samples.shape == (3, 201, 101)
  assert abs(samples.mean()) < 0.01 and abs(samples.std() - 1.0) < 0.01
  # Probability mass within 1, 2 and 3 standard deviations, and the kurtosis.
  for width, mass in ((1, 0.6827), (2, 0.9545), (3, 0.9973)):
    assert abs(np.mean(np.abs(samples) < width) - mass) < 0.005
  assert abs(np.mean(samples**4) - 3.0) < 0.1
  assert np.all(np.isfinite(samples))


def test_gaussian_zero_sigma_is_identity():
  image = tf.random.uniform([16, 16, 3], seed=1)
  np.testing.assert_allclose(noise.corrupt(image, 'gaussian', 0.0, tf.constant([0, 1])), image)


@pytest.mark.parametrize('lam,value', [(30.0, 0.5), (5.0, 0.2)])
def test_poisson_mean_and_variance(lam, value):
  noisy = noise.add_poisson_noise(_image(value, 256), lam, tf.constant([3, 4])).numpy()
  assert abs(noisy.mean() - value) < 0.01
  assert abs(noisy.var() - value / lam) / (value / lam) < 0.05
  # Values are counts / lambda.
  np.testing.assert_allclose(noisy * lam, np.round(noisy * lam), atol=1e-3)


def test_poisson_lambda_is_guarded_away_from_zero():
  noisy = noise.add_poisson_noise(_image(0.5, 8), 0.0, tf.constant([3, 4])).numpy()
  assert np.all(np.isfinite(noisy))


def test_sample_levels_are_uniform_in_range_and_seeded():
  levels = noise.sample_levels((10.0, 20.0), 400, tf.constant([0, 1])).numpy()
  assert levels.shape == (400,)
  assert levels.min() >= 10.0 and levels.max() <= 20.0
  assert abs(levels.mean() - 15.0) < 0.5
  np.testing.assert_array_equal(noise.sample_levels((10.0, 20.0), 400, tf.constant([0, 1])),
                                levels)
  assert not np.array_equal(noise.sample_levels((10.0, 20.0), 400, tf.constant([0, 2])), levels)


def test_evaluation_seed_is_a_pure_function_of_seed_index_and_level():
  base = noise.evaluation_seed(0, 3, 25.0).numpy()
  np.testing.assert_array_equal(base, noise.evaluation_seed(0, 3, 25.0).numpy())
  for other in (noise.evaluation_seed(1, 3, 25.0), noise.evaluation_seed(0, 4, 25.0),
                noise.evaluation_seed(0, 3, 50.0)):
    assert not np.array_equal(base, other.numpy())


def test_corruption_works_inside_parallel_dataset_map():
  dataset = tf.data.Dataset.range(8).map(
      lambda index: noise.corrupt(_image(0.5, 16), 'poisson', 30.0,
                                  tf.stack([tf.constant(0, tf.int64), index])),
      num_parallel_calls=4)
  outputs = list(dataset.as_numpy_iterator())
  assert len(outputs) == 8 and outputs[0].shape == (16, 16, 3)
  assert not np.array_equal(outputs[0], outputs[1])


def test_unknown_corruption_names_the_choices():
  with pytest.raises(ValueError,
                     match="unknown corruption 'speckle'.*bernoulli, gaussian, impulse, poisson, text"):
    noise.get_corruption('speckle')


def test_impulse_replaces_the_requested_fraction_with_uniform_colours():
  image = tf.fill([256, 256, 3], -1.0)
  noisy = noise.corrupt(image, 'impulse', 0.7, tf.constant([0, 1])).numpy()
  replaced = np.all(noisy != -1.0, axis=-1)
  assert abs(replaced.mean() - 0.7) < 0.01
  assert np.all(np.any(noisy == -1.0, axis=-1) == ~replaced)  # whole pixels, all channels
  values = noisy[replaced]
  assert values.min() >= 0.0 and values.max() <= 1.0 and abs(values.mean() - 0.5) < 0.01


def test_bernoulli_drops_the_requested_fraction_and_returns_the_mask():
  image = tf.random.uniform([256, 256, 3], 0.1, 1.0, seed=2)
  noisy, kept = noise.corrupt_with_mask(image, 'bernoulli', 0.5, tf.constant([0, 9]))
  noisy, kept = noisy.numpy(), kept.numpy()
  assert kept.shape == (256, 256, 1)
  assert abs(1.0 - kept.mean() - 0.5) < 0.01
  np.testing.assert_array_equal(noisy, image.numpy() * kept)


def test_masks_are_all_ones_for_corruptions_that_keep_every_pixel():
  _, mask = noise.corrupt_with_mask(tf.zeros([8, 8, 3]), 'gaussian', 25.0, tf.constant([0, 1]))
  np.testing.assert_array_equal(mask, np.ones([8, 8, 1]))


def test_volumes_get_each_voxel_corrupted_at_their_own_level_and_text_is_refused():
  # Two volumes [B=2, D=6, 40, 40, 1]: every plane must carry the noise of its
  # volume's level (a fold of depth into batch would give each plane a level of
  # its own, or planes past the first none).
  clean = tf.fill([2, 6, 40, 40, 1], 0.5)
  seed = tf.constant([4, 5])
  noisy, mask = noise.corrupt_batch(clean, 'gaussian', tf.constant([10.0, 40.0]), seed)
  residual = noisy.numpy() - 0.5
  assert noisy.shape == clean.shape and mask.shape == (2, 6, 40, 40, 1)
  for volume, sigma in enumerate((10.0, 40.0)):
    for plane in range(6):
      # 1600 voxels a plane: the sample std's error is 1.8% of sigma; 10% is 5.6 of it.
      assert abs(residual[volume, plane].std() - sigma / 255.0) < 0.1 * sigma / 255.0
  # Independent between planes: neighbouring planes' noise is uncorrelated.
  correlation = np.corrcoef(residual[1, :-1].ravel(), residual[1, 1:].ravel())[0, 1]
  assert abs(correlation) < 0.05
  dropped, kept = noise.corrupt_batch(clean, 'bernoulli', tf.constant([0.2, 0.7]), seed)
  for volume, fraction in enumerate((0.2, 0.7)):
    assert abs(1.0 - kept.numpy()[volume].mean() - fraction) < 0.03
  np.testing.assert_array_equal(dropped.numpy(), clean.numpy() * kept.numpy())
  counts, _ = noise.corrupt_batch(clean, 'poisson', tf.constant([30.0, 30.0]), seed)
  assert abs(counts.numpy().var() - 0.5 / 30.0) < 0.002  # Var[x] = x / lambda
  with pytest.raises(ValueError, match='--noise=text is drawn on 2D images; volumes take '
                                       'gaussian, poisson, impulse, bernoulli'):
    noise.corrupt_batch(clean, 'text', tf.constant([0.2, 0.2]), seed)
