"""Exports a trained run as a TensorFlow SavedModel that runs without n2n.

  python export.py --model=runs/demo --output=exported/demo

The SavedModel's serving_default signature takes float32 [N, H, W, C] in
[0, 1] of any H and W and returns the denoised batch; config.json and a
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
from n2n.evaluation import summaries
from n2n.inference import export
from n2n.inference import restore


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('export.py'):
    config = n2n_flags.config_from_flags(config_lib.ExportConfig)
    if config.onnx and not export.onnx_extras_installed():
      raise ValueError(export.ONNX_EXTRAS_MESSAGE)
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
        export.write_onnx(restored.model, folder)

    export.write_replacing(config.output, write)
    print(f'exported {restored.prefix} (step {restored.step}) to {config.output}')
    for wanted, name in ((config.tflite, export.TFLITE_NAME), (config.onnx, export.ONNX_NAME)):
      if wanted:
        print(f'wrote {os.path.join(config.output, name)}')


if __name__ == '__main__':
  n2n_flags.define_flags(config_lib.ExportConfig, flags.FLAGS)
  app.run(main)
