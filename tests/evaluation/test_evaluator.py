"""The evaluator's colour-shift lines: provisional notes before the run's last
step, warnings at it (issue 29: a warning at step 800 of 2400 read as a fault)."""

from absl import logging as absl_logging
import keras
import numpy as np
import tensorflow as tf

from bench.recipes.images import smooth_image
from n2n.evaluation import evaluator as evaluator_lib


def _blue_shifting_model():
  """A 'denoiser' that returns its input with blue raised by 0.2."""
  images = keras.Input([None, None, 3])
  shift = tf.constant([0.0, 0.0, 0.2])
  return keras.Model(images, keras.layers.Lambda(lambda x: x + shift)(images))


def _recorded_lines(monkeypatch):
  """(level, line) of every absl info and warning call while the test runs. The
  calls themselves are recorded, not handler output, so no logging
  configuration an earlier test left in the process (absl's verbosity, a
  logger's level) can hide them."""
  lines = []
  for level in ('info', 'warning'):
    monkeypatch.setattr(absl_logging, level,
                        lambda message, *args, level=level: lines.append((level, message % args)))
  return lines


def test_colour_shifts_are_notes_before_the_last_step_and_warnings_at_it(tmp_path, monkeypatch):
  images = [('flat', smooth_image(np.random.default_rng(0), 64, 64))]
  evaluate = evaluator_lib.Evaluator(
      _blue_shifting_model(), images, 'gaussian', (10.0,), 0, 0,
      tf.summary.create_file_writer(str(tmp_path)), colour_shift_warning=0.03, final_step=10)
  lines = _recorded_lines(monkeypatch)
  evaluate(5)
  early = [(level, line) for level, line in lines if 'denoised colours moved' in line]
  assert [level for level, _ in early] == ['info']
  assert 'step 5 of 10: provisional' in early[0][1]
  lines.clear()
  evaluate(10)
  final = [(level, line) for level, line in lines if 'denoised colours moved' in line]
  assert [level for level, _ in final] == ['warning']
  assert 'provisional' not in final[0][1]
