"""n2n: Noise2Noise image denoisers in TensorFlow 2.

The Python front door (docs/python_api.md):

  import n2n
  denoiser = n2n.Denoiser.load('runs/demo')      # a model_dir, checkpoint or export
  clean = denoiser(noisy)                        # numpy in, same shape and dtype out
  n2n.train(n2n.train_config(train_data='records/train-*.tfrecord', model_dir='runs/mine'))
  n2n.train(n2n.train_config(model_dir='runs/cells', noise='none'), captures=[(a1, a2)])
  denoised = n2n.Denoiser.load('runs/cells3d')(volume, axes='ZYX')
  print(n2n.diagnose([a, b]))                    # what diagnose.py prints
  n2n.export('runs/mine', 'exported/mine', onnx=True)

`import n2n` loads no TensorFlow and changes nothing in the process: each
name imports what it needs on first use (train, diagnose and export from
n2n/front_door.py). The programs (train.py, n2n-train, ...) live in n2n/apps.
"""

import importlib

from n2n import autograph_files

__all__ = ['Denoiser', 'DenoisingCancelled', 'ExportConfig', 'TrainConfig', 'diagnose', 'export',
           'replace_settings', 'train', 'train_config']

# Name -> module it is imported from on first use (PEP 562), so `import n2n` stays light.
_LAZY = {
    'train': 'n2n.front_door',
    'diagnose': 'n2n.front_door',
    'export': 'n2n.front_door',
    'Denoiser': 'n2n.inference.array_denoiser',
    # Raised by a Denoiser call whose cancel= event was set.
    'DenoisingCancelled': 'n2n.inference.array_denoiser',
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
