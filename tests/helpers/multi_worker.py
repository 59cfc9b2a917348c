"""Runs one worker of a multi-worker training (TF_CONFIG set by the caller) and
saves its final weights to --weights_out, so a test can compare workers."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import tensorflow as tf  # pylint: disable=g-import-not-at-top

# Created first: MultiWorkerMirroredStrategy must exist before other TF work.
STRATEGY = tf.distribute.MultiWorkerMirroredStrategy()

from absl import logging  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n import autograph_files  # pylint: disable=g-import-not-at-top
from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n.training import train_lib  # pylint: disable=g-import-not-at-top


def main(train_data, model_dir, train_steps, weights_out):
  # The tests kill workers: AutoGraph's files must not wait for an exit hook (n2n.train does the same).
  autograph_files.install()
  logging.set_verbosity(logging.INFO)
  config = config_lib.train_config(
      train_data=train_data, val_data='', model_dir=model_dir, crop_size=32, batch_size=4,
      train_steps=int(train_steps), steps_per_loop=2, checkpoint_every=2, log_every=2,
      precision='float32', strategy='multi_worker')
  print(f'replicas in sync: {STRATEGY.num_replicas_in_sync}', file=sys.stderr)
  run = train_lib.train_and_evaluate(config, STRATEGY)
  print(f'reached step {run.step}', file=sys.stderr)
  np.savez(weights_out, *[variable.numpy() for variable in run.model.weights])


if __name__ == '__main__':
  main(*sys.argv[1:])
