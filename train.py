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

from n2n import dataset_writer
from n2n import distribute
from n2n import flags as n2n_flags
from n2n import preemption
from n2n import train_lib

DEMO_FLAGFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'configs', 'demo.cfg')
FLAGS = flags.FLAGS


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('train.py'):
    config = n2n_flags.train_config_from_flags(FLAGS)
    if config.deterministic:
      tf.config.experimental.enable_op_determinism()
    dataset_writer.build_if_missing(config.train_data, config.train_images_dir, seed=config.seed)
    strategy = distribute.create_strategy(config.strategy, config.tpu)
    try:
      train_lib.train_and_evaluate(config, strategy)
    except preemption.TrainingInterrupted as interrupted:
      logging.warning('%s', interrupted)
      sys.exit(128 + interrupted.signal_number)


if __name__ == '__main__':
  n2n_flags.define_train_flags()
  if len(sys.argv) == 1:
    sys.argv.append(f'--flagfile={DEMO_FLAGFILE}')
  app.run(main)
