"""TensorBoard summaries of an evaluation: the same tags whoever evaluates
(training itself or validate.py --follow), so their curves are one."""

import numpy as np
import tensorflow as tf

EVAL_SUBDIR = 'eval'


def read_events(path):
  """Yields the tf.compat.v1.Event records of one event file (without the
  deprecated summary_iterator and its warning)."""
  for record in tf.data.TFRecordDataset(path):
    yield tf.compat.v1.Event.FromString(record.numpy())


def comparison_strip(noisy, denoised, clean):
  """noisy | denoised | clean side by side; [H, 3W, C] float32 in [0, 1]."""
  return np.concatenate([np.clip(image, 0.0, 1.0) for image in (noisy, denoised, clean)], axis=1)


def write_evaluation(writer, step, results):
  """Writes PSNR per level (psnr/TAG, input_psnr/TAG), for scenes the
  noisy-target error (noisy_target_mse/captures), and comparison images (TAG/NAME).

  Args:
    writer: tf.summary writer.
    step: global step of the scored checkpoint.
    results: list of scoring.LevelScores.
  """
  with writer.as_default(step=step):
    for scores in results:
      if scores.mean_psnr is not None:
        tf.summary.scalar(f'psnr/{scores.tag}', scores.mean_psnr)
        tf.summary.scalar(f'input_psnr/{scores.tag}', scores.mean_input_psnr)
      if scores.mean_noisy_target_mse is not None:
        tf.summary.scalar(f'noisy_target_mse/{scores.tag}', scores.mean_noisy_target_mse)
      for image in scores.images:
        if image.denoised is None:
          continue
        strip = comparison_strip(image.noisy, image.denoised, image.clean)
        tf.summary.image(f'{scores.tag}/{image.name}', strip[np.newaxis], max_outputs=1)
  writer.flush()
