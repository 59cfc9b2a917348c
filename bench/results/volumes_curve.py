"""Noise2Noise pairs in 3D and per plane at longer, equal training times.

  python -m bench.results.volumes_curve --minutes=20   # -> docs/results/volumes_curve.json
  python -m bench.results.grid --render_only           # the "Volumes and movies" section

The table of bench/results/volumes.py trains each method for the time of 300 3D steps (a
few minutes), in which the 2D network takes several times as many steps. Whether 3D
overtakes 2D when both train longer is what this measures: the pairs runs of that table (the
same configs, the same phantom stacks and planes) each train for --minutes, keeping --points
checkpoints at equal fractions of the run, and every checkpoint is scored on the held-out
volumes as the table scores its runs. A short calibration run of each network sets its
steps; each point's minutes are its step times the run's own median seconds per step.

Both runs follow the learning-rate schedule of their whole length (constant, then ramped
down over the last 30%), so the points before 70% of a run are checkpoints at the full
learning rate, and none but the last is a run that ended there. An existing run in
--runs_dir is reused: give a new one for other --minutes or --points.

Trains and measures from a clean checkout only (as bench/results/grid.py).
"""

import json
import os
import statistics

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top

RESULTS_JSON = os.path.join(results_volumes.RESULTS_DIR, 'volumes_curve.json')
# Calibration steps (logged every 10): enough for a median past the first steps' warm-up.
CALIBRATION_STEPS = {2: 100, 3: 40}

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'results_volumes_curve'),
                      'Where the runs and logs go.')
  flags.DEFINE_float('minutes', 20.0, 'Training minutes of each run.', lower_bound=0.1)
  flags.DEFINE_integer('points', 5, 'Checkpoints kept and scored along each run.', lower_bound=1)
  flags.DEFINE_boolean('allow_dirty', False, 'Train and measure from a changed checkout.')


def seconds_per_step(dims):
  """A calibration run's training seconds per step for the dims-D pairs network."""
  name = f'calibration_{dims}d'
  model_dir = os.path.join(FLAGS.runs_dir, name)
  if not os.path.exists(os.path.join(model_dir, 'config.json')):
    results_volumes.train(name, dims, 'pairs', CALIBRATION_STEPS[dims], FLAGS.runs_dir,
                          ('--log_every=10', '--steps_per_loop=10'))
  return results_volumes.seconds_per_step(model_dir)


def score(prefix, dims, tests):
  """PSNR (dB) of a checkpoint on each held-out volume."""
  denoise = results_volumes.denoiser(prefix, dims)
  return [results_volumes.psnr(denoise(noisy)[..., 0], reference) for noisy, reference in tests]


def main(argv):
  del argv
  if not FLAGS.allow_dirty:
    provenance.require_clean_tree(REPO_ROOT, False)
  os.makedirs(FLAGS.runs_dir, exist_ok=True)
  results_volumes.prepare_data()
  stamp = provenance.stamp(REPO_ROOT)
  tests = results_volumes.test_volumes()
  runs = {}
  for dims in (2, 3):
    calibrated = seconds_per_step(dims)
    every = max(1, int(round(FLAGS.minutes * 60 / calibrated / FLAGS.points)))
    steps = every * FLAGS.points
    name = f'pairs_{dims}d'
    wall = results_volumes.train(name, dims, 'pairs', steps, FLAGS.runs_dir,
                                 (f'--checkpoint_every={every}',
                                  f'--keep_checkpoints={FLAGS.points}'))
    model_dir = os.path.join(FLAGS.runs_dir, name)
    per_step = results_volumes.seconds_per_step(model_dir)
    points = []
    for step in range(every, steps + 1, every):
      psnr = score(os.path.join(model_dir, f'ckpt-{step}'), dims, tests)
      points.append({'step': step, 'training_minutes': step * per_step / 60, 'psnr': psnr})
      print(f'{name} step {step}: {statistics.mean(psnr):.2f} dB', flush=True)
    runs[name] = {'dims': dims, 'steps': steps, 'calibrated_seconds_per_step': calibrated,
                  'seconds_per_step': per_step, 'wall_seconds': wall, 'points': points}
  results = {**stamp, 'minutes': FLAGS.minutes, 'runs': runs}
  with open(RESULTS_JSON, 'w') as output:
    json.dump(results, output, indent=1)
  print(f'wrote {RESULTS_JSON}')


def read_results():
  """docs/results/volumes_curve.json, or None before the first measurement."""
  return results_volumes.read_json(RESULTS_JSON)


def section(results, goal_db):
  """Markdown lines of the longer-training table, from read_results()."""
  if results is None:
    return []
  flat, deep = results['runs']['pairs_2d'], results['runs']['pairs_3d']
  out = [f'### Noise2Noise pairs trained longer ({results["minutes"]:g} minutes each asked)', '',
         'The pairs runs above (the same configs and data) trained for longer, checkpoints at '
         'equal fractions of each run scored on the held-out volumes as above (minutes: steps '
         'times the run\'s median seconds per step). Both runs ramp their learning rate down '
         'over their last 30%: points before 70% of a run are checkpoints at the full rate, '
         'and only the last is a run that ended there. '
         f'Made by `bench/results/volumes_curve.py` at {results["commit"]} on '
         f'{results["machine"]}, {results["date"]}.', '',
         '| point | 2D minutes | 2D steps | 2D per plane | 3D minutes | 3D steps | 3D | 3D - 2D |',
         '|---|---|---|---|---|---|---|---|']
  means = lambda run: [statistics.mean(point['psnr']) for point in run['points']]
  flat_means, deep_means = means(flat), means(deep)
  gains = [volume - plane for plane, volume in zip(flat_means, deep_means)]
  for number, (plane, volume) in enumerate(zip(flat['points'], deep['points']), 1):
    out.append(f'| {number} | {plane["training_minutes"]:.1f} | {plane["step"]} | '
               f'{flat_means[number - 1]:.2f} | {volume["training_minutes"]:.1f} | '
               f'{volume["step"]} | {deep_means[number - 1]:.2f} | {gains[number - 1]:+.2f} |')
  reached = [number for number, gain in enumerate(gains, 1) if round(gain, 2) >= goal_db]
  # A point where either run scored below its previous point is a dip, not a trend.
  dipped = [number for number in reached if number > 1 and any(
      scores[number - 1] < scores[number - 2] for scores in (flat_means, deep_means))]
  last = round(gains[-1], 2) >= goal_db
  out += ['', f'At the last point, the only finished run, 3D - 2D is {gains[-1]:+.2f} dB: the '
          f'{goal_db:g} dB goal is {"met" if last else "not met"} at this training time '
          f'(first point: {gains[0]:+.2f} dB). 3D was ahead by {goal_db:g} dB or more at ' +
          (f'point{"s" if len(reached) > 1 else ""} {", ".join(map(str, reached))}'
           if reached else 'no point') +
          (f'; at point{"s" if len(dipped) > 1 else ""} {", ".join(map(str, dipped))} a run '
           'had scored below its previous point' if dipped else '') + '.', '']
  return out


if __name__ == '__main__':
  define_flags()
  app.run(main)
