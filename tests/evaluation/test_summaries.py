import os

import numpy as np
import tensorflow as tf

from n2n.evaluation import scoring
from n2n.evaluation import summaries


def test_strip_is_noisy_denoised_clean_clipped_then_the_colour_error():
  noisy = np.full((2, 3, 1), 1.7, np.float32)
  strip = summaries.comparison_strip(noisy, np.zeros((2, 3, 1)), np.full((2, 3, 1), 0.5))
  assert strip.shape == (2, 12, 1)
  np.testing.assert_array_equal(strip[0, :9, 0], [1, 1, 1, 0, 0, 0, 0.5, 0.5, 0.5])
  # Denoised 0.5 below the clean image: the error panel is black (0.5 - 4 x 0.5, clipped).
  np.testing.assert_array_equal(strip[0, 9:, 0], [0, 0, 0])


def test_colour_error_panel_is_grey_where_colours_match_and_tinted_where_they_moved():
  rng = np.random.default_rng(0)
  clean = rng.uniform(0.2, 0.8, (32, 40, 3)).astype(np.float32)
  # Zero-mean residual noise averages out over the 8x8 blocks: near mid-grey.
  still_noisy = clean + rng.normal(0, 0.02, clean.shape).astype(np.float32)
  kept = summaries.colour_error_panel(still_noisy, clean)
  assert kept.shape == clean.shape and np.abs(kept - 0.5).max() < 0.06
  # Greens turned olive in the left half: green lost, red gained -> a magenta tint there.
  olive = clean.copy()
  olive[:, :20] += np.array([0.1, -0.15, 0.0], np.float32)
  moved = summaries.colour_error_panel(olive, clean)
  np.testing.assert_allclose(moved[:, :16].reshape(-1, 3).mean(0), [0.9, 0.0, 0.5], atol=1e-5)
  np.testing.assert_allclose(moved[:, 24:], 0.5, atol=1e-5)


def test_evaluation_writes_psnr_per_level_and_strips_of_kept_images(tmp_path):
  image = np.full((4, 4, 3), 0.5, np.float32)
  scores = scoring.LevelScores('gaussian', 25.0, (
      scoring.ImageScore('a.png', 30.0, 20.0, noisy=image, denoised=image, clean=image,
                         colour_error=(0.01, -0.04, 0.0)),
      scoring.ImageScore('b.png', 32.0, 22.0, colour_error=(0.02, 0.0, 0.0))))
  writer = tf.summary.create_file_writer(str(tmp_path))
  summaries.write_evaluation(writer, 7, [scores])
  found = {}
  for path in tf.io.gfile.glob(os.path.join(str(tmp_path), 'events.out.tfevents.*')):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        found[value.tag] = (event.step, value)
  assert set(found) == {'psnr/gaussian_25', 'input_psnr/gaussian_25', 'colour_error/gaussian_25',
                        'gaussian_25/a.png'}
  step, value = found['psnr/gaussian_25']
  assert step == 7 and float(tf.make_ndarray(value.tensor)) == 31.0
  # The largest channel error of any image, whatever its sign.
  assert abs(float(tf.make_ndarray(found['colour_error/gaussian_25'][1].tensor)) - 0.04) < 1e-7
