"""validate.py's outputs: the printed table, metrics.json and the denoised PNGs."""

import json
import os

import numpy as np
import tensorflow as tf

from n2n.data import image_io
from n2n.inference import scoring


def format_table(results):
  """The per-image table and per-level means of scoring.LevelScores as text."""
  lines = []
  for scores in results:
    width = max(12, max(len(image.name) for image in scores.images))
    lines.append(f'{scores.noise} {scoring.format_level(scores.level)}')
    lines.append(f'  {"image":<{width}}  {"input PSNR":>10}  {"output PSNR":>11}')
    for image in scores.images:
      lines.append(f'  {image.name:<{width}}  {image.input_psnr:10.2f}  {image.psnr:11.2f}')
    lines.append(f'  {"mean":<{width}}  {scores.mean_input_psnr:10.2f}  {scores.mean_psnr:11.2f}')
  return '\n'.join(lines)


def metrics_dict(checkpoint, step, results):
  """metrics.json content: per level the means and the per-image rows (dB)."""
  levels = {}
  for scores in results:
    levels[scoring.format_level(scores.level)] = {
        'mean_psnr': scores.mean_psnr,
        'mean_input_psnr': scores.mean_input_psnr,
        'images': [{'name': image.name, 'psnr': image.psnr, 'input_psnr': image.input_psnr}
                   for image in scores.images],
    }
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
        png_file.write(image_io.encode_png(denoised))
  with tf.io.gfile.GFile(os.path.join(output_dir, 'metrics.json'), 'w') as metrics_file:
    json.dump(metrics_dict(checkpoint, step, results), metrics_file, indent=2)
