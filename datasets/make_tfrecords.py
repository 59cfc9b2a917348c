"""Turns a folder of images into shuffled, sharded TFRecords for train.py.

  python datasets/make_tfrecords.py --input_dir=photos/ --output_dir=data/photos

Writes train-NNNNN-of-MMMMM.tfrecord shards and manifest.json (image count,
per-shard counts, size statistics, skipped files with reasons).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('input_dir', None, 'Folder of images, searched recursively.')
flags.DEFINE_string('output_dir', None, 'Folder for the shards and manifest.json.')
flags.DEFINE_integer('num_shards', 0, 'Number of shards; 0 sizes them at about 150 MB each.')
flags.DEFINE_integer('min_size', 256, 'Skip images whose shorter side is below this, in pixels.')
flags.DEFINE_integer('seed', 0, 'Shuffle seed.')
flags.DEFINE_boolean('overwrite', False, 'Replace existing shards in --output_dir.')
flags.DEFINE_integer('num_workers', 0, 'Decoding threads; 0: one per CPU core.')
flags.mark_flags_as_required(['input_dir', 'output_dir'])
FLAGS = flags.FLAGS


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error('make_tfrecords.py'):
    dataset_writer.write_dataset(FLAGS.input_dir, FLAGS.output_dir, FLAGS.num_shards,
                                 FLAGS.min_size, FLAGS.seed, FLAGS.overwrite, FLAGS.num_workers)


if __name__ == '__main__':
  app.run(main)
