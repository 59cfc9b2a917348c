"""What AutoGraph's conversion of n2n's own functions costs at each training start.

  python -m bench.autograph_startup --repetitions=3 --output=docs/bench/autograph_startup.json

tf.function and tf.data's map convert every Python function they trace, and the
functions those call, into graph code (AutoGraph), at each process start. Most
of n2n's traced functions need no conversion (no Python control flow on
tensors); the training loop does (its `for` over tf.range). This times a short
train.py run (4 steps, crops of 32, batch 2, float32, on the demo photographs'
records) in fresh processes, with AutoGraph as TensorFlow sets it and with
n2n's modules other than n2n/training/trainer.py left unconverted, the two
interleaved (their order turns round every repetition). The second setting
changes TensorFlow's internal conversion rules, so it is a measurement only,
not something the programs do. Wall seconds per process, from before the first
import to exit.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import flags  # pylint: disable=g-import-not-at-top

from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top

flags.DEFINE_integer('repetitions', 3, 'Fresh processes per setting.', lower_bound=1)
flags.DEFINE_string('output', None, 'Where to write the JSON; none is written when unset.')
FLAGS = flags.FLAGS

# argv[1]: 'converted' or 'unconverted'; argv[2:]: train.py's flags.
_TRAIN = """
import sys
if sys.argv[1] == 'unconverted':
  from tensorflow.python.autograph.core import config as autograph_config
  from tensorflow.python.autograph.core import config_lib
  # The first matching rule wins: the trainer (its loop needs conversion), then the rest of n2n.
  autograph_config.CONVERSION_RULES = (
      config_lib.Convert('n2n.training.trainer'), config_lib.DoNotConvert('n2n'),
      *autograph_config.CONVERSION_RULES)
sys.argv = ['train.py', *sys.argv[2:]]
from n2n import apps
apps.run_train()
"""
SETTINGS = ('converted', 'unconverted')


def run_seconds(setting, records, model_dir):
  """Wall seconds of one 4-step train.py process in `setting`."""
  flags_ = [f'--train_data={records}/*.tfrecord', f'--model_dir={model_dir}', '--crop_size=32',
            '--batch_size=2', '--train_steps=4', '--steps_per_loop=1', '--log_every=1',
            '--eval_every=100000', '--precision=float32']
  started = time.perf_counter()
  # From the checkout's root, where `python -c` finds this checkout's n2n first.
  result = subprocess.run([sys.executable, '-c', _TRAIN, setting, *flags_], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=False)
  seconds = time.perf_counter() - started
  if result.returncode or 'step 4/4' not in result.stderr:
    raise RuntimeError(result.stderr.strip().splitlines()[-1])
  return seconds


def main(argv):
  del argv
  from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top
  from bench import provenance  # pylint: disable=g-import-not-at-top
  results = {**provenance.stamp(REPO_ROOT),
             'run': 'train.py, 4 steps, crops of 32, batch 2, float32', 'seconds': {}}
  runs = {setting: [] for setting in SETTINGS}
  with tempfile.TemporaryDirectory() as folder:
    records = os.path.join(folder, 'records')
    dataset_writer.write_dataset(os.path.join(REPO_ROOT, 'datasets', 'demo', 'train'), records,
                                 min_size=32)
    for repetition in range(FLAGS.repetitions):
      for setting in (SETTINGS if repetition % 2 == 0 else SETTINGS[::-1]):
        model_dir = os.path.join(folder, f'run_{setting}_{repetition}')
        runs[setting].append(round(run_seconds(setting, records, model_dir), 3))
        print(setting, runs[setting][-1], flush=True)
  for setting in SETTINGS:
    results['seconds'][setting] = {'runs': runs[setting], 'median': statistics.median(runs[setting])}
  results['saved_per_start_s'] = round(results['seconds']['converted']['median'] -
                                       results['seconds']['unconverted']['median'], 3)
  print(results['seconds'], 'saved per start:', results['saved_per_start_s'], 's')
  json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
