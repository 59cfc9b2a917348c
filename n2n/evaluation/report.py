"""validate.py's outputs: the printed table, metrics.json and the denoised PNGs."""

import json
import os

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import rgb_images
from n2n.evaluation import scoring


def _cell(value, width, digits=2):
  return f'{"-":>{width}}' if value is None else f'{value:{width}.{digits}f}'


def _colour_cell(errors):
  # The mean row leaves it out, so its last column stays the mean output PSNR.
  return '  ' + ' '.join(f'{error:+.3f}' for error in errors) if errors else ''


def format_table(results):
  """The per-image table and per-level means of scoring.LevelScores as text;
  for scenes also the noisy-target error ('-' where a scene has no reference),
  for single-image methods their held-out loss; per image the output's mean
  error per channel (a colour shift)."""
  lines = []
  for scores in results:
    scenes = scores.mean_noisy_target_mse is not None
    held_out = scores.mean_held_out_loss is not None
    width = max(12, max(len(image.name) for image in scores.images))
    lines.append(scores.title)
    lines.append(f'  {"scene" if scenes else "image":<{width}}  {"input PSNR":>10}  '
                 f'{"output PSNR":>11}' + ('  noisy-target MSE' if scenes else '')
                 + ('  held-out loss' if held_out else '') + '  mean error per channel')
    rows = [(image.name, image.input_psnr, image.psnr, image.noisy_target_mse,
             image.held_out_loss, image.colour_error) for image in scores.images]
    rows.append(('mean', scores.mean_input_psnr, scores.mean_psnr,
                 scores.mean_noisy_target_mse, scores.mean_held_out_loss, ()))
    for name, input_psnr, psnr, mse, loss, colour_error in rows:
      lines.append(f'  {name:<{width}}  {_cell(input_psnr, 10)}  {_cell(psnr, 11)}'
                   + (f'  {_cell(mse, 16, 6)}' if scenes else '')
                   + (f'  {_cell(loss, 13, 6)}' if held_out else '')
                   + _colour_cell(colour_error))
  return '\n'.join(lines)


def metrics_dict(checkpoint, step, results):
  """metrics.json content: per level the means and the per-image rows (dB)."""
  levels = {}
  for scores in results:
    entry = {
        'mean_psnr': scores.mean_psnr,
        'mean_input_psnr': scores.mean_input_psnr,
        'images': [{'name': image.name, 'psnr': image.psnr, 'input_psnr': image.input_psnr,
                    'colour_error': list(image.colour_error)}
                   for image in scores.images],
    }
    for name in ('noisy_target_mse', 'held_out_loss'):
      if getattr(scores, f'mean_{name}') is not None:
        entry[f'mean_{name}'] = getattr(scores, f'mean_{name}')
        for row, image in zip(entry['images'], scores.images):
          row[name] = getattr(image, name)
    key = (scoring.CAPTURES_TAG if scores.noise == config_lib.NO_NOISE
           else scoring.format_level(scores.level))
    levels[key] = entry
  noise = results[0].noise if results else ''
  return {'checkpoint': checkpoint, 'step': step, 'noise': noise, 'levels': levels}


def write_outputs(output_dir, checkpoint, step, results):
  """Writes denoised PNGs (output_dir/NOISE_LEVEL/NAME.png) and metrics.json."""
  tf.io.gfile.makedirs(output_dir)
  for scores in results:
    for image in scores.images:
      path = os.path.join(output_dir, scores.tag, os.path.splitext(image.name)[0] + '.png')
      tf.io.gfile.makedirs(os.path.dirname(path))
      denoised = np.round(np.clip(image.denoised, 0.0, 1.0) * 255.0).astype(np.uint8)
      if denoised.shape[-1] == 1:
        denoised = denoised[:, :, 0]
      with tf.io.gfile.GFile(path, 'wb') as png_file:
        png_file.write(rgb_images.encode_png(denoised))
  with tf.io.gfile.GFile(os.path.join(output_dir, 'metrics.json'), 'w') as metrics_file:
    json.dump(metrics_dict(checkpoint, step, results), metrics_file, indent=2)
