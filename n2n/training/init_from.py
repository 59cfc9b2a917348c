"""Fine-tuning: a new run that starts from another network's weights (--init_from).

The source is a shipped model's name (n2n/shipped.py), a run folder (its newest
checkpoint) or a checkpoint prefix. Only the network's weights are read: the optimizer,
the step and the running gradient average start afresh, as the new run's method, data
and schedule are its own. The networks must be the same (config.json's ModelConfig
with the channels and spatial dims the data resolved): a checkpoint restored into
another network would fail on a shape, or, worse, load partly.
"""

from absl import logging
import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir

FLAG = 'init_from'


def checked_source(config):
  """The checkpoint prefix config.run.init_from names, checked against the run's network;
  None where no --init_from is given or model_dir already holds a checkpoint (it resumes).

  Args:
    config: the run's TrainConfig with the data resolved (channels, spatial dims).

  Raises:
    ValueError: naming --init_from: no checkpoint or config.json there, or its network
      differs from the run's (each differing field).
  """
  source = config.run.init_from
  if not source:
    return None
  if tf.train.latest_checkpoint(config.run.model_dir) is not None:
    logging.info('--%s=%s is not used: %s already holds a checkpoint, and the run resumes '
                 'from it.', FLAG, source, config.run.model_dir)
    return None
  prefix, source_dir = run_dir.resolve_checkpoint(source, FLAG)
  saved = run_dir.read_config(source_dir)
  if saved is None:
    raise ValueError(f'--{FLAG}={source}: no {run_dir.CONFIG_NAME} beside its checkpoint in '
                     f'{source_dir!r}, so its network is unknown')
  differences = config_lib.differing_model_fields(config_lib.model_config_from_dict(saved),
                                                  config.model)
  if differences:
    raise ValueError(f'--{FLAG}={source}: its network differs from this run\'s '
                     f'({"; ".join(differences)}); train with its settings or start from '
                     'scratch (no --init_from)')
  return prefix


def load_weights(model, prefix):
  """Sets model's weights (a Keras model built as the source's) from the checkpoint at
  prefix, written by a Trainer (tf.train.Checkpoint(model=..., optimizer=..., ...)).

  Raises:
    AssertionError: a weight of model has no value in the checkpoint.
  """
  status = tf.train.Checkpoint(model=model).restore(prefix)
  status.expect_partial()  # the source's optimizer and step are not wanted
  status.assert_existing_objects_matched()
