"""validate.py's library: restore a checkpoint from data only, score, report."""

import json
import os

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.evaluation import scoring as evaluation
from n2n.data import image_io
from n2n.model import unet as model_lib
from n2n import run_dir


def restore_model(checkpoint, precision='float32'):
  """Rebuilds the network from config.json and loads the checkpoint's weights.

  Args:
    checkpoint: a model_dir (newest checkpoint) or a checkpoint prefix.
    precision: inference precision.

  Returns:
    (keras.Model, the run's config dict, the checkpoint prefix used).

  Raises:
    ValueError: missing/partial checkpoint, missing config.json, or weights
      that do not fit the configured network.
  """
  prefix, model_dir = run_dir.resolve_checkpoint(checkpoint)
  saved = run_dir.read_config(model_dir)
  if saved is None:
    raise ValueError(f'--checkpoint: no {run_dir.CONFIG_NAME} in {model_dir!r}; cannot rebuild '
                     'the network')
  model_config = config_lib.model_config_from_dict(saved)
  if model_config.architecture != model_lib.ARCHITECTURE:
    raise ValueError(f'--checkpoint: unknown architecture {model_config.architecture!r}')
  model = model_lib.build_unet(model_config.channels, precision)
  checkpoint = tf.train.Checkpoint(model=model)
  try:
    checkpoint.read(prefix).expect_partial().assert_existing_objects_matched()
  except (AssertionError, ValueError, tf.errors.OpError) as error:
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    # The half-restored checkpoint object would log ~80 "unrestored value" warnings
    # when it is garbage-collected, burying the one-line error.
    tf.get_logger().setLevel('ERROR')
    raise ValueError(f'--checkpoint: {prefix!r} does not fit the network in config.json '
                     f'({reason[:200]})') from None
  return model, saved, prefix


def format_table(noise, results):
  """The per-image table and per-level means as printable text."""
  lines = []
  for level, rows in results.items():
    width = max(12, max(len(row['name']) for row in rows))
    lines.append(f'{noise} {evaluation.format_level(level)}')
    lines.append(f'  {"image":<{width}}  {"input PSNR":>10}  {"output PSNR":>11}')
    for row in rows:
      lines.append(f'  {row["name"]:<{width}}  {row["input_psnr"]:10.2f}  {row["psnr"]:11.2f}')
    mean_psnr, mean_input_psnr = evaluation.mean_psnrs(rows)
    lines.append(f'  {"mean":<{width}}  {mean_input_psnr:10.2f}  {mean_psnr:11.2f}')
  return '\n'.join(lines)


def metrics_dict(checkpoint, noise, results):
  """metrics.json content: per level the means and the per-image rows (dB)."""
  levels = {}
  for level, rows in results.items():
    mean_psnr, mean_input_psnr = evaluation.mean_psnrs(rows)
    levels[evaluation.format_level(level)] = {
        'mean_psnr': mean_psnr,
        'mean_input_psnr': mean_input_psnr,
        'images': [{'name': row['name'], 'psnr': row['psnr'], 'input_psnr': row['input_psnr']}
                   for row in rows],
    }
  return {'checkpoint': checkpoint, 'noise': noise, 'levels': levels}


def write_outputs(output_dir, checkpoint, noise, results):
  """Writes denoised PNGs (output_dir/NOISE_LEVEL/NAME.png) and metrics.json."""
  tf.io.gfile.makedirs(output_dir)
  for level, rows in results.items():
    level_dir = os.path.join(output_dir, f'{noise}_{evaluation.format_level(level)}')
    for row in rows:
      path = os.path.join(level_dir, os.path.splitext(row['name'])[0] + '.png')
      tf.io.gfile.makedirs(os.path.dirname(path))
      denoised = np.round(np.clip(row['denoised'], 0.0, 1.0) * 255.0).astype(np.uint8)
      if denoised.shape[-1] == 1:
        denoised = denoised[:, :, 0]
      with tf.io.gfile.GFile(path, 'wb') as png_file:
        png_file.write(image_io.encode_png(denoised))
  with tf.io.gfile.GFile(os.path.join(output_dir, 'metrics.json'), 'w') as metrics_file:
    json.dump(metrics_dict(checkpoint, noise, results), metrics_file, indent=2)
