"""TensorBoard summaries and console lines for training and evaluation."""

import numpy as np
import tensorflow as tf

from n2n.evaluation import scoring as evaluation


def write_training_scalars(writer, step, loss, learning_rate, images_per_second, extra=None):
  """Writes one point of the training curves (plus any extra name -> value)."""
  with writer.as_default(step=step):
    tf.summary.scalar('loss', loss)
    tf.summary.scalar('learning_rate', learning_rate)
    tf.summary.scalar('images_per_second', images_per_second)
    for name, value in (extra or {}).items():
      tf.summary.scalar(name, value)


def comparison_strip(noisy, denoised, clean):
  """noisy | denoised | clean side by side; [H, 3W, C] float32 in [0, 1]."""
  return np.concatenate([np.clip(image, 0.0, 1.0) for image in (noisy, denoised, clean)], axis=1)


def write_evaluation(writer, step, noise, results, images):
  """Writes PSNR per level (one curve per level) and comparison images.

  Args:
    writer: tf.summary writer.
    step: global step.
    noise: corruption name.
    results: evaluation.evaluate output.
    images: the evaluated (name, uint8 image) list, for the clean references.
  """
  with writer.as_default(step=step):
    for level, rows in results.items():
      tag = f'{noise}_{evaluation.format_level(level)}'
      mean_psnr, mean_input_psnr = evaluation.mean_psnrs(rows)
      tf.summary.scalar(f'psnr/{tag}', mean_psnr)
      tf.summary.scalar(f'input_psnr/{tag}', mean_input_psnr)
      for index, row in enumerate(rows):
        if 'denoised' not in row:
          continue
        clean = images[index][1].astype(np.float32) / 255.0
        strip = comparison_strip(row['noisy'], row['denoised'], clean)
        tf.summary.image(f'{tag}/{row["name"]}', strip[np.newaxis], max_outputs=1)
  writer.flush()


def format_evaluation(noise, results):
  """One console line: PSNR per level, with the noisy input's PSNR."""
  parts = []
  for level, rows in results.items():
    mean_psnr, mean_input_psnr = evaluation.mean_psnrs(rows)
    parts.append(f'{noise} {evaluation.format_level(level)}: {mean_psnr:.2f} dB '
                 f'(input {mean_input_psnr:.2f} dB)')
  return '; '.join(parts)
