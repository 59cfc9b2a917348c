"""The colour test's outcome over seeds and precisions, to set its bounds from.

  python -m bench.colour_test_spread --seeds=0,1,2,3 \
      --output=docs/bench/bench_cpu_2core_colour_test_spread.json

tests/training/test_colour_generalisation.py trains a scene model and a
clean-image model at bench/colour_check.SMALL_BUDGET_FLAGS and scores both on
the colour check. Its bounds (worst channel error, images meeting the bar,
mean PSNR gain) must hold on every host and in any test order, so this runs the
same training, each in a fresh train.py process as the test does, for every
seed and precision asked, interleaved, and records each run's three figures
and the spread.
"""

import json
import os
import platform
import subprocess
import sys
import tempfile

from absl import app  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n import config  # pylint: disable=g-import-not-at-top  (no TensorFlow)
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top

FLAGS = flags.FLAGS

DEMO_TRAIN = os.path.join(REPO_ROOT, 'datasets', 'demo', 'train')
# The flags of each kind of model, beside the budget (as the test trains them).
KIND_FLAGS = {'scenes': ('--noise=none',),
              'clean': ('--noise=gaussian', '--noise_range=0,50', '--eval_noise_levels=25')}


def train_command(kind, records, model_dir, seed, precision,
                  network_width=config.PAPER_NETWORK_WIDTH):
  """The train.py command line the colour test runs for one model."""
  from bench import colour_check  # pylint: disable=g-import-not-at-top
  return [sys.executable, os.path.join(REPO_ROOT, 'train.py'), f'--train_data={records}',
          f'--model_dir={model_dir}', f'--seed={seed}', f'--precision={precision}',
          f'--network_width={network_width}', *colour_check.SMALL_BUDGET_FLAGS,
          *KIND_FLAGS[kind]]


def write_records(root):
  """{'scenes': records, 'clean': records} of the demo photographs, as the test makes them."""
  from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top
  from n2n.data import scene_writer  # pylint: disable=g-import-not-at-top
  from n2n.data import simulated_scenes  # pylint: disable=g-import-not-at-top
  simulated_scenes.write_scenes(DEMO_TRAIN, os.path.join(root, 'raw'), captures=4)
  scene_writer.write_scene_dataset(os.path.join(root, 'raw'), os.path.join(root, 'scenes'))
  dataset_writer.write_dataset(DEMO_TRAIN, os.path.join(root, 'clean'))
  return {'scenes': os.path.join(root, 'scenes'), 'clean': os.path.join(root, 'clean')}


def machine():
  """The host: CPU model, cores and the bfloat16 features that change numerics."""
  info = {'cpus': os.cpu_count(), 'python': platform.python_version()}
  try:
    with open('/proc/cpuinfo') as cpuinfo:
      lines = cpuinfo.read().splitlines()
  except OSError:
    return info
  model = next((line.split(':', 1)[1].strip() for line in lines if line.startswith('model name')),
               '')
  features = next((line.split(':', 1)[1].split() for line in lines if line.startswith('flags')), [])
  info.update(model=model, avx512_bf16='avx512_bf16' in features, amx='amx_tile' in features)
  return info


def main(argv):
  del argv
  from bench import colour_check  # pylint: disable=g-import-not-at-top
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  from bench import provenance  # pylint: disable=g-import-not-at-top
  network_width = FLAGS.network_width or config.PAPER_NETWORK_WIDTH
  # Its own host description (a dict of the features that change numerics) over the stamp's.
  stamp = {**provenance.stamp(REPO_ROOT), 'machine': machine()}
  runs = []
  with tempfile.TemporaryDirectory() as root:
    records = write_records(root)
    for seed in FLAGS.seeds:
      for precision in FLAGS.precisions:
        for kind in FLAGS.kinds:
          model_dir = os.path.join(root, f'{kind}_{seed}_{precision}')
          result = subprocess.run(train_command(kind, records[kind], model_dir, seed, precision,
                                                network_width),
                                  capture_output=True, text=True, cwd=REPO_ROOT)
          if result.returncode:
            sys.exit(f'train.py failed: {result.stderr[-2000:]}')
          checked = colour_check.verdicts(colour_check.score_model(
              restore.restore_model(model_dir)))
          run = {'kind': kind, 'seed': int(seed), 'precision': precision,
                 'network_width': network_width, **colour_check.summary(checked)}
          print(json.dumps(run), flush=True)
          runs.append(run)
  spread = {}
  for kind in FLAGS.kinds:
    mine = [run for run in runs if run['kind'] == kind]
    spread[kind] = {
        'worst_channel_error_max': max(run['worst_channel_error'] for run in mine),
        'meeting_the_bar_min': min(run['meeting_the_bar'] for run in mine),
        'mean_gain_db_min': min(run['mean_gain_db'] for run in mine)}
  report = {**stamp, 'budget': list(colour_check.SMALL_BUDGET_FLAGS), 'runs': runs,
            'spread': spread}
  print(json.dumps(spread, indent=2))
  if FLAGS.output:
    with open(FLAGS.output, 'w') as file:
      json.dump(report, file, indent=2)


if __name__ == '__main__':
  # Defined here, not at import: the colour test imports this module's helpers.
  flags.DEFINE_list('seeds', ['0', '1', '2', '3'], 'Training seeds.')
  flags.DEFINE_list('precisions', ['float32', 'mixed_bfloat16'], 'Training precisions.')
  flags.DEFINE_list('kinds', ['scenes', 'clean'], 'Which of the test\'s two models.')
  flags.DEFINE_integer('network_width', 0, "train.py's --network_width; 0: the paper's.")
  flags.DEFINE_string('output', '', 'Write the JSON here.')
  app.run(main)
