"""3D against 2D per plane when the 3D network is narrower, or convolves in-plane
at its finest levels: equal training time, more 3D steps.

  python -m bench.results.volumes_width       # -> docs/results/volumes_width.json
  python -m bench.results.grid --render_only  # the "Volumes and movies" section

The table of bench/results/volumes.py trains the paper's network (width 48) in
3D for 300 steps and the 2D network per plane for as long; a 3D step cost
3.8-7.6x a 2D one there (docs/results/volumes.json), so in equal time the 3D
network takes far fewer steps. A
narrower network (`--network_width`) makes each step cheaper. This trains the
3D network at --width_3d (with 1x3x3 convolutions at its --xy_conv_levels_3d
finest levels, `--xy_conv_levels`) for --steps_3d steps, then the 2D network per plane at
each of --widths_2d for the 3D run's training time, so that the 2D side gets
the same chance, and scores all on the held-out volumes: does the narrower 3D
network reach the issue's goal (3D ahead of 2D per plane by 1 dB at equal
training time)?

Each 2D run's steps come from a short calibration run's seconds per step, as
the table's do, but logged every 10 steps (CALIBRATION_FLAGS): the table's
calibrations log at steps 50 and 60 only, so their median includes the first
interval's tracing, and their 2D runs got 7-29% less training time than the
3D run (docs/results/volumes.json, volumes_z_context.json). The JSON records
each calibration's seconds per step and each run's training seconds; the page
shows both runs' seconds.

Phantoms: the table's (z step 4) and the same objects at z step 2 or 1
(bench/results/volumes_z_context.py's data folders, written once), 30 photons.
Configs and scoring as the table's (configs/cpu/volumes_{2,3}d.cfg; PSNR against
the reference over the held-out volumes, denoised as denoise.py does by
default). One seed per row; the best 2D width is picked on the same held-out
volumes, which favours 2D. At the defaults (the page's), about 17 minutes for
a Neighbor2Neighbor row and 37 for a pairs row on 2 cores without AVX512-BF16.
Each row's 'spec' is the phantom's record as z_context writes it (its step
fields are the table's; each run records its own steps). Trains and measures
from a clean checkout only.
"""

import json
import os
import statistics

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
from bench.results import volumes_z_context as z_context  # pylint: disable=g-import-not-at-top

RESULTS_JSON = os.path.join(results_volumes.RESULTS_DIR, 'volumes_width.json')
# The methods on volumes whose rows this measures (the goal's).
METHODS = ('pairs', 'neighbor2neighbor', 'blind_spot')
# Calibration runs log every 10 steps, so that the median of their seconds per
# step leaves out the first interval (tracing): see the docstring.
CALIBRATION_FLAGS = ('--log_every=10',)

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'results_volumes_width'),
                      'Where the runs and their logs go.')
  flags.DEFINE_list('z_steps', ['2', '4'], 'Phantom z steps (xy pixels) to measure at, of '
                    f'{", ".join(f"{z:g}" for z in z_context.Z_STEPS)}.')
  flags.DEFINE_list('methods', ['neighbor2neighbor', 'pairs'],
                    f'Methods to measure, of {", ".join(METHODS)}.')
  flags.DEFINE_integer('width_3d', 24, 'The 3D network\'s width.', lower_bound=1)
  flags.DEFINE_integer('xy_conv_levels_3d', 0, 'The 3D network\'s in-plane levels '
                       '(--xy_conv_levels; 0: every convolution 3x3x3).', lower_bound=0,
                       upper_bound=config_lib.RESOLUTION_LEVELS)
  flags.DEFINE_list('widths_2d', [str(config_lib.PAPER_NETWORK_WIDTH), '24'],
                    'The widths of the 2D-per-plane networks, each trained for the 3D run\'s '
                    'training time.')
  flags.DEFINE_integer('steps_3d', 600, 'Steps of the 3D runs (the page\'s: 600).',
                       lower_bound=1)
  flags.DEFINE_boolean('allow_dirty', False, 'Train and measure from a changed checkout.')


def row_key(row):
  """(z step, method, the 3D network's in-plane levels) of a row, the levels as
  its 3D run recorded them: runs before in-plane levels had none."""
  return (float(row['z_step']), row['method'], row['3d'].get('xy_conv_levels', 0))


def run_names(z_step, method, width_3d, widths_2d, xy_conv_levels_3d=0):
  """{'3d': run, ('2d', width): run, ('calibration', width): run} folder names."""
  where = f'{method}_z{z_step:g}' + (f'_xy{xy_conv_levels_3d}' if xy_conv_levels_3d else '')
  names = {'3d': f'{where}_3d_w{width_3d}'}
  for width in widths_2d:
    names[('2d', width)] = f'{where}_2d_w{width}'
    names[('calibration', width)] = f'{where}_calibration_2d_w{width}'
  return names


def measure_row(z_step, method, runs_dir, steps_3d, width_3d, widths_2d, stamp,
                xy_conv_levels_3d=0):
  """Trains the 3D network (width_3d, xy_conv_levels_3d in-plane levels,
  steps_3d steps) and the 2D network per
  plane at each of widths_2d for the 3D run's training time, on the phantom at
  z_step (30 photons), and scores each on the held-out volumes. Returns the
  row: {'z_step', 'method', 'spec' (the phantom's, as z_context records it),
  'input_psnr', '3d': run, '2d': [run per width]}; each
  run records the width and in-plane levels its config.json says, and each 2D
  run its calibration's seconds per step."""
  peak = results_volumes.SPEC.peak_photons
  data = z_context.data_folder(z_step, peak)
  white_level = z_context.WHITE_LEVELS[peak]
  results_volumes.ensure_volumes(z_context.spec_at(z_step, peak), data, white_level)
  names = run_names(z_step, method, width_3d, widths_2d, xy_conv_levels_3d)

  def flags_for(dims, width):
    return (f'--train_data={os.path.join(data, f"records_{dims}d")}', f'--network_width={width}')

  def record(name, dims, steps, wall):
    model_dir = os.path.join(runs_dir, name)
    model = restore.read_run_config(model_dir).model
    return {**results_volumes.run_record(model_dir, dims, method, steps, wall, stamp),
            'network_width': model.network_width,
            'xy_conv_levels': model.xy_conv_levels if dims == 3 else 0}

  wall = results_volumes.train(names['3d'], 3, method, steps_3d, runs_dir,
                               flags_for(3, width_3d) +
                               (f'--xy_conv_levels={xy_conv_levels_3d}',))
  deep = record(names['3d'], 3, steps_3d, wall)
  flats = []
  for width in widths_2d:
    steps, wall, calibrated = results_volumes.train_2d_for(
        deep['training_seconds'], method, names[('2d', width)], names[('calibration', width)],
        runs_dir, flags_for(2, width), CALIBRATION_FLAGS)
    flats.append({**record(names[('2d', width)], 2, steps, wall),
                  'calibration_seconds_per_step': calibrated})
  tests = results_volumes.test_volumes(data, white_level)
  scored = [(deep, names['3d'])] + [(flat, names[('2d', width)])
                                    for flat, width in zip(flats, widths_2d)]
  for run, name in scored:
    run['psnr'] = results_volumes.score(os.path.join(runs_dir, name), run['dims'], tests)
  return {'z_step': z_step, 'method': method, 'spec': z_context.spec_record(z_step, peak),
          'input_psnr': [results_volumes.psnr(noisy[..., 0], reference)
                         for noisy, reference in tests],
          '3d': deep, '2d': flats}


def parse_z_steps(values):
  """--z_steps as floats; ValueError naming a value that is no number, a repeat,
  or not one of z_context.Z_STEPS (the z steps whose white level was chosen)."""

  def check(z_step):
    if z_step not in z_context.Z_STEPS:
      raise ValueError(f'z step {z_step:g}: not one of '
                       f'{", ".join(f"{z:g}" for z in z_context.Z_STEPS)}')

  return z_context.parse_list(values, 'z_steps', check)


def parse_widths(values):
  """--widths_2d as ints; ValueError naming a value that is no whole number of
  1 or more, or a repeat."""

  def check(width):
    if not width.is_integer() or width < 1:
      raise ValueError(f'{width:g} is not a whole number of 1 or more')

  return [int(width) for width in z_context.parse_list(values, 'widths_2d', check)]


def kept_rows(previous, row_keys):
  """The rows of an earlier JSON whose row_key is not in row_keys; ValueError
  naming a row measured on another phantom than z_context's now."""
  kept = []
  for row in (previous or {}).get('rows', []):
    key = row_key(row)
    if key in row_keys:
      continue
    if row.get('spec') != z_context.spec_record(key[0], results_volumes.SPEC.peak_photons):
      raise ValueError(f'the {row["method"]} row at z step {key[0]:g} in {RESULTS_JSON} was '
                       'measured on another phantom; measure it again (--z_steps, --methods) '
                       'or remove it')
    kept.append(row)
  return kept


def main(argv):
  del argv
  try:
    z_steps = parse_z_steps(FLAGS.z_steps)
    widths_2d = parse_widths(FLAGS.widths_2d)
    z_context.parse_methods(FLAGS.methods, 'methods', METHODS)
  except ValueError as error:
    raise SystemExit(str(error)) from None
  if not FLAGS.allow_dirty:
    provenance.require_clean_tree(REPO_ROOT, False)
  levels = FLAGS.xy_conv_levels_3d
  measured = [(z_step, method, levels) for z_step in z_steps for method in FLAGS.methods]
  results_volumes.refuse_existing_runs(
      FLAGS.runs_dir, [name for z_step, method, _ in measured
                       for name in run_names(z_step, method, FLAGS.width_3d, widths_2d,
                                             levels).values()])
  previous = read_results()
  try:
    kept_rows(previous, set(measured))
  except ValueError as error:
    raise SystemExit(str(error)) from None
  os.makedirs(FLAGS.runs_dir, exist_ok=True)
  stamp = {**provenance.stamp(REPO_ROOT), 'precision': hardware.resolve_precision('auto')}
  rows = []
  for z_step, method, _ in measured:
    row = measure_row(z_step, method, FLAGS.runs_dir, FLAGS.steps_3d, FLAGS.width_3d,
                      widths_2d, stamp, levels)
    rows.append(row)
    print(f'z step {z_step:g}, {method}: 3D (width {FLAGS.width_3d}, in-plane levels {levels}) '
          f'{statistics.mean(row["3d"]["psnr"]):.2f} dB; 2D ' +
          ', '.join(f'width {flat["network_width"]} {statistics.mean(flat["psnr"]):.2f} dB'
                    for flat in row['2d']), flush=True)
    # Written after every row, keeping the earlier rows not measured yet, so
    # that a stopped run keeps what it measured and loses nothing.
    done = {row_key(done_row) for done_row in rows}
    results = {'rows': sorted(kept_rows(previous, done) + rows, key=lambda row: (
        -float(row['z_step']), METHODS.index(row['method']), row_key(row)[2]))}
    with open(RESULTS_JSON, 'w') as output:
      json.dump(results, output, indent=1)
      output.write('\n')
  print(f'wrote {RESULTS_JSON}')


def read_results():
  """docs/results/volumes_width.json, or None before the first measurement."""
  return results_volumes.read_json(RESULTS_JSON)


def section(results, goal_db=results_volumes.GOAL_DB):
  """Markdown lines of the width table, from read_results()."""
  if not results or not results['rows']:
    return []
  out = ['### A narrower 3D network: more steps in the same time', '',
         'The table\'s 3D network is the paper\'s (width 48): in equal training time it takes '
         'far fewer steps than the 2D one. Here the 3D network is narrower '
         '(`--network_width`), and in some rows its convolutions at the finest resolution '
         'levels are in-plane, 1x3x3 (`--xy_conv_levels`; the 3D cell says how many levels), '
         'so each of its steps costs less, and the 2D network per plane '
         'trains for the 3D run\'s training time at each width the row names, each from its own '
         'calibration run (logged every 10 steps, so that its seconds per step leave out the '
         'first interval\'s tracing). Phantoms at the z steps the rows name (the table\'s at 4; '
         'the same objects at finer ones, as in the section above), 30 photons; configs and '
         'scoring as the table\'s, at the precision `auto` picks on the host the last column '
         'names; one seed per row; the best 2D width is picked on the same held-out '
         'volumes. Steps and training seconds: the 3D run\'s, then the 2D runs\' in the order '
         'of their column. Made by `bench/results/volumes_width.py`.', '',
         '| z step | method | noisy | 3D (width) | 2D per plane (width) | 3D - best 2D | '
         'steps 3D / 2D | training s 3D / 2D | measured at |',
         '|---|---|---|---|---|---|---|---|---|']
  met = []
  for row in results['rows']:
    deep = row['3d']
    best = max(row['2d'], key=lambda flat: statistics.mean(flat['psnr']))
    gain = statistics.mean(deep['psnr']) - statistics.mean(best['psnr'])
    flats = '; '.join(f'{statistics.mean(flat["psnr"]):.2f} ({flat["network_width"]})'
                      for flat in row['2d'])
    steps = ' / '.join(str(flat['steps']) for flat in row['2d'])
    seconds = ' / '.join(f'{flat["training_seconds"]:.0f}' for flat in row['2d'])
    levels = deep.get('xy_conv_levels')
    in_plane = (f'; in-plane at {levels} level{"s" if levels > 1 else ""}'
                if levels else '')
    out.append(f'| {float(row["z_step"]):g} | {results_volumes.METHOD_SHORT[row["method"]]} | '
               f'{statistics.mean(row["input_psnr"]):.2f} | '
               f'{statistics.mean(deep["psnr"]):.2f} ({deep["network_width"]}{in_plane}) | '
               f'{flats} | '
               f'{gain:+.2f} | {deep["steps"]} / {steps} | '
               f'{deep["training_seconds"]:.0f} / {seconds} | '
               f'{deep["commit"]} on {deep["machine"]}, {deep["precision"]}, {deep["date"]} |')
    if round(gain, 2) >= goal_db:
      met.append(f'{results_volumes.METHOD_SHORT[row["method"]]} at z step '
                 f'{float(row["z_step"]):g}{in_plane}')
  out += ['', f'3D ahead of the best 2D per plane by {goal_db:g} dB or more: '
          f'{", ".join(met) if met else "in no row"}.', '']
  return out


if __name__ == '__main__':
  define_flags()
  app.run(main)
