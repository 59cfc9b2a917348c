"""Exports a trained run as a TensorFlow SavedModel that runs without n2n.

  python export.py --model=runs/demo --output=exported/demo

The SavedModel's serving_default signature takes float32 [N, H, W, C] of any
H and W, in [0, 1] (or raw pixels for a --normalization=percentile run, each
image mapped by its own percentiles inside), and returns the denoised batch; config.json and a
README.md describing the model are written beside it, with --tflite a
TensorFlow Lite model.tflite (same signature, builtin ops only), and with
--onnx a model.onnx (input `images`, output `denoised`; needs the optional
extras of requirements-export.txt).
"""

import os

from n2n import cli  # pylint: disable=g-bad-import-order  (quiets TF before it loads)
from absl import app
from absl import flags
import tensorflow as tf

from n2n import config as config_lib
from n2n import flags as n2n_flags
from n2n.data import normalization
from n2n.evaluation import eval_data
from n2n.evaluation import scoring
from n2n.evaluation import summaries
from n2n.inference import bioimageio_package
from n2n.inference import export
from n2n.inference import restore


def validation_sample(run_config):
  """The first validation image's noisy input on the network's scale (for synthetic
  noise corrupted at the first evaluation level, as in training's evaluation;
  for scenes the first capture), or None when the run's --val_data cannot be read."""
  try:
    data = eval_data.load_eval_data(run_config.val_data, run_config, run_config.noise, 1)
  except (ValueError, OSError, tf.errors.OpError):
    return None
  if run_config.noise == config_lib.NO_NOISE:
    return data[0].first
  noisy, _ = scoring.evaluation_input(scoring.make_corruption(run_config.noise), data[0][1], 0,
                                      run_config.eval_noise_levels[0], run_config.seed)
  return noisy


def write_checked_package(restored, folder, psnr, config):
  """The BioImage Model Zoo package, kept only if bioimageio.core's test passes."""
  path = bioimageio_package.write_package(
      restored.model, restored.run_config, folder, restored.step, psnr,
      sample=validation_sample(restored.run_config) if restored.run_config.val_data else None,
      authors=config.bioimageio_authors, license_id=config.bioimageio_license)
  passed, failure = bioimageio_package.test_package(path)
  if not passed:
    raise ValueError(f'the BioImage Model Zoo package failed its own test ({failure})')


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('export.py'):
    config = n2n_flags.config_from_flags(config_lib.ExportConfig)
    if config.onnx and not export.onnx_extras_installed():
      raise ValueError(export.ONNX_EXTRAS_MESSAGE)
    if config.bioimageio and not bioimageio_package.extras_installed():
      raise ValueError(bioimageio_package.EXTRAS_MESSAGE)
    if tf.io.gfile.exists(config.output) and tf.io.gfile.listdir(config.output) and (
        not config.overwrite):
      raise ValueError(f'--output={config.output!r} is not empty; pass --overwrite to replace it')
    restored = restore.restore_model(config.model, 'float32', flag_name='model',
                                     upsampling='resize')
    psnr = summaries.logged_psnr(restored.model_dir, restored.step)

    def write(folder):
      export.export_model(restored.model, restored.run_config, folder, restored.step, psnr)
      if config.tflite:
        export.write_tflite(folder)
      if config.onnx:
        export.write_onnx(restored.model, folder, normalization.rule_of(restored.run_config))
      if config.bioimageio:
        write_checked_package(restored, folder, psnr, config)

    export.write_replacing(config.output, write)
    print(f'exported {restored.prefix} (step {restored.step}) to {config.output}')
    for wanted, name in ((config.tflite, export.TFLITE_NAME), (config.onnx, export.ONNX_NAME),
                         (config.bioimageio, bioimageio_package.PACKAGE_NAME)):
      if wanted:
        print(f'wrote {os.path.join(config.output, name)}')


if __name__ == '__main__':
  n2n_flags.define_flags(config_lib.ExportConfig, flags.FLAGS)
  app.run(main)
