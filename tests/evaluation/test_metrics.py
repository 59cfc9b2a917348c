import math

import numpy as np
import tensorflow as tf

from n2n.evaluation import metrics


def test_psnr_matches_hand_computed_value():
  clean = np.zeros([1, 4, 4, 3], np.float32)
  prediction = clean.copy()
  prediction[0, 0, 0, 0] = 10.0 / 255.0  # one error of 10 levels among 48 values
  expected = 10.0 * math.log10(1.0 / ((10.0 / 255.0) ** 2 / 48.0))
  assert abs(float(metrics.psnr(prediction, clean)[0]) - expected) < 1e-3


def test_psnr_clips_and_rounds_the_prediction_to_8_bits():
  clean = np.full([2, 2, 3], 1.0, np.float32)
  # 1.3 clips to 1.0 and 1.0 + 0.4/255 rounds to 1.0: both exact.
  assert np.isinf(float(metrics.psnr(clean + 0.3, clean)))
  assert np.isinf(float(metrics.psnr(clean - 0.4 / 255.0, clean)))


def test_unquantized_psnr_of_gaussian_noise_is_the_textbook_value():
  clean = np.full([256, 256, 3], 0.5, np.float32)
  noisy = clean + tf.random.stateless_normal(clean.shape, [0, 1]) * 25.0 / 255.0
  assert abs(float(metrics.psnr(noisy, clean, quantize=False)) - 20.17) < 0.05


def test_psnr_is_per_image_in_a_batch():
  clean = np.zeros([2, 4, 4, 1], np.float32)
  prediction = clean.copy()
  prediction[1] = 1.0
  values = metrics.psnr(prediction, clean).numpy()
  assert np.isinf(values[0]) and abs(values[1]) < 1e-6


def test_channel_mean_error_is_the_clipped_output_minus_the_reference_per_channel():
  reference = np.full((4, 4, 3), 0.5)
  output = reference + np.array([0.1, -0.2, 0.0])
  output[0, 0, 2] = 9.0  # clipped to 1.0: adds 0.5 / 16 to blue's mean
  np.testing.assert_allclose(metrics.channel_mean_error(output, reference),
                             [0.1, -0.2, 0.5 / 16])


def test_the_noise_explains_its_own_offset_and_four_standard_errors_of_its_mean():
  rng = np.random.default_rng(0)
  reference = np.full((100, 100, 2), 0.5)
  noise = rng.normal(0, 0.1, reference.shape)
  noisy = reference + noise + np.array([0.0, 0.05])  # the second channel offset, as clipping does
  explained = metrics.channel_mean_error_explained(noisy, reference)
  # 4 standard errors of a mean of 10,000 values of std 0.1: 0.004.
  expected = np.abs(noise.mean((0, 1)) + [0.0, 0.05]) + 4 * noise.std((0, 1)) / 100
  np.testing.assert_allclose(explained, expected)
  assert 0.003 < explained[0] < 0.006 and 0.05 < explained[1] < 0.06
