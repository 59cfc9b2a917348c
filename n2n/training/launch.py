"""train.py's job as one call: the strategy, the training data (TFRecords built
on first use, or arrays written into the run), training."""

import tensorflow as tf

from n2n.data import dataset_writer
from n2n.training import array_runs
from n2n.training import distribute
from n2n.training import train_lib


def train(config, strategy=None, arrays=None, stop=None, progress=None):
  """Trains (or resumes) config's run, building its TFRecords first if missing.

  Args:
    config: config.TrainConfig, resolved here if it is not (TrainConfig.resolved()).
    strategy: a tf.distribute.Strategy, or None for config.run.strategy's.
    arrays: array_runs.TrainingArrays to train on instead of
      config.data.train_data, or None.
    stop, progress: see train_lib.train_and_evaluate.

  Returns:
    train_lib.TrainedRun.

  Raises:
    ValueError: bad configuration or input, with a one-line message.
    preemption.TrainingInterrupted: stopped by SIGTERM/SIGINT after saving.
  """
  config = config.resolved()
  if config.run.deterministic:
    tf.config.experimental.enable_op_determinism()
  if strategy is None:
    strategy = distribute.create_strategy(config.run.strategy, config.run.tpu)
  config = array_runs.with_array_data(config, arrays, strategy)
  dataset_writer.build_if_missing(config.data.train_data, config.data.train_images_dir,
                                  min_size=config.data.crop_size, seed=config.run.seed,
                                  is_chief=distribute.is_chief(strategy))
  return train_lib.train_and_evaluate(config, strategy, stop, progress)
