import os

import numpy as np
import tensorflow as tf

from n2n.inference import scoring
from n2n.inference import summaries


def test_strip_is_noisy_denoised_clean_clipped():
  noisy = np.full((2, 3, 1), 1.7, np.float32)
  strip = summaries.comparison_strip(noisy, np.zeros((2, 3, 1)), np.full((2, 3, 1), 0.5))
  assert strip.shape == (2, 9, 1)
  np.testing.assert_array_equal(strip[0, :, 0], [1, 1, 1, 0, 0, 0, 0.5, 0.5, 0.5])


def test_evaluation_writes_psnr_per_level_and_strips_of_kept_images(tmp_path):
  image = np.full((4, 4, 3), 0.5, np.float32)
  scores = scoring.LevelScores('gaussian', 25.0, (
      scoring.ImageScore('a.png', 30.0, 20.0, noisy=image, denoised=image, clean=image),
      scoring.ImageScore('b.png', 32.0, 22.0)))
  writer = tf.summary.create_file_writer(str(tmp_path))
  summaries.write_evaluation(writer, 7, [scores])
  found = {}
  for path in tf.io.gfile.glob(os.path.join(str(tmp_path), 'events.out.tfevents.*')):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        found[value.tag] = (event.step, value)
  assert set(found) == {'psnr/gaussian_25', 'input_psnr/gaussian_25', 'gaussian_25/a.png'}
  step, value = found['psnr/gaussian_25']
  assert step == 7 and float(tf.make_ndarray(value.tensor)) == 31.0
