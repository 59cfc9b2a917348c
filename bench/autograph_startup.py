"""What AutoGraph's conversion of n2n's own functions costs at each training start.

  python -m bench.autograph_startup --baseline=6c49590 --repetitions=5 \
      --output=docs/bench/autograph_startup.json

tf.function and tf.data's map convert every Python function they trace, and the
functions those call, into graph code (AutoGraph), anew in each process. Since
a95737c n2n traces its training without it (n2n/data/traced.py); before, it
converted about 40 of its functions per training start. This times a short
train.py run (4 steps, crops of 32, batch 2, float32, on the demo photographs'
records) in fresh processes of this checkout and of --baseline (a commit before
that change, checked out in a temporary git worktree), the two interleaved (their
order turns round every repetition). Both run in this environment. Wall seconds
per process, from before the first import to exit.
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

flags.DEFINE_string('baseline', None, 'The commit to compare with (AutoGraph on).')
flags.DEFINE_integer('repetitions', 3, 'Fresh processes per setting.', lower_bound=1)
flags.DEFINE_string('output', None, 'Where to write the JSON; none is written when unset.')
FLAGS = flags.FLAGS

# argv[1:]: train.py's flags.
_TRAIN = """
import sys
sys.argv = ['train.py', *sys.argv[1:]]
from n2n import apps
apps.run_train()
"""


def run_seconds(checkout, records, model_dir):
  """Wall seconds of one 4-step train.py process of the checkout at `checkout`."""
  flags_ = [f'--train_data={records}/*.tfrecord', f'--model_dir={model_dir}', '--crop_size=32',
            '--batch_size=2', '--train_steps=4', '--steps_per_loop=1', '--log_every=1',
            '--eval_every=100000', '--precision=float32']
  started = time.perf_counter()
  # From the checkout's root, where `python -c` finds that checkout's n2n first.
  result = subprocess.run([sys.executable, '-c', _TRAIN, *flags_], cwd=checkout,
                          env={**os.environ, 'PYTHONPATH': checkout},
                          capture_output=True, text=True, check=False)
  seconds = time.perf_counter() - started
  if result.returncode or 'step 4/4' not in result.stderr:
    raise RuntimeError(result.stderr.strip().splitlines()[-1])
  return seconds


def main(argv):
  del argv
  from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top
  from bench import provenance  # pylint: disable=g-import-not-at-top
  if not FLAGS.baseline:
    raise app.UsageError('--baseline: the commit to compare with, e.g. 6c49590')
  results = {**provenance.stamp(REPO_ROOT), 'baseline': FLAGS.baseline,
             'run': 'train.py, 4 steps, crops of 32, batch 2, float32', 'seconds': {}}
  settings = ('baseline', 'this checkout')
  runs = {setting: [] for setting in settings}
  with tempfile.TemporaryDirectory() as folder:
    baseline = os.path.join(folder, 'baseline')
    added = subprocess.run(['git', 'worktree', 'add', '--detach', baseline, FLAGS.baseline],
                           cwd=REPO_ROOT, check=False, capture_output=True, text=True)
    if added.returncode:
      raise app.UsageError(f'--baseline={FLAGS.baseline}: git worktree add failed: '
                           + (added.stderr.strip().splitlines() or ['no message'])[-1])
    try:
      checkouts = {'baseline': baseline, 'this checkout': REPO_ROOT}
      records = os.path.join(folder, 'records')
      dataset_writer.write_dataset(os.path.join(REPO_ROOT, 'datasets', 'demo', 'train'),
                                   records, min_size=32)
      for repetition in range(FLAGS.repetitions):
        for setting in (settings if repetition % 2 == 0 else settings[::-1]):
          model_dir = os.path.join(folder, f'run_{repetition}_{len(runs[setting])}_{setting[0]}')
          runs[setting].append(round(run_seconds(checkouts[setting], records, model_dir), 3))
          print(setting, runs[setting][-1], flush=True)
    finally:
      subprocess.run(['git', 'worktree', 'remove', '--force', baseline], cwd=REPO_ROOT,
                     check=False, capture_output=True)
      subprocess.run(['git', 'worktree', 'prune'], cwd=REPO_ROOT, check=False,
                     capture_output=True)
  for setting in settings:
    results['seconds'][setting] = {'runs': runs[setting], 'median': statistics.median(runs[setting])}
  results['saved_per_start_s'] = round(results['seconds']['baseline']['median'] -
                                       results['seconds']['this checkout']['median'], 3)
  print(results['seconds'], 'saved per start:', results['saved_per_start_s'], 's')
  json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
