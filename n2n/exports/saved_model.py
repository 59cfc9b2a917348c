"""A trained network as a SavedModel that runs without n2n (and in TF Serving).

The export's signature serving_default:
  images   [N, H, W, C] float32, any H and W: in [0, 1] (1.0 at the run's
           white level); with --normalization=percentile, raw pixels in the
           image's own units
  -> denoised [N, H, W, C] float32 on the input's scale (not clipped)
Reflect padding to a multiple of 32 and the crop back happen inside the
graph, and with --normalization=percentile the map of each image by its own
percentiles and back (n2n/data/normalization.py). Such an export also holds
the signature `network`: the same without the percentile map (values in, values
out), which denoise.py uses after mapping a whole image once, so its tiles share
one map. Beside it: the run's config.json and a README.md describing the model.
"""

import os

import keras
import tensorflow as tf

from n2n import run_dir
from n2n.data import normalization
from n2n.inference import exported_model
from n2n.inference import graph_padding
from n2n.model import unet


def input_signature(model):
  """[TensorSpec]: float32 [N, H, W, C] (a 3D network's [N, D, H, W, C]) named
  exported_model.INPUT_NAME, any N and spatial sizes."""
  shape = [None] * (len(model.input_shape) - 1) + [model.input_shape[-1]]
  return [tf.TensorSpec(shape, tf.float32, name=exported_model.INPUT_NAME)]


def serving_function(model, rule=None, multiples=None):
  """images [N, H, W, C] (volumes [N, D, H, W, C]) -> {exported_model.OUTPUT_NAME:
  denoised}: padding to `multiples` (serving.Serving's; None: 32 on every axis)
  and crop around the network, and, for a per-image rule (normalization.Rule),
  each image's percentile map before and its inverse after."""
  multiples = multiples or unet.SIZE_MULTIPLE

  def network(images):
    padded = graph_padding.reflect_pad_to_multiple(images, multiples)
    if images.shape.rank == 5:
      # The output has the input's channels: its shape is the input's.
      return tf.slice(model(padded, training=False), [0] * 5, tf.shape(images))
    height, width = tf.shape(images)[1], tf.shape(images)[2]
    return model(padded, training=False)[:, :height, :width, :]

  def serve(images):
    if rule is None or not rule.per_image:
      return {exported_model.OUTPUT_NAME: network(images)}
    values, offset, scale = normalization.normalize_tf(images, rule)
    return {exported_model.OUTPUT_NAME: network(values) * scale + offset}

  return serve

def export_model(model, serving, output_dir, step, validation_psnr=None):
  """Writes the SavedModel, config.json and README.md to output_dir.

  Args:
    model: float32 keras.Model from build_unet(upsampling='resize') with
      trained weights ('repeat' works too, but not for write_tflite).
    serving: serving.Serving of the run.
    output_dir: folder to write (created).
    step: training step of the weights.
    validation_psnr: list of evaluation.scoring.LevelScores (the run's logged
      scores, evaluation.summaries.logged_psnr), or None when unknown.
  """
  archive = keras.export.ExportArchive()
  archive.track(model)
  archive.add_endpoint(exported_model.SIGNATURE,
                       serving_function(model, serving.rule, serving.multiples),
                       input_signature=input_signature(model))
  if serving.rule.per_image:
    archive.add_endpoint(exported_model.NETWORK_SIGNATURE,
                         serving_function(model, None, serving.multiples),
                         input_signature=input_signature(model))
  tf.io.gfile.makedirs(output_dir)
  archive.write_out(output_dir, verbose=False)
  with tf.io.gfile.GFile(os.path.join(output_dir, run_dir.CONFIG_NAME), 'w') as config_file:
    config_file.write(serving.run_config.to_json())
  with tf.io.gfile.GFile(os.path.join(output_dir, 'README.md'), 'w') as readme:
    readme.write(describe(serving, step, validation_psnr))

def model_facts(serving, step, validation_psnr=None):
  """The bullet lines every export's page starts with: how the model was
  trained, its channels and pixel scale, step and validation PSNR."""
  run_config = serving.run_config
  channels = 'RGB' if serving.channels == 3 else 'grayscale'
  lines = [
      f'- trained as: {serving.trained_as}',
      f'- channels: {serving.channels} ({channels})',
      f'- pixel scale: {pixel_scale(serving)}',
      f'- training step: {step} of {run_config.optimisation.train_steps}; '
      f'data: {run_config.data.train_data}',
  ]
  for scores in validation_psnr or []:
    if scores.mean_psnr is None:
      continue
    lines.append(f'- validation PSNR at {scores.title}: '
                 f'{scores.mean_psnr:.2f} dB (noisy input {scores.mean_input_psnr:.2f} dB)')
  if not validation_psnr:
    lines.append('- validation PSNR: not known (the run had no validation data)')
  return lines


def pixel_scale(serving):
  """How the model's input and output relate to the data's pixels, one line."""
  rule, data_config = serving.rule, serving.run_config.data
  data = f'the training data were {data_config.dtype}'
  if rule.per_image:
    return (f'{data}; each image is mapped by its own percentiles '
            f'(--normalization=percentile): its {rule.low_percentile:g} and '
            f'{rule.high_percentile:g} percentiles, over all pixels and channels, go to 0 and 1, '
            'and the output goes back to the image\'s own scale. The graph does this: it takes '
            'and returns raw pixel values')
  return (f'{data} with white level {data_config.white_level:g} (--normalization=white_level); '
          f'the model takes and returns pixel / {data_config.white_level:g}')


def describe(serving, step, validation_psnr=None):
  """The export's README.md text."""
  batch = ('raw pixels (each image mapped by its own percentiles inside)'
           if serving.rule.per_image else 'in [0, 1]')
  lines = ['# n2n denoiser (TensorFlow SavedModel)', '']
  lines += model_facts(serving, step, validation_psnr)
  lines += ['', 'Use it without n2n:', '', '```python', 'import tensorflow as tf',
            "denoise = tf.saved_model.load('EXPORT_DIR').signatures['serving_default']",
            f"denoised = denoise(images=batch)['denoised']  # batch: [N, H, W, C] float32 {batch}",
            '```', '']
  return '\n'.join(lines)


def write_replacing(output_dir, write):
  """Runs write(folder) into a temporary folder beside output_dir, then puts it
  in output_dir's place: an export is never a mix of an old and a new one (a
  model.tflite left from an earlier --tflite beside a new SavedModel), and a
  failed export leaves the old one as it was.

  Args:
    output_dir: the export's folder; replaced whole if it exists.
    write: fn(folder) writing the complete export into folder.
  """
  base = output_dir.rstrip('/')
  temporary, previous = f'{base}.partial-{os.getpid()}', f'{base}.previous-{os.getpid()}'
  for leftover in (temporary, previous):
    if tf.io.gfile.exists(leftover):
      tf.io.gfile.rmtree(leftover)
  try:
    write(temporary)
  except BaseException:
    if tf.io.gfile.exists(temporary):
      tf.io.gfile.rmtree(temporary)
    raise
  if tf.io.gfile.exists(base):
    tf.io.gfile.rename(base, previous)
  tf.io.gfile.rename(temporary, base)
  if tf.io.gfile.exists(previous):
    tf.io.gfile.rmtree(previous)
