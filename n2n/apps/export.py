"""Exports a trained run as a TensorFlow SavedModel that runs without n2n
(export.py, n2n-export).

  python export.py --model=runs/demo --output=exported/demo

The SavedModel's serving_default signature takes float32 [N, H, W, C] of any
H and W, in [0, 1] (or raw pixels for a --normalization=percentile run, each
image mapped by its own percentiles inside), and returns the denoised batch; config.json and a
README.md describing the model are written beside it, with --tflite a
TensorFlow Lite model.tflite (same signature, builtin ops only), and with
--onnx a model.onnx (input `images`, output `denoised`; needs the optional
extras of requirements-export.txt).
"""


from absl import flags

from n2n import apps
from n2n import config as config_lib
from n2n import config_flags
from n2n.exports import export_run


def main(argv):
  with apps.configured(argv, config_lib.ExportConfig) as config:
    restored, written = export_run.export_run(config)
    print(f'exported {restored.prefix} (step {restored.step}) to {config.output}')
    for path in written:
      print(f'wrote {path}')


def run(argv=None):
  """The program: defines the flags and runs main."""
  config_flags.define_flags(config_lib.ExportConfig, flags.FLAGS)
  apps.start(main, __doc__, argv)
