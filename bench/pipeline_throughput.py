"""Measures the training input pipeline alone, per corruption: images/s and Mpixel/s.

  python bench/pipeline_throughput.py --crop_sizes=64,256 --threads=1 --output=pipeline.json

Builds TFRecords from datasets/demo/train into a temporary folder, then for
each corruption times --batches batches (after --warmup batches) --repeats
times and reports the median, min and max. --threads bounds tf.data's private
thread pool (1 = one core).
"""

import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order,unused-import
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
from absl import logging  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import dataset_writer  # pylint: disable=g-import-not-at-top
from n2n import input_pipeline  # pylint: disable=g-import-not-at-top
from n2n import noise as noise_lib  # pylint: disable=g-import-not-at-top

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
flags.DEFINE_string('corruptions', ','.join(sorted(noise_lib.CORRUPTIONS)), 'Comma list.')
flags.DEFINE_string('crop_sizes', '64,256', 'Comma list of crop sizes.')
flags.DEFINE_integer('threads', 1, 'tf.data private thread pool size (0: TF default).')
flags.DEFINE_integer('batch_size', 16, 'Images per batch.')
flags.DEFINE_integer('batches', 20, 'Timed batches per repetition.')
flags.DEFINE_integer('warmup', 5, 'Untimed batches before timing.')
flags.DEFINE_integer('repeats', 3, 'Timed repetitions.')
flags.DEFINE_string('output', '', 'Write the results as JSON here.')
FLAGS = flags.FLAGS


def time_pipeline(dataset, batches, warmup, repeats):
  """Seconds per timed run of `batches` batches, `repeats` times."""
  iterator = iter(dataset)
  for _ in range(warmup):
    next(iterator)
  durations = []
  for _ in range(repeats):
    started = time.perf_counter()
    for _ in range(batches):
      next(iterator)
    durations.append(time.perf_counter() - started)
  return durations


def main(argv):
  del argv
  records = tempfile.mkdtemp(prefix='n2n_bench_')
  dataset_writer.write_dataset(os.path.join(REPO_ROOT, 'datasets', 'demo', 'train'), records)
  rows = []
  for corruption in FLAGS.corruptions.split(','):
    for crop_size in (int(size) for size in FLAGS.crop_sizes.split(',')):
      config = config_lib.TrainConfig(train_data=os.path.join(records, '*.tfrecord'),
                                      val_data='', model_dir='', noise=corruption,
                                      crop_size=crop_size, batch_size=FLAGS.batch_size)
      dataset = input_pipeline.build_train_dataset(config, FLAGS.batch_size, cache=True)
      if FLAGS.threads:
        options = tf.data.Options()
        options.threading.private_threadpool_size = FLAGS.threads
        dataset = dataset.with_options(options)
      durations = time_pipeline(dataset, FLAGS.batches, FLAGS.warmup, FLAGS.repeats)
      rates = sorted(FLAGS.batches * FLAGS.batch_size / seconds for seconds in durations)
      row = {'corruption': corruption, 'crop_size': crop_size, 'threads': FLAGS.threads,
             'images_per_second': {'median': statistics.median(rates), 'min': rates[0],
                                   'max': rates[-1]},
             'mpixels_per_second': statistics.median(rates) * crop_size**2 / 1e6}
      rows.append(row)
      logging.info('%s', row)
      print(f'{corruption:10s} crop {crop_size:4d}  {row["images_per_second"]["median"]:8.1f} '
            f'images/s (min {rates[0]:.1f}, max {rates[-1]:.1f})  '
            f'{row["mpixels_per_second"]:6.2f} Mpixel/s', flush=True)
  if FLAGS.output:
    with open(FLAGS.output, 'w') as output:
      json.dump(rows, output, indent=2)


if __name__ == '__main__':
  app.run(main)
