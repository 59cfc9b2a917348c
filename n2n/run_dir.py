"""The model_dir: config.json and checkpoints, the run's identity on disk.

Checkpoints hold TensorFlow variables only and config.json is plain JSON: no
code is ever unpickled or executed when a run is resumed or validated.
"""

import json
import os

import tensorflow as tf

from n2n import config as config_lib
from n2n import shipped

CONFIG_NAME = 'config.json'
CHECKPOINT_PREFIX = 'ckpt'
# The best checkpoint by the validation metric, itself a model_dir (training/best.py).
BEST_SUBDIR = 'best'


def read_config(model_dir):
  """Returns config.json of model_dir as a dict, or None if there is none.

  Raises:
    ValueError: config.json exists but is not valid JSON.
  """
  path = os.path.join(model_dir, CONFIG_NAME)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as config_file:
    try:
      return json.load(config_file)
    except json.JSONDecodeError as error:
      raise ValueError(f'{path} is not valid JSON: {error}') from None


def write_config(model_dir, train_config):
  """Writes config.json atomically (temporary file, then rename)."""
  tf.io.gfile.makedirs(model_dir)
  path = os.path.join(model_dir, CONFIG_NAME)
  temporary = path + '.tmp'
  with tf.io.gfile.GFile(temporary, 'w') as config_file:
    config_file.write(train_config.to_json())
  tf.io.gfile.rename(temporary, path, overwrite=True)


def check_compatible(model_dir, train_config):
  """Refuses to resume a model_dir whose saved network differs from the requested one.

  Raises:
    ValueError: naming model_dir and each differing field.
  """
  saved = read_config(model_dir)
  if saved is None:
    return
  differences = config_lib.differing_model_fields(
      config_lib.model_config_from_dict(saved), train_config.model)
  if differences:
    raise ValueError(f'{model_dir} holds a different network ({"; ".join(differences)}); '
                     'use a new --model_dir or the saved settings')


def resolve_checkpoint(path, flag_name='checkpoint'):
  """Finds the checkpoint to load and the model_dir it belongs to.

  Args:
    path: a model_dir (its newest checkpoint is used), a checkpoint prefix
      such as model_dir/ckpt-1000, or the name of a model n2n ships
      (n2n/shipped.py: camera_srgb) where no file or folder has that name.
    flag_name: the flag named in error messages.

  Returns:
    (checkpoint_prefix, model_dir).

  Raises:
    ValueError: no checkpoint there, or its files are incomplete.
  """
  path = shipped.resolve(path)
  if tf.io.gfile.isdir(path):
    prefix = tf.train.latest_checkpoint(path)
    if prefix is None:
      raise ValueError(f'--{flag_name}: no checkpoint in {path!r}')
    model_dir = path
  else:
    prefix = path
    model_dir = os.path.dirname(path)
  if not tf.io.gfile.exists(prefix + '.index'):
    raise ValueError(f'--{flag_name}: {prefix!r} is missing or incomplete (no .index file)')
  if not tf.io.gfile.glob(prefix + '.data-*'):
    raise ValueError(f'--{flag_name}: {prefix!r} is incomplete (no .data files)')
  return prefix, model_dir
