"""A run's configuration in TensorBoard's HParams tab.

The run's model_dir is one hparams session: its settings are written once at
start; the tab takes its metrics (psnr/..., loss) from the scalars the run
writes into model_dir/eval and model_dir/train, so runs with different
settings can be compared by final PSNR.
"""

import dataclasses

import tensorflow as tf
from tensorboard.plugins.hparams import api as hparams_api


def flat_hparams(config):
  """A config as {'corruption.noise': 'gaussian', 'model.channels': 3, ...} of
  str/int/float/bool, named by each value's place in config.json.

  Tuples become comma-separated strings; the hparams plugin takes nothing else.
  """
  flat = {}

  def add(values, prefix):
    for name, value in values.items():
      if isinstance(value, dict):  # a section, at any depth ('method.blind_spot.fraction')
        add(value, f'{prefix}{name}.')
      else:
        flat[prefix + name] = value

  add(dataclasses.asdict(config), '')
  return {name: ','.join(f'{item:g}' if isinstance(item, float) else str(item) for item in value)
          if isinstance(value, (tuple, list)) else value for name, value in flat.items()}


def write_hparams(model_dir, config):
  """Records config as the hparams of the run in model_dir (call on the chief)."""
  writer = tf.summary.create_file_writer(model_dir)
  with writer.as_default():
    hparams_api.hparams(flat_hparams(config), trial_id=config.run.model_dir)
  writer.close()
