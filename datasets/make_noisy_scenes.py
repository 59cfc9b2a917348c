"""Simulated real data: scene folders of noisy 16-bit captures made from clean photographs.

  python datasets/make_noisy_scenes.py --clean_dir=datasets/demo/train --output_dir=data/scenes_raw

Each photograph becomes a folder of --captures noisy captures with
signal-dependent Gaussian noise (variance gain * x + read_variance, clipped
to the sensor range, 16-bit PNG) and reference.png. Feed the folder to
datasets/make_tfrecords.py --scenes and train with --noise=none.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.quiet_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
from absl import logging  # pylint: disable=g-import-not-at-top

from n2n.data import simulated_scenes  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('clean_dir', None, 'Folder of clean photographs.')
flags.DEFINE_string('output_dir', None, 'Where the scene folders go.')
flags.DEFINE_integer('captures', 2, 'Noisy captures per scene.', lower_bound=2)
flags.DEFINE_float('gain', 0.01, 'Shot-noise variance per unit signal.', lower_bound=0.0)
flags.DEFINE_float('read_variance', 0.0004, 'Read-noise variance.', lower_bound=0.0)
flags.DEFINE_boolean('grayscale', False, 'Single-channel captures.')
flags.DEFINE_boolean('reference', True, 'Write reference.png (the clean image).')
flags.DEFINE_integer('seed', 0, 'Noise seed.')
flags.mark_flags_as_required(['clean_dir', 'output_dir'])
FLAGS = flags.FLAGS


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('make_noisy_scenes.py'):
    if not os.path.isdir(FLAGS.clean_dir):
      raise ValueError(f'--clean_dir={FLAGS.clean_dir!r} is not a folder')
    written = simulated_scenes.write_scenes(
        FLAGS.clean_dir, FLAGS.output_dir, FLAGS.captures, FLAGS.gain, FLAGS.read_variance,
        FLAGS.grayscale, FLAGS.reference, seed=FLAGS.seed)
    if not written:
      raise ValueError(f'--clean_dir={FLAGS.clean_dir!r} holds no readable image')
    logging.info('Wrote %d scenes to %s.', len(written), FLAGS.output_dir)


if __name__ == '__main__':
  app.run(main)
