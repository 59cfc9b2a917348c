"""Exporting a run as one call (export.py, n2n.export): restore it and write the
SavedModel and every format asked for beside it, replacing the output folder
only when all are written."""

import os

import tensorflow as tf

from n2n import config as config_lib
from n2n.evaluation import eval_data
from n2n.evaluation import scoring
from n2n.evaluation import summaries
from n2n.exports import bioimageio_package
from n2n.exports import onnx_model
from n2n.exports import saved_model
from n2n.exports import tflite_model
from n2n.inference import restore


def validation_sample(run_config):
  """The first validation image's noisy input on the network's scale (for synthetic
  noise corrupted at the first evaluation level, as in training's evaluation;
  for scenes the first capture), or None when the run's --val_data cannot be read."""
  try:
    data = eval_data.load_eval_data(run_config.data.val_data, run_config,
                                    run_config.corruption.noise, 1)
  except (ValueError, OSError, tf.errors.OpError):
    return None
  if run_config.corruption.noise == config_lib.NO_NOISE:
    return data[0].first
  noisy, _ = scoring.evaluation_input(scoring.make_corruption(run_config.corruption.noise),
                                      data[0][1], 0, run_config.corruption.eval_noise_levels[0],
                                      run_config.run.seed)
  return noisy


def write_checked_package(restored, folder, psnr, config, onnx_path=None):
  """The BioImage Model Zoo package of the export in folder (its SavedModel, and
  onnx_path's ONNX where written: packed, not made again), kept only if
  bioimageio.core's test passes."""
  path = bioimageio_package.write_package(
      restored.model, restored.serving, folder, restored.step, psnr,
      sample=validation_sample(restored.run_config) if restored.run_config.data.val_data else None,
      authors=config.bioimageio_authors, license_id=config.bioimageio_license,
      saved_model_dir=folder, onnx_path=onnx_path)
  passed, failure = bioimageio_package.test_package(path)
  if not passed:
    raise ValueError(f'the BioImage Model Zoo package failed its own test ({failure})')


def check_request(config):
  """Raises ValueError, before any work, for extras that are not installed or
  an --output that holds something and may not be replaced."""
  if config.onnx and not onnx_model.onnx_extras_installed():
    raise ValueError(onnx_model.ONNX_EXTRAS_MESSAGE)
  if config.bioimageio and not bioimageio_package.extras_installed():
    raise ValueError(bioimageio_package.EXTRAS_MESSAGE)
  if tf.io.gfile.exists(config.output) and tf.io.gfile.listdir(config.output) and (
      not config.overwrite):
    raise ValueError(f'--output={config.output!r} is not empty; pass --overwrite to replace it')


def export_run(config):
  """Writes config.model's network to config.output as export.py does.

  Args:
    config: config.ExportConfig.

  Returns:
    (restore.RestoredModel exported, paths of the optional files written).

  Raises:
    ValueError: see check_request and restore.restore_model; a BioImage
      package that fails its test.
  """
  check_request(config)
  restored = restore.restore_model(config.model, 'float32', flag_name='model',
                                   upsampling='resize')
  serving = restored.serving
  if config.tflite and serving.spatial_dims == 3:
    raise ValueError(f'--tflite: --model={config.model} is a 3D run, and TensorFlow Lite has '
                     'no 3D pooling among its builtin ops; export it without --tflite '
                     '(SavedModel, --onnx, --bioimageio)')
  if config.bioimageio and serving.spatial_dims == 3 and serving.rule.per_image:
    # The package fixes z at the training crops' depth, so BMZ consumers feed
    # slabs, and each slab would be mapped by its own percentiles: steps between slabs.
    raise ValueError(f'--bioimageio: --model={config.model} is a 3D --normalization=percentile '
                     'run, which maps each whole volume by its percentiles, but BMZ consumers '
                     'feed it slabs of the training depth, each mapped apart; export it without '
                     '--bioimageio (the SavedModel and --onnx take whole volumes)')
  psnr = summaries.logged_psnr(restored.model_dir, restored.step)

  def write(folder):
    # Each format once: the package packs the SavedModel and ONNX written here.
    saved_model.export_model(restored.model, serving, folder, restored.step, psnr)
    if config.tflite:
      tflite_model.write_tflite(folder)
    onnx_path = (onnx_model.write_onnx(restored.model, folder, serving.rule, serving.multiples)
                 if config.onnx else None)
    if config.bioimageio:
      write_checked_package(restored, folder, psnr, config, onnx_path)

  saved_model.write_replacing(config.output, write)
  written = [os.path.join(config.output, name) for wanted, name in (
      (config.tflite, tflite_model.TFLITE_NAME), (config.onnx, onnx_model.ONNX_NAME),
      (config.bioimageio, bioimageio_package.PACKAGE_NAME)) if wanted]
  return restored, written
