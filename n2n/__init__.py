"""n2n: Noise2Noise image denoisers in TensorFlow 2.

The Python front door (docs/python_api.md):

  import n2n
  denoiser = n2n.Denoiser.load('runs/demo')      # a model_dir, checkpoint or export
  clean = denoiser(noisy)                        # numpy in, same shape and dtype out
  n2n.train(n2n.train_config(train_data='records/train-*.tfrecord', model_dir='runs/mine'))
  n2n.export('runs/mine', 'exported/mine', onnx=True)

`import n2n` loads no TensorFlow and changes nothing in the process: each
name imports what it needs on first use. The programs (train.py, n2n-train,
...) live in n2n/apps.
"""

import importlib
import os

from n2n import autograph_files

__all__ = ['Denoiser', 'ExportConfig', 'TrainConfig', 'export', 'replace_settings', 'train',
           'train_config']

# Name -> module it is imported from on first use (PEP 562), so `import n2n` stays light.
_LAZY = {
    'Denoiser': 'n2n.inference.array_denoiser',
    'TrainConfig': 'n2n.config',
    # TrainConfig from train.py's flag names, nested settings included (blind_spot_fraction=...).
    'train_config': 'n2n.config',
    # A TrainConfig with some settings changed, named as flags (train_steps=10).
    'replace_settings': 'n2n.config',
    'ExportConfig': 'n2n.config',
}
# The names that run TensorFlow functions: they first keep AutoGraph's generated
# files out of the temp folder (n2n/autograph_files.py), as the programs do.
_RUN_TENSORFLOW = ('Denoiser',)


def __getattr__(name):
  if name not in _LAZY:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  if name in _RUN_TENSORFLOW:
    autograph_files.install()
  value = getattr(importlib.import_module(_LAZY[name]), name)
  globals()[name] = value
  return value


def __dir__():
  return sorted(set(globals()) | set(_LAZY))


def train(config, strategy=None):
  """Trains (or resumes) a run as train.py does: TFRecords built on first use
  from config.data.train_images_dir, then training and evaluation in config.run.model_dir.

  Args:
    config: n2n.TrainConfig.
    strategy: a tf.distribute.Strategy, or None for config.run.strategy's.

  Returns:
    n2n.training.train_lib.TrainedRun (model, step, last evaluation).

  Raises:
    ValueError: bad configuration or input, with a one-line message.
    n2n.training.preemption.TrainingInterrupted: stopped by SIGTERM/SIGINT
      after saving a checkpoint (train.py exits 128 + its signal number).
  """
  from n2n.training import launch  # pylint: disable=g-import-not-at-top
  autograph_files.install()
  return launch.train(config, strategy)


def export(model, output, tflite=False, onnx=False, bioimageio=False, overwrite=False):
  """Exports a run as export.py does: a SavedModel with config.json and
  README.md in output, and the formats asked for beside it.

  Args:
    model: a run's model_dir (newest checkpoint) or a checkpoint prefix.
    output: the export folder; one that holds files is replaced only with overwrite.
    tflite, onnx, bioimageio: also write model.tflite, model.onnx,
      bioimageio_model.zip (the last two need `pip install n2n[export]`).

  Returns:
    Paths written: output, then each optional file.

  Raises:
    ValueError: a bad setting, missing extras, or a non-empty output (nothing written).
  """
  from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
  from n2n.exports import export_run  # pylint: disable=g-import-not-at-top
  autograph_files.install()
  config = config_lib.ExportConfig(model=os.fspath(model), output=os.fspath(output),
                                   overwrite=overwrite, tflite=tflite, onnx=onnx,
                                   bioimageio=bioimageio)
  _, written = export_run.export_run(config)
  return [config.output, *written]
