"""The evaluator's colour-shift lines: provisional notes before the run's last
step, warnings at it (issue 29: a warning at step 800 of 2400 read as a fault)."""

import logging

import keras
import numpy as np
import tensorflow as tf

from n2n.evaluation import evaluator as evaluator_lib
from tests.conftest import smooth_image


def _blue_shifting_model():
  """A 'denoiser' that returns its input with blue raised by 0.2."""
  images = keras.Input([None, None, 3])
  shift = tf.constant([0.0, 0.0, 0.2])
  return keras.Model(images, keras.layers.Lambda(lambda x: x + shift)(images))


def test_colour_shifts_are_notes_before_the_last_step_and_warnings_at_it(tmp_path, caplog):
  images = [('flat', smooth_image(np.random.default_rng(0), 64, 64))]
  evaluate = evaluator_lib.Evaluator(
      _blue_shifting_model(), images, 'gaussian', (10.0,), 0, 0,
      tf.summary.create_file_writer(str(tmp_path)), colour_shift_warning=0.03, final_step=10)
  with caplog.at_level(logging.INFO):
    evaluate(5)
  early = [record for record in caplog.records if 'denoised colours moved' in record.getMessage()]
  assert [record.levelno for record in early] == [logging.INFO]
  assert 'step 5 of 10: provisional' in early[0].getMessage()
  caplog.clear()
  with caplog.at_level(logging.INFO):
    evaluate(10)
  final = [record for record in caplog.records if 'denoised colours moved' in record.getMessage()]
  assert [record.levelno for record in final] == [logging.WARNING]
  assert 'provisional' not in final[0].getMessage()
