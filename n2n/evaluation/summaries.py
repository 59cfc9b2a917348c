"""TensorBoard summaries of an evaluation: the same tags whoever evaluates
(training itself or validate.py --follow), so their curves are one."""

import os

from absl import logging
import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir
from n2n.evaluation import scoring

EVAL_SUBDIR = 'eval'


def read_events(path):
  """Yields the tf.compat.v1.Event records of one event file (without the
  deprecated summary_iterator and its warning)."""
  for record in tf.data.TFRecordDataset(path):
    yield tf.compat.v1.Event.FromString(record.numpy())


def read_scalars(event_dir):
  """{tag: [(step, value), ...]} of every scalar in event_dir's event files, by
  step (a step logged twice keeps its last value)."""
  values = {}
  for path in sorted(tf.io.gfile.glob(os.path.join(event_dir, 'events.out.tfevents.*'))):
    for event in read_events(path):
      for value in event.summary.value:
        if value.HasField('tensor') and not value.tensor.string_val:
          values.setdefault(value.tag, {})[event.step] = float(tf.make_ndarray(value.tensor))
  return {tag: sorted(by_step.items()) for tag, by_step in values.items()}


# The colour-error panel: block means of (denoised - clean), amplified about
# mid-grey. Blocks average the noise the output still holds away, so what is
# left is the colour the network moved; x4 makes a 0.03 shift a visible tint.
COLOUR_ERROR_BLOCK = 8
COLOUR_ERROR_GAIN = 4.0


def colour_error_panel(denoised, clean):
  """Where and how the denoised colours moved: [H, W, C] float32 in [0, 1].

  Mid-grey (0.5) where each 8x8 block's mean colour matches the clean image;
  a tint towards the added colour (magenta where green was lost) elsewhere.
  """
  error = np.clip(denoised, 0.0, 1.0) - clean
  height, width, channels = error.shape
  block = COLOUR_ERROR_BLOCK
  padded = np.pad(error, [(0, -height % block), (0, -width % block), (0, 0)], mode='edge')
  blocks = padded.reshape(padded.shape[0] // block, block, padded.shape[1] // block, block,
                          channels).mean(axis=(1, 3))
  spread = np.repeat(np.repeat(blocks, block, axis=0), block, axis=1)[:height, :width]
  return np.clip(0.5 + COLOUR_ERROR_GAIN * spread, 0.0, 1.0).astype(np.float32)


def comparison_strip(noisy, denoised, clean):
  """noisy | denoised | clean | colour error side by side; [H, 4W, C] float32 in [0, 1].
  Without a clean image (clean None: a held-out noisy image on its own), noisy | denoised."""
  if clean is None:
    return np.concatenate([np.clip(image, 0.0, 1.0) for image in (noisy, denoised)], axis=1)
  panels = [np.clip(image, 0.0, 1.0) for image in (noisy, denoised, clean)]
  return np.concatenate(panels + [colour_error_panel(denoised, clean)], axis=1)


def write_warnings(writer, step, tag, warnings, note=''):
  """Logs each warning line and shows them together in TensorBoard's Text tab
  (warnings/TAG); nothing when there is none. With a note, the lines are
  logged as information followed by the note, not as warnings."""
  for warning in warnings:
    if note:
      logging.info('Step %d: %s (%s).', step, warning, note)
    else:
      logging.warning('Step %d: %s.', step, warning)
  if warnings:
    with writer.as_default(step=step):
      tf.summary.text(f'warnings/{tag}', '\n\n'.join(warnings))
    writer.flush()


def write_evaluation(writer, step, results):
  """Writes PSNR per level (psnr/TAG, input_psnr/TAG), for scenes the
  noisy-target error (noisy_target_mse/captures), for single-image methods
  their held-out loss (held_out_loss/TAG), the largest per-channel
  colour error of any image (colour_error/TAG, 0-1 scale), and comparison
  images (TAG/NAME: noisy | denoised | clean | colour error).

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
      if scores.mean_held_out_loss is not None:
        tf.summary.scalar(f'held_out_loss/{scores.tag}', scores.mean_held_out_loss)
      if any(image.colour_error for image in scores.images):
        tf.summary.scalar(f'colour_error/{scores.tag}', scores.largest_colour_error)
      for image in scores.images:
        if image.denoised is None:
          continue
        strip = comparison_strip(image.noisy, image.denoised, image.clean)
        tf.summary.image(f'{scores.tag}/{image.name}', strip[np.newaxis], max_outputs=1)
  writer.flush()


def logged_psnr(model_dir, step):
  """The eval PSNRs the run logged for `step`, as LevelScores without images; [] if none.

  model_dir may be a run's best/ folder: its run's logs are one level up.
  """
  found = {}
  event_files = tf.io.gfile.glob(os.path.join(model_dir, EVAL_SUBDIR,
                                              'events.out.tfevents.*'))
  folder = os.path.normpath(model_dir)
  if not event_files and os.path.basename(folder) == run_dir.BEST_SUBDIR:
    return logged_psnr(os.path.dirname(folder), step)
  for path in event_files:
    for event in read_events(path):
      if event.step != step:
        continue
      for value in event.summary.value:
        kind, _, tag = value.tag.partition('/')
        if kind in ('psnr', 'input_psnr') and ('_' in tag or tag == scoring.CAPTURES_TAG):
          found.setdefault(tag, {})[kind] = float(tf.make_ndarray(value.tensor))
  results = []
  for tag, values in sorted(found.items()):
    if {'psnr', 'input_psnr'} <= set(values):
      noise, level = ((config_lib.NO_NOISE, 0.0) if tag == scoring.CAPTURES_TAG
                      else tag.rsplit('_', 1))
      image = scoring.ImageScore('mean', values['psnr'], values['input_psnr'])
      results.append(scoring.LevelScores(noise, float(level), (image,)))
  return results
