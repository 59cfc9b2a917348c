"""Rebuilding a trained network from a run's config.json and checkpoint: data only."""

import dataclasses
import gc

import tensorflow as tf

from n2n import config as config_lib
from n2n import errors
from n2n import run_dir
from n2n.inference import schemes
from n2n.inference import serving as serving_lib
from n2n.model import network
from n2n.model import unet


@dataclasses.dataclass
class RestoredModel:
  """A network with a checkpoint's weights loaded.

  Attributes:
    model: keras.Model, [B, H, W, C] float32 -> same: the network with its
      method's inference scheme (n2n/inference/schemes.py), what every
      denoising path and export runs.
    network: the bare network, as it trains (the same weights): the
      single-image methods' held-out loss scores it.
    run_config: config.TrainConfig of the run that trained it.
    serving: serving.Serving, what serving it needs, resolved once.
    prefix: the checkpoint prefix loaded (model_dir/ckpt-N).
    step: the global step that checkpoint was written at.
    model_dir: the run's folder.
  """
  model: object
  run_config: config_lib.TrainConfig
  serving: serving_lib.Serving
  prefix: str
  step: int
  model_dir: str
  network: object = None


def read_run_config(model_dir, flag_name='checkpoint'):
  """The run's TrainConfig from model_dir/config.json; ValueError if there is none."""
  saved = run_dir.read_config(model_dir)
  if saved is None:
    raise ValueError(f'--{flag_name}: no {run_dir.CONFIG_NAME} in {model_dir!r}; cannot rebuild '
                     'the network')
  model_config = config_lib.model_config_from_dict(saved)
  if model_config.architecture != unet.ARCHITECTURE:
    raise ValueError(f'--{flag_name}: unknown architecture {model_config.architecture!r}')
  run_config = config_lib.read_train_config(saved)
  # train.py records the channels the data resolved; a config.json written by
  # library code without data (channels 0) means clean-image data: RGB.
  return config_lib.resolve_data(run_config, run_config.data.channels, run_config.data.dtype,
                                 run_config.data.white_level)


def checkpoint_step(prefix):
  """The global step stored in a checkpoint (python int)."""
  return int(tf.train.load_checkpoint(prefix).get_tensor('step/.ATTRIBUTES/VARIABLE_VALUE'))


def load_weights(model, prefix, flag_name='checkpoint'):
  """Reads a checkpoint's network weights into model.

  Raises:
    ValueError: the weights do not fit the network.
  """
  failure = None
  # A half-restored checkpoint object logs ~80 "unrestored value" warnings when it
  # is garbage-collected, burying the one-line error: after a failed read it is
  # collected here, with TensorFlow's logger quiet for this read only. A read that
  # succeeds expects a partial restore (no optimizer) and warns of nothing, and is
  # not followed by a full collection, which walks every object of the process (about
  # a second in a long-lived one: a notebook, napari, a test worker).
  logger = tf.get_logger()
  level = logger.level
  logger.setLevel('ERROR')
  try:
    try:
      tf.train.Checkpoint(model=model).read(prefix).expect_partial(
      ).assert_existing_objects_matched()
    except (AssertionError, ValueError, tf.errors.OpError) as error:
      failure = errors.first_line(error)[:200]
    if failure:
      gc.collect()
  finally:
    logger.setLevel(level)
  if failure:
    raise ValueError(f'--{flag_name}: {prefix!r} does not fit the network in config.json '
                     f'({failure})')


def restore_model(checkpoint, precision='float32', flag_name='checkpoint', upsampling='repeat'):
  """Rebuilds the network from config.json and loads the checkpoint's weights.

  Args:
    checkpoint: a model_dir (newest checkpoint) or a checkpoint prefix.
    precision: resolved inference precision ('float32', 'mixed_bfloat16' or
      'mixed_float16').
    flag_name: the flag named in error messages.
    upsampling: see unet.build_unet ('resize' for exports).

  Returns:
    RestoredModel.

  Raises:
    ValueError: missing/partial checkpoint, missing config.json, or weights
      that do not fit the configured network.
  """
  prefix, model_dir = run_dir.resolve_checkpoint(checkpoint, flag_name)
  run_config = read_run_config(model_dir, flag_name)
  serving = serving_lib.of_run(run_config)
  model = network.build_run_network(run_config, precision, upsampling=upsampling)
  load_weights(model, prefix, flag_name)
  with_scheme = schemes.with_scheme(model, serving.scheme)
  return RestoredModel(with_scheme, run_config, serving, prefix, checkpoint_step(prefix),
                       model_dir, model)
