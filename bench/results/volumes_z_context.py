"""How much the neighbouring planes are worth on the phantom, by z step and light:
the best separable Gaussian filter over xy alone against the best over z too, and
the networks of the table (3D against 2D per plane at equal training time) at
other z steps and photon counts.

  python -m bench.results.volumes_z_context   # -> docs/results/volumes_z_context.json
  python -m bench.results.grid --render_only  # the "Volumes and movies" section

A 3D network can beat a 2D one per plane only by what the neighbouring planes tell
about a plane's signal. That depends on how finely z samples the objects and the
point-spread function: planes far apart (a z step near the PSF's axial width) share
little. This measures it without training anything, on the phantom of the table
(bench/results/volumes.py: its held-out seeds, its first acquisitions, PSNR against the
reference as the table scores) sampled at other z steps: the same objects in the same
physical depth (32 planes at z step 4 are 64 at z step 2 and 128 at z step 1),
imaged with the table's peak photons (30) and with fewer (10, 5: the same objects
and the same seeds, noisier). The fewer photons a plane has, the more its signal
is told from noise by what its neighbours share. For each, the best Gaussian blur in xy only (sigma_z = 0) and the best in xyz, over a grid
of widths. A linear filter shows how much signal the neighbouring planes share, not
what a network can make of it. The filters take about 8 minutes on 2 cores.

Then, at each of --network_z_steps and --network_peak_photons, the rows of
--network_methods in the table are measured again on that phantom (data in
data/volumes/z_step_Z[_peak_P], written once, with the spec it was written from): the 3D network for the table's steps, the 2D
network per plane for the time a short calibration run predicts for it (as the table
does), scored as the table scores (bench/results/volumes.py's functions and configs;
15 to 25 minutes per phantom and method on 2 cores). Rows not measured again are
kept with their commit if the phantom they were measured on is the one of now.
Each photon count has its white level (WHITE_LEVELS), so that the data fill most
of the network's 0-1 range at each (with the table's 600 at every count, the
networks at 5 photons all scored below a Gaussian blur: this JSON at 8dae7de). Trains and
measures from a clean checkout only (as bench/results/grid.py).
"""

import dataclasses
import json
import os
import shutil
import statistics

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.data import gaussian_blur  # pylint: disable=g-import-not-at-top
from n2n.data import phantom  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top

RESULTS_JSON = os.path.join(results_volumes.RESULTS_DIR, 'volumes_z_context.json')
Z_STEPS = (4.0, 2.0, 1.0)
# Peak photons of the filters' rows: the table's, then dimmer.
PEAK_PHOTONS = (results_volumes.SPEC.peak_photons, 10.0, 5.0)
# The white level of the networks' data at each photon count: the brightest
# noisy count of the phantom's stacks at any of Z_STEPS, rounded up to 50 (600,
# 350 and 271 counts, all at z step 1). Networks train only at these photons.
WHITE_LEVELS = {results_volumes.SPEC.peak_photons: results_volumes.WHITE_LEVEL,
                10.0: 350.0, 5.0: 300.0}
# Blur widths searched, standard deviations: xy in pixels, z in planes (0: xy only).
SIGMAS_XY = (0.6, 0.8, 1.0, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0)
SIGMAS_Z = (0.0, 0.25, 0.4, 0.5, 0.6, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)

# The table's methods on volumes that this can measure at other z steps.
NETWORK_METHODS = ('pairs', 'neighbor2neighbor', 'blind_spot')

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'results_volumes_z_context'),
                      'Where the network runs and their logs go.')
  flags.DEFINE_list('network_z_steps', ['2', '1'], 'The z steps at which the networks train '
                    'and are scored (the table above is z step '
                    f'{results_volumes.SPEC.z_spacing:g}); empty for the filters only.')
  flags.DEFINE_list('network_peak_photons', [f'{results_volumes.SPEC.peak_photons:g}'],
                    'The peak photons of the phantoms the networks train and are scored on '
                    '(at each of --network_z_steps).')
  flags.DEFINE_list('network_methods', ['pairs'], 'The methods trained on each of those '
                    f'phantoms, of {", ".join(NETWORK_METHODS)}. Rows of other phantoms '
                    'and methods are kept from the JSON with the commit they were measured at.')
  flags.DEFINE_boolean('allow_dirty', False, 'Train and measure from a changed checkout.')


def spec_at(z_step, peak_photons=None):
  """The table's phantom spec sampled at z_step: the same physical depth (and so
  the same objects for a seed) in as many planes as that takes, imaged with
  peak_photons (None: the table's); ValueError naming z_step where that is no
  whole number of planes, or a value that is not positive."""
  spec = results_volumes.SPEC
  if peak_photons is None:
    peak_photons = spec.peak_photons
  if not peak_photons > 0:
    raise ValueError(f'peak photons {peak_photons:g}: not a positive number')
  return dataclasses.replace(phantom.at_z_step(spec, z_step), peak_photons=peak_photons)


def spec_record(z_step, peak_photons=None):
  """What a measurement at z_step and peak_photons (one of WHITE_LEVELS; None:
  the table's) depends on, as the JSON records it."""
  spec = spec_at(z_step, peak_photons)
  return results_volumes.volume_record(spec, WHITE_LEVELS[spec.peak_photons])


def data_folder(z_step, peak_photons):
  """data/volumes/z_step_Z, with _peak_P where P is not the table's photons."""
  light = ('' if peak_photons == results_volumes.SPEC.peak_photons
           else f'_peak_{peak_photons:g}')
  return os.path.join(results_volumes.DATA, f'z_step_{z_step:g}{light}')


def best_blur(volumes, sigmas_z):
  """(mean PSNR dB, sigma_z, sigma_xy) of the best blur over the grid with sigma_z
  in sigmas_z, each blur scored by its mean PSNR over volumes [(noisy [Z, Y, X]
  float64, reference [Z, Y, X] float64)]."""
  scores = lambda sigma_z, sigma: [
      results_volumes.psnr(gaussian_blur.blur(noisy, (sigma_z, sigma, sigma)), reference)
      for noisy, reference in volumes]
  return max((float(np.mean(scores(sigma_z, sigma))), sigma_z, sigma)
             for sigma_z in sigmas_z for sigma in SIGMAS_XY)


def measure(z_step, peak_photons):
  """{z_step, peak_photons, shape, input, xy, xyz} of the held-out phantom volumes."""
  spec = spec_at(z_step, peak_photons)
  volumes = []
  for seed in results_volumes.TEST_SEEDS:
    captures, reference = phantom.phantom_scene(spec, seed)
    volumes.append((captures[0].astype(np.float64), reference.astype(np.float64)))
  keys = ('psnr', 'sigma_z', 'sigma_xy')
  return {'z_step': z_step, 'peak_photons': peak_photons, 'shape': list(spec.shape),
          'input': float(np.mean([results_volumes.psnr(noisy, reference)
                                  for noisy, reference in volumes])),
          'xy': dict(zip(keys, best_blur(volumes, (0.0,)))),
          'xyz': dict(zip(keys, best_blur(volumes, SIGMAS_Z)))}


def train_and_score(z_step, peak_photons, method, runs_dir, stamp):
  """{dims: run} of the method's networks on the phantom at z_step and
  peak_photons, trained as the table's row (results_volumes.train_equal_time)
  and scored on its held-out volumes."""
  data = data_folder(z_step, peak_photons)
  white_level = WHITE_LEVELS[peak_photons]
  names = run_names(z_step, peak_photons, method)
  results_volumes.ensure_volumes(spec_at(z_step, peak_photons), data, white_level)
  runs = results_volumes.train_equal_time(
      method, runs_dir, names, results_volumes.THREE_D_STEPS,
      {dims: (f'--train_data={os.path.join(data, f"records_{dims}d")}',) for dims in (2, 3)},
      stamp)
  tests = results_volumes.test_volumes(data, white_level)
  for dims, run in runs.items():
    run['psnr'] = results_volumes.score(os.path.join(runs_dir, names[dims]), dims, tests)
  return runs


def run_names(z_step, peak_photons, method):
  """{3: run, 2: run, 'calibration': 2D run} folder names of a method on a phantom."""
  phantom_name = f'z{z_step:g}_p{peak_photons:g}'
  return {3: f'{method}_3d_{phantom_name}', 2: f'{method}_2d_{phantom_name}',
          'calibration': f'calibration_2d_{method}_{phantom_name}'}


def row_peak_photons(row):
  """A network row's peak photons (rows of the first format have no spec: they
  were at the table's)."""
  return float(row.get('spec', {}).get('peak_photons', results_volumes.SPEC.peak_photons))


def measured_now(row):
  """Whether a network row was measured on the phantom and white level that
  spec_at and WHITE_LEVELS give now (a row without a spec, or at photons
  without a white level, was not)."""
  peak = row_peak_photons(row)
  return peak in WHITE_LEVELS and row.get('spec') == spec_record(float(row['z_step']), peak)


def kept_networks(previous, measured):
  """The network rows of an earlier JSON that this run does not measure again
  (keys (z step, peak photons, method) in measured), each with the commit,
  machine and date it was measured at (rows of the first format: pairs, the
  file's own stamp); ValueError naming a row to keep that was measured on
  another phantom."""
  kept = []
  for row in (previous or {}).get('networks', []):
    row = {'method': 'pairs', **{field: previous[field] for field in ('commit', 'machine', 'date')},
           **row}
    key = (float(row['z_step']), row_peak_photons(row), row['method'])
    if key in measured:
      continue
    if not measured_now(row):
      raise ValueError(f'the {row["method"]} row at z step {key[0]:g}, {key[1]:g} photons in '
                       f'{RESULTS_JSON} was measured on another phantom or white level; '
                       'measure it again (--network_z_steps, --network_peak_photons, '
                       '--network_methods) or remove it')
    kept.append(row)
  return kept


def parse_list(values, flag, check):
  """values of a list flag as floats; ValueError naming a value that is no
  number, a repeat, or one check(value) refuses (its ValueError)."""
  parsed = []
  for value in values:
    try:
      number = float(value)
    except ValueError:
      raise ValueError(f'--{flag}: {value!r} is not a number') from None
    if number in parsed:
      raise ValueError(f'--{flag}: {value} is given twice')
    try:
      check(number)
    except ValueError as error:
      raise ValueError(f'--{flag}: {error}') from None
    parsed.append(number)
  return parsed


def parse_methods(values, flag, known):
  """values of a list flag of methods; ValueError naming one not in known, or a repeat."""
  unknown = sorted(set(values) - set(known))
  if unknown:
    raise ValueError(f'--{flag}: {", ".join(unknown)} not one of {", ".join(known)}')
  if len(set(values)) != len(values):
    raise ValueError(f'--{flag}: {",".join(values)} names a method twice')
  return list(values)


def parse_z_steps(values):
  """--network_z_steps as floats; ValueError naming a value that is no positive
  number, a repeat, or no whole number of planes (spec_at)."""
  return parse_list(values, 'network_z_steps', spec_at)


def parse_peak_photons(values):
  """--network_peak_photons as floats; ValueError naming a value that is no
  positive number, a repeat, or has no white level (WHITE_LEVELS)."""

  def check(peak):
    spec_at(results_volumes.SPEC.z_spacing, peak)
    if peak not in WHITE_LEVELS:
      raise ValueError(f'{peak:g} photons: no white level chosen for it; one of '
                       f'{", ".join(f"{known:g}" for known in WHITE_LEVELS)}')

  return parse_list(values, 'network_peak_photons', check)


def main(argv):
  del argv
  try:
    z_steps = parse_z_steps(FLAGS.network_z_steps)
    peaks = parse_peak_photons(FLAGS.network_peak_photons)
    parse_methods(FLAGS.network_methods, 'network_methods', NETWORK_METHODS)
  except ValueError as error:
    raise SystemExit(str(error)) from None
  if z_steps and not FLAGS.allow_dirty:
    provenance.require_clean_tree(REPO_ROOT, False)
  measured = [(z_step, peak, method) for peak in peaks for z_step in z_steps
              for method in FLAGS.network_methods]
  results_volumes.refuse_existing_runs(
      FLAGS.runs_dir, [name for z_step, peak, method in measured
                       for name in run_names(z_step, peak, method).values()])
  os.makedirs(FLAGS.runs_dir, exist_ok=True)
  stamp = provenance.stamp(REPO_ROOT)
  results = {**stamp,
             'spec': spec_record(results_volumes.SPEC.z_spacing),
             'z_steps': [measure(z_step, peak) for peak in PEAK_PHOTONS for z_step in Z_STEPS]}
  for row in results['z_steps']:
    print(f'z step {row["z_step"]:g}, {row["peak_photons"]:g} photons: xy {row["xy"]["psnr"]:.2f} dB, xyz '
          f'{row["xyz"]["psnr"]:.2f} dB ({row["xyz"]["psnr"] - row["xy"]["psnr"]:+.2f})',
          flush=True)
  try:
    networks = kept_networks(read_results(), set(measured))
  except ValueError as error:
    raise SystemExit(str(error)) from None
  for z_step, peak, method in measured:
    runs = train_and_score(z_step, peak, method, FLAGS.runs_dir, stamp)
    networks.append({'z_step': z_step, 'method': method, **stamp,
                     'spec': spec_record(z_step, peak),
                     f'{method}_3d': runs[3], f'{method}_2d': runs[2]})
    print(f'z step {z_step:g}, {peak:g} photons, {method}: 3D {np.mean(runs[3]["psnr"]):.2f} dB, '
          f'2D per plane {np.mean(runs[2]["psnr"]):.2f} dB', flush=True)
  results['networks'] = sorted(networks, key=lambda row: (
      -float(row['spec']['peak_photons']), -float(row['z_step']),
      NETWORK_METHODS.index(row['method'])))
  with open(RESULTS_JSON, 'w') as output:
    json.dump(results, output, indent=1)
  print(f'wrote {RESULTS_JSON}')


def read_results():
  """docs/results/volumes_z_context.json, or None before the first measurement."""
  return results_volumes.read_json(RESULTS_JSON)


def _stamp(flat, deep, default):
  """'commit on machine, date' of a 2D and a 3D run (both named where they differ)."""
  stamps = [' on '.join(filter(None, (run.get('commit', default['commit']),
                                      run.get('machine', default.get('machine')))))
            for run in (flat, deep)]
  return stamps[0] if stamps[0] == stamps[1] else f'2D: {stamps[0]}; 3D: {stamps[1]}'


def table_matches(table):
  """Whether the table's JSON (results_volumes.read_results()) was measured on
  the phantom that spec_at gives at its z step."""
  spec = spec_at(float(table['spec']['z_spacing']))
  return (list(table['spec']['shape']) == list(spec.shape) and
          table['spec']['peak_photons'] == spec.peak_photons and
          table['spec']['read_noise'] == spec.read_noise)


def current_networks(results):
  """The network rows of results measured on the phantom and white level that
  spec_at and WHITE_LEVELS give now (measured_now)."""
  return [row for row in results.get('networks', []) if measured_now(row)]


def network_rows(results, table):
  """[(z step, peak photons, method, 2D dB, 3D dB, steps 2D / 3D, training s
  2D / 3D, measured at)]: the table's own rows (bench/results/volumes.py), if
  measured on this phantom, then the networks measured here (current_networks)."""
  rows = []
  pairs = []
  if table is not None and table_matches(table):
    for method in NETWORK_METHODS:
      if f'{method}_2d' in table['runs'] and f'{method}_3d' in table['runs']:
        pairs.append((float(table['spec']['z_spacing']), float(table['spec']['peak_photons']),
                       method, table['runs'][f'{method}_2d'], table['runs'][f'{method}_3d'],
                       table, ' (the table above)'))
  for row in current_networks(results):
    method = row.get('method', 'pairs')
    stamped = {field: row.get(field, results[field]) for field in ('commit', 'machine', 'date')}
    pairs.append((float(row['z_step']), float(row['spec']['peak_photons']), method,
                  {**stamped, **row[f'{method}_2d']}, {**stamped, **row[f'{method}_3d']},
                  results, ''))
  for z_step, peak, method, flat, deep, default, note in pairs:
    rows.append((z_step, peak, method, statistics.mean(flat['psnr']),
                 statistics.mean(deep['psnr']),
                 f'{flat["steps"]} / {deep["steps"]}',
                 f'{flat["training_seconds"]:.0f} / {deep["training_seconds"]:.0f}',
                 _stamp(flat, deep, default) + note))
  return rows


def section(results, table=None, goal_db=results_volumes.GOAL_DB):
  """Markdown lines of the z-context tables, from read_results() and the table's
  results_volumes.read_results()."""
  if results is None:
    return []
  spec = results['spec']
  axial = spec['psf_sigma_xy'] * spec['psf_axial_ratio']
  out = ['### What the neighbouring planes are worth, by z step and light', '',
         'The phantom of the table sampled at other z steps: the same objects in the same '
         f'depth ({spec["shape"][0]} planes at z step {spec["z_spacing"]:g}; the PSF\'s axial '
         f'standard deviation is {axial:g} xy pixels), imaged with the table\'s '
         f'{spec["peak_photons"]:g} photons at the brightest structure and with fewer (the same '
         'objects, noisier). On the held-out volumes\' first acquisitions, the best separable '
         'Gaussian blur in xy alone against the best that also blurs along z (widths searched '
         'on a grid). A linear filter shows how much signal the neighbouring planes share, '
         'not what a network can make of it. '
         f'Made by `bench/results/volumes_z_context.py` at {results["commit"]} on '
         f'{results["machine"]}, {results["date"]}.', '',
         '| peak photons | z step (xy pixels) | planes | axial PSF s.d. (planes) | noisy | '
         'blur in xy | blur in xyz (its sigma z, planes) | xyz - xy |',
         '|---|---|---|---|---|---|---|---|']
  for row in results['z_steps']:
    planes = row.get('shape', [''])[0]
    peak = row.get('peak_photons', spec['peak_photons'])
    out.append(f'| {peak:g} | {row["z_step"]:g} | {planes} | {axial / row["z_step"]:.2f} | '
               f'{row["input"]:.2f} | {row["xy"]["psnr"]:.2f} | {row["xyz"]["psnr"]:.2f} '
               f'({row["xyz"]["sigma_z"]:g}) | {row["xyz"]["psnr"] - row["xy"]["psnr"]:+.2f} |')
  rows = network_rows(results, table)
  if not rows:
    return out + ['']
  levels = ', '.join(f'{level:g} counts at {peak:g} photons'
                     for peak, level in sorted(WHITE_LEVELS.items(), reverse=True))
  out += ['', 'The networks of the table on the phantoms each row names, trained and scored as '
          'there: 3D for the table\'s steps, 2D per plane for the time a short calibration run '
          'predicts (one seed per row). Their data\'s white level follows the photons '
          f'({levels}), so that the counts fill most of the network\'s 0-1 range at each:', '',
          '| peak photons | z step | method | 2D per plane | 3D | 3D - 2D | steps 2D / 3D | '
          'training s 2D / 3D | measured at |',
          '|---|---|---|---|---|---|---|---|---|']
  for z_step, peak, method, flat, deep, steps, seconds, stamp in rows:
    out.append(f'| {peak:g} | {z_step:g} | {results_volumes.METHOD_SHORT[method]} | '
               f'{flat:.2f} | {deep:.2f} | {deep - flat:+.2f} | {steps} | {seconds} | {stamp} |')
  met = [f'{results_volumes.METHOD_SHORT[method]} at z step {z_step:g}, {peak:g} photons'
         for z_step, peak, method, flat, deep, _, _, _ in rows
         if round(deep - flat, 2) >= goal_db]
  out += ['', f'3D ahead of 2D per plane by {goal_db:g} dB or more: '
          f'{", ".join(met) if met else "in no row"}.']
  blur_xy = {(float(row['z_step']), float(row.get('peak_photons', spec['peak_photons']))):
             row['xy']['psnr'] for row in results['z_steps']}
  below = []
  for z_step, peak, method, flat, deep, _, _, _ in rows:
    blur = blur_xy.get((z_step, peak))
    # Compared as the tables show them, to 0.01 dB.
    losers = [name for name, score in (('2D', flat), ('3D', deep))
              if blur is not None and round(score, 2) < round(blur, 2)]
    if losers:
      below.append(f'{results_volumes.METHOD_SHORT[method]} {" and ".join(losers)} at z step '
                   f'{z_step:g}, {peak:g} photons')
  if below:
    out[-1] += (' Networks that scored below the best blur in xy alone of their phantom (the '
                f'first table): {"; ".join(below)}.')
  stale = len(results.get('networks', [])) - len(current_networks(results))
  if stale:
    out[-1] += (f' Left out: {stale} row{"s" if stale > 1 else ""} of the JSON measured on '
                'another phantom or white level than these.')
  return out + ['']


if __name__ == '__main__':
  define_flags()
  app.run(main)
