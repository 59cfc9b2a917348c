import math

import numpy as np
import tensorflow as tf

from n2n.inference import metrics


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
