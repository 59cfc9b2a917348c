"""Does bench/volumes_gpu.py's loop train the 2D network as n2n's trainer does?

  python -m bench.volumes_gpu_loop_check --jax_python=/path/to/venv-with-jax/bin/python \
      --output=docs/bench/volumes_gpu_loop_check.json

bench/volumes_gpu.py trains on Keras' JAX backend with a loop of its own, because
TensorFlow does not run on the GPU machines it was measured on. Its 2D figures there
came out below what n2n's trainer reached on CPUs, so this compares the two where both
run: on this machine's CPU, at a size it trains in minutes (--network_width, --crop_size,
--batch_size, --steps; float32), 2D per plane on the results page's phantom (z step 4,
its white level, train seeds 0-5, held-out seeds 100-101), for each of --seeds:
- n2n: train.py with configs/cpu/volumes_2d.cfg and these overrides, on the records
  bench/results/volumes.py writes (data/volumes), scored by its score();
- the loop from the same initial weights: python -m bench.volumes_gpu --dims=2 with the same
  settings and --initial_weights, build_unet's weights at the seed (what train.py --seed
  starts from), run by --jax_python (a Python with jax and keras; JAX is no dependency
  of n2n);
- the loop from its own draw of the same initializers (Keras on JAX), as on the GPU.
All score PSNR of each held-out volume's first acquisition, denoised, against its
reference. Crops and their order differ between n2n and the loop (different random
generators): compare the spreads over seeds.
"""

import json
import os
import statistics
import subprocess
import tempfile

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

import numpy as np  # pylint: disable=g-import-not-at-top

from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import volumes_gpu  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from n2n.model import network  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('jax_python', '', 'A Python interpreter with jax and keras installed.')
flags.DEFINE_list('seeds', ['1', '2', '3'], 'Seeds of both sides\' runs.')
flags.DEFINE_integer('steps', 600, 'Training steps of every run.')
flags.DEFINE_integer('network_width', 8, 'The U-Net\'s width.')
flags.DEFINE_integer('crop_size', 32, 'Crop height and width.')
flags.DEFINE_integer('batch_size', 4, 'Crops per step.')
flags.DEFINE_string('output', '', 'JSON results path.')
FLAGS = flags.FLAGS
SIDES = ('n2n', 'loop_same_start', 'loop')
LOOP_VERSIONS = {}  # jax and keras of --jax_python, as the loop's runs report them


def n2n_run(seed, runs_dir, tests):
  """PSNR per held-out volume of n2n's trainer, 2D per plane, at these settings."""
  name = f'n2n_seed{seed}'
  results_volumes.train(name, 2, 'pairs', FLAGS.steps, runs_dir, extra_flags=(
      f'--network_width={FLAGS.network_width}', f'--crop_size={FLAGS.crop_size}',
      f'--batch_size={FLAGS.batch_size}', '--precision=float32', f'--seed={seed}'))
  # Scored in float32, as the loop scores (denoise.py's auto would pick bfloat16 on some hosts).
  return results_volumes.score(os.path.join(runs_dir, name), 2, tests, precision='float32')


def initial_weights(model_dir, path):
  """Writes the initial weights of train.py's run in model_dir (its network built
  from its own config.json at its seed, untrained) to path as LAYER/INDEX arrays."""
  run_config = restore.read_run_config(model_dir)
  model = network.build_run_network(run_config, 'float32', seed=run_config.run.seed)
  np.savez(path, **{f'{layer.name}/{index}': array for layer in model.layers
                    for index, array in enumerate(layer.get_weights())})


def loop_arguments(seed, output):
  """bench/volumes_gpu.py's flags for a loop run at these settings."""
  steps_per_call = 50 if FLAGS.steps % 50 == 0 else FLAGS.steps
  return ['--dims=2', f'--z_steps={results_volumes.SPEC.z_spacing:g}',
          f'--network_width={FLAGS.network_width}', f'--crop_size={FLAGS.crop_size}',
          f'--batch_size_2d={FLAGS.batch_size}', '--precision=float32', f'--seed={seed}',
          f'--max_steps={FLAGS.steps}', f'--steps_per_call={steps_per_call}', '--seconds=1e9',
          f'--output={output}']


def loop_run(seed, runs_dir, weights=''):
  """PSNR per held-out volume of bench/volumes_gpu.py's loop at these settings, from
  the initial weights in the .npz weights (empty: its own draw)."""
  output = os.path.join(runs_dir, f'loop_seed{seed}{"_weights" if weights else ""}.json')
  command = [FLAGS.jax_python, '-m', 'bench.volumes_gpu', *loop_arguments(seed, output)]
  if weights:
    command.append(f'--initial_weights={weights}')
  finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                            env=dict(os.environ, KERAS_BACKEND='jax'))
  if finished.returncode:
    raise SystemExit(f'bench/volumes_gpu.py (seed {seed}): '
                     f'{(finished.stderr.strip().splitlines() or ["failed"])[-1]}')
  with open(output) as source:
    measured = json.load(source)
  run, = measured['runs']
  LOOP_VERSIONS.update({key: measured[key] for key in ('jax', 'keras')})
  if run['steps'] != FLAGS.steps:
    raise SystemExit(f'bench/volumes_gpu.py trained {run["steps"]} steps, not {FLAGS.steps}')
  return run['psnr']


def learning_rate_2d():
  """The 2D runs' peak learning rate: configs/cpu/volumes_2d.cfg's, which both sides use."""
  with open(results_volumes.config_path(2)) as config:
    return next(float(line.split('=', 1)[1]) for line in config
                if line.startswith('--learning_rate='))


def summary(values):
  return {'mean': statistics.mean(values), 'min': min(values), 'max': max(values)}


def main(argv):
  del argv
  if not FLAGS.jax_python:
    raise SystemExit('--jax_python: give a Python with jax and keras installed')
  if FLAGS.steps < 1:
    raise SystemExit(f'--steps={FLAGS.steps} must be 1 or more')
  # The loop's own checks (crop size, width, batch), before any training: one line on stderr.
  volumes_gpu.parse_args(loop_arguments(0, ''))
  try:
    seeds = [int(seed) for seed in FLAGS.seeds]
  except ValueError:
    raise SystemExit(f'--seeds={",".join(FLAGS.seeds)}: whole numbers') from None
  results_volumes.ensure_volumes()
  tests = results_volumes.test_volumes()
  results = {**provenance.stamp(REPO_ROOT),
             'steps': FLAGS.steps, 'network_width': FLAGS.network_width,
             'crop_size': FLAGS.crop_size, 'batch_size': FLAGS.batch_size,
             'learning_rate': learning_rate_2d(), 'z_step': results_volumes.SPEC.z_spacing,
             'precision': 'float32', 'scoring_precision': 'float32', 'runs': []}
  with tempfile.TemporaryDirectory() as runs_dir:
    for seed in seeds:
      n2n_psnr = n2n_run(seed, runs_dir, tests)
      weights = os.path.join(runs_dir, f'initial_seed{seed}.npz')
      initial_weights(os.path.join(runs_dir, f'n2n_seed{seed}'), weights)
      row = {'seed': seed, 'n2n': n2n_psnr,
             'loop_same_start': loop_run(seed, runs_dir, weights),
             'loop': loop_run(seed, runs_dir)}
      results['runs'].append(row)
      results['loop_versions'] = LOOP_VERSIONS
      json_output.write_results(FLAGS.output, results)
      print(f'seed {seed}: ' + ', '.join(f'{side} {statistics.mean(row[side]):.2f} dB'
                                         for side in SIDES), flush=True)
  for side in SIDES:
    results[side] = summary([statistics.mean(row[side]) for row in results['runs']])
  json_output.write_results(FLAGS.output, results)
  print(json.dumps({side: results[side] for side in SIDES}))


if __name__ == '__main__':
  app.run(main)
