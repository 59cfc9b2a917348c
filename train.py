"""Trains a Noise2Noise denoiser.

  python train.py                                   # the built-in demo (configs/demo.cfg)
  python train.py --flagfile=configs/gaussian.cfg   # the paper's Gaussian experiment

Rerunning a command with the same --model_dir resumes it.
"""

import os
import sys

from n2n import cli  # pylint: disable=g-bad-import-order  (quiets TF before it loads)
from absl import app
from absl import flags
from absl import logging

import tensorflow as tf

from n2n import config as config_lib
from n2n import flags as n2n_flags
from n2n.data import dataset_writer
from n2n.training import distribute
from n2n.training import preemption
from n2n.training import train_lib

DEMO_FLAGFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'configs', 'demo.cfg')


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('train.py'):
    config = n2n_flags.config_from_flags(config_lib.TrainConfig)
    if config.deterministic:
      tf.config.experimental.enable_op_determinism()
    strategy = distribute.create_strategy(config.strategy, config.tpu)
    dataset_writer.build_if_missing(config.train_data, config.train_images_dir,
                                    min_size=config.crop_size, seed=config.seed,
                                    is_chief=distribute.is_chief(strategy))
    try:
      train_lib.train_and_evaluate(config, strategy)
    except preemption.TrainingInterrupted as interrupted:
      logging.warning('%s', interrupted)
      sys.exit(128 + interrupted.signal_number)


if __name__ == '__main__':
  n2n_flags.define_flags(config_lib.TrainConfig, flags.FLAGS)
  if len(sys.argv) == 1:
    sys.argv.append(f'--flagfile={DEMO_FLAGFILE}')
  app.run(main)
