"""How much the neighbouring planes are worth on the phantom, by z step: the best
separable Gaussian filter over xy alone against the best over z too, and the
networks of the table (3D against 2D per plane at equal training time) at other z steps.

  python tools/results_volumes_z_context.py   # -> docs/results/volumes_z_context.json
  python tools/results_grid.py --render_only  # the "Volumes and movies" section

A 3D network can beat a 2D one per plane only by what the neighbouring planes tell
about a plane's signal. That depends on how finely z samples the objects and the
point-spread function: planes far apart (a z step near the PSF's axial width) share
little. This measures it without training anything, on the phantom of the table
(tools/results_volumes.py: its held-out seeds, its first acquisitions, PSNR against the
reference as the table scores) sampled at other z steps: the same objects in the same
physical depth (32 planes at z step 4 are 64 at z step 2 and 128 at z step 1). For
each, the best Gaussian blur in xy only (sigma_z = 0) and the best in xyz, over a grid
of widths. A linear filter shows how much signal the neighbouring planes share, not
what a network can make of it. The filters take under a minute on a CPU.

Then, at each of --network_z_steps, the rows of --network_methods in the table are
measured again on the phantom at that z step (data in data/volumes/z_step_Z, written
once, with the spec it was written from): the 3D network for the table's steps, the 2D
network per plane for the time a short calibration run predicts for it (as the table
does), scored as the table scores (tools/results_volumes.py's functions and configs;
15 to 25 minutes per z step and method on 2 cores). Rows not measured again are kept
with their commit if the phantom they were measured on is the one of now. Trains and
measures from a clean checkout only (as tools/results_grid.py).
"""

import dataclasses
import json
import os
import shutil
import statistics
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.quiet_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.data import phantom  # pylint: disable=g-import-not-at-top
from tools import provenance  # pylint: disable=g-import-not-at-top
from tools import results_volumes  # pylint: disable=g-import-not-at-top

RESULTS_JSON = os.path.join(results_volumes.RESULTS_DIR, 'volumes_z_context.json')
Z_STEPS = (4.0, 2.0, 1.0)
# Blur widths searched, standard deviations: xy in pixels, z in planes (0: xy only).
SIGMAS_XY = (0.6, 0.8, 1.0, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5)
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
  flags.DEFINE_list('network_methods', ['pairs'], 'The methods trained at each of '
                    f'--network_z_steps, of {", ".join(NETWORK_METHODS)}. Rows of other z steps '
                    'and methods are kept from the JSON with the commit they were measured at.')
  flags.DEFINE_boolean('allow_dirty', False, 'Train and measure from a changed checkout.')


def spec_at(z_step):
  """The table's phantom spec sampled at z_step: the same physical depth (and so
  the same objects for a seed) in as many planes as that takes; ValueError naming
  z_step where that is no whole number of planes."""
  spec = results_volumes.SPEC
  if not z_step > 0:
    raise ValueError(f'z step {z_step:g}: not a positive number')
  planes = spec.shape[0] * spec.z_spacing / z_step
  if abs(planes - round(planes)) > 1e-9:
    raise ValueError(f'z step {z_step:g}: the table\'s {spec.shape[0]} planes at z step '
                     f'{spec.z_spacing:g} are no whole number of planes at it')
  return dataclasses.replace(spec, z_spacing=z_step, shape=(int(round(planes)),) + spec.shape[1:])


def spec_record(z_step):
  """What a measurement at z_step depends on, as the JSON records it."""
  return {**dataclasses.asdict(spec_at(z_step)), 'shape': list(spec_at(z_step).shape),
          'train_seeds': list(results_volumes.TRAIN_SEEDS),
          'test_seeds': list(results_volumes.TEST_SEEDS),
          'white_level': results_volumes.WHITE_LEVEL,
          'three_d_steps': results_volumes.THREE_D_STEPS,
          'calibration_steps': results_volumes.CALIBRATION_STEPS}


def best_blur(volumes, sigmas_z):
  """(mean PSNR dB, sigma_z, sigma_xy) of the best blur over the grid with sigma_z
  in sigmas_z, each blur scored by its mean PSNR over volumes [(noisy [Z, Y, X]
  float64, reference [Z, Y, X] float64)]."""
  return max((float(np.mean([results_volumes.psnr(phantom.blur(noisy, (sigma_z, sigma, sigma)),
                                                   reference)
                             for noisy, reference in volumes])), sigma_z, sigma)
             for sigma_z in sigmas_z for sigma in SIGMAS_XY)


def measure(z_step):
  """{z_step, input, xy, xyz} of the held-out phantom volumes at z_step."""
  spec = spec_at(z_step)
  volumes = []
  for seed in results_volumes.TEST_SEEDS:
    captures, reference = phantom.phantom_scene(spec, seed)
    volumes.append((captures[0].astype(np.float64), reference.astype(np.float64)))
  keys = ('psnr', 'sigma_z', 'sigma_xy')
  return {'z_step': z_step, 'shape': list(spec.shape),
          'input': float(np.mean([results_volumes.psnr(noisy, reference)
                                  for noisy, reference in volumes])),
          'xy': dict(zip(keys, best_blur(volumes, (0.0,)))),
          'xyz': dict(zip(keys, best_blur(volumes, SIGMAS_Z)))}


def train_and_score(z_step, method, runs_dir):
  """{dims: run} of the method's networks on the phantom at z_step, as the table's row."""
  data = os.path.join(results_volumes.DATA, f'z_step_{z_step:g}')
  record = os.path.join(data, 'spec.json')
  if results_volumes.read_json(record) != spec_record(z_step):
    # Missing, or written from another phantom: write it again from scratch.
    shutil.rmtree(data, ignore_errors=True)
    results_volumes.prepare_volumes(spec_at(z_step), data)
    with open(record, 'w') as output:
      json.dump(spec_record(z_step), output, indent=1)
  runs, tests = {}, results_volumes.test_volumes(data)
  for dims in (3, 2):
    extra = (f'--train_data={os.path.join(data, f"records_{dims}d")}',)
    if dims == 3:
      steps = results_volumes.THREE_D_STEPS
    else:
      calibration = run_names(z_step, method)[1]
      results_volumes.train(calibration, 2, method, results_volumes.CALIBRATION_STEPS, runs_dir,
                            extra)
      steps = int(round(runs[3]['training_seconds'] / results_volumes.seconds_per_step(
          os.path.join(runs_dir, calibration))))
    name = run_names(z_step, method)[0 if dims == 3 else 2]
    results_volumes.train(name, dims, method, steps, runs_dir, extra)
    model_dir = os.path.join(runs_dir, name)
    denoise = results_volumes.denoiser(model_dir, dims)
    runs[dims] = {'steps': steps,
                  'training_seconds': steps * results_volumes.seconds_per_step(model_dir),
                  'psnr': [results_volumes.psnr(denoise(noisy)[..., 0], reference)
                           for noisy, reference in tests]}
  return runs


def run_names(z_step, method):
  """(3D run, 2D calibration, 2D run) folder names of a method at a z step."""
  return (f'{method}_3d_z{z_step:g}', f'calibration_2d_{method}_z{z_step:g}',
          f'{method}_2d_z{z_step:g}')


def kept_networks(previous, measured):
  """The network rows of an earlier JSON that this run does not measure again
  (keys (z step, method) in measured), each with the commit, machine and date it
  was measured at (rows of the first format: pairs, the file's own stamp);
  ValueError naming a row to keep that was measured on another phantom."""
  kept = []
  for row in (previous or {}).get('networks', []):
    row = {'method': 'pairs', **{field: previous[field] for field in ('commit', 'machine', 'date')},
           **row}
    key = (float(row['z_step']), row['method'])
    if key in measured:
      continue
    if row.get('spec') != spec_record(key[0]):
      raise ValueError(f'the {row["method"]} row at z step {key[0]:g} in {RESULTS_JSON} was '
                       'measured on another phantom; measure it again (--network_z_steps, '
                       '--network_methods)')
    kept.append(row)
  return kept


def parse_z_steps(values):
  """--network_z_steps as floats; ValueError naming a value that is no positive
  number, a repeat, or no whole number of planes (spec_at)."""
  z_steps = []
  for value in values:
    try:
      z_step = float(value)
    except ValueError:
      raise ValueError(f'--network_z_steps: {value!r} is not a number') from None
    if z_step in z_steps:
      raise ValueError(f'--network_z_steps: {value} is given twice')
    try:
      spec_at(z_step)
    except ValueError as error:
      raise ValueError(f'--network_z_steps: {error}') from None
    z_steps.append(z_step)
  return z_steps


def main(argv):
  del argv
  try:
    z_steps = parse_z_steps(FLAGS.network_z_steps)
  except ValueError as error:
    raise SystemExit(str(error)) from None
  unknown = sorted(set(FLAGS.network_methods) - set(NETWORK_METHODS))
  if unknown:
    raise SystemExit(f'--network_methods: {", ".join(unknown)} not one of '
                     f'{", ".join(NETWORK_METHODS)}')
  if len(set(FLAGS.network_methods)) != len(FLAGS.network_methods):
    raise SystemExit(f'--network_methods: {",".join(FLAGS.network_methods)} names a method twice')
  if z_steps and not FLAGS.allow_dirty:
    provenance.require_clean_tree(REPO_ROOT, False)
  measured = [(z_step, method) for z_step in z_steps for method in FLAGS.network_methods]
  for z_step, method in measured:
    for name in run_names(z_step, method):
      if os.path.exists(os.path.join(FLAGS.runs_dir, name)):
        # train.py would resume it: a run of older code stamped with this commit.
        raise SystemExit(f'{os.path.join(FLAGS.runs_dir, name)} exists from an earlier '
                         'measurement; remove it or pass another --runs_dir')
  os.makedirs(FLAGS.runs_dir, exist_ok=True)
  stamp = {'commit': provenance.commit(REPO_ROOT), 'machine': provenance.machine_description(),
           'date': time.strftime('%Y-%m-%d')}
  results = {**stamp,
             'spec': spec_record(results_volumes.SPEC.z_spacing),
             'z_steps': [measure(z_step) for z_step in Z_STEPS]}
  for row in results['z_steps']:
    print(f'z step {row["z_step"]:g}: xy {row["xy"]["psnr"]:.2f} dB, xyz '
          f'{row["xyz"]["psnr"]:.2f} dB ({row["xyz"]["psnr"] - row["xy"]["psnr"]:+.2f})',
          flush=True)
  try:
    networks = kept_networks(read_results(), set(measured))
  except ValueError as error:
    raise SystemExit(str(error)) from None
  for z_step, method in measured:
    runs = train_and_score(z_step, method, FLAGS.runs_dir)
    networks.append({'z_step': z_step, 'method': method, **stamp, 'spec': spec_record(z_step),
                     f'{method}_3d': runs[3], f'{method}_2d': runs[2]})
    print(f'z step {z_step:g}, {method}: 3D {np.mean(runs[3]["psnr"]):.2f} dB, 2D per plane '
          f'{np.mean(runs[2]["psnr"]):.2f} dB', flush=True)
  results['networks'] = sorted(networks, key=lambda row: (-float(row['z_step']),
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


def network_rows(results, table):
  """[(z step, method, 2D dB, 3D dB, steps 2D / 3D, training s 2D / 3D, measured
  at)]: the table's own rows (tools/results_volumes.py) at its z step, if measured
  on this phantom, then the networks measured here."""
  rows = []
  pairs = []
  if table is not None and table_matches(table):
    for method in NETWORK_METHODS:
      if f'{method}_2d' in table['runs'] and f'{method}_3d' in table['runs']:
        pairs.append((float(table['spec']['z_spacing']), method, table['runs'][f'{method}_2d'],
                      table['runs'][f'{method}_3d'], table, ' (the table above)'))
  for row in results.get('networks', []):
    method = row.get('method', 'pairs')
    stamped = {field: row.get(field, results[field]) for field in ('commit', 'machine', 'date')}
    pairs.append((float(row['z_step']), method, {**stamped, **row[f'{method}_2d']},
                  {**stamped, **row[f'{method}_3d']}, results, ''))
  for z_step, method, flat, deep, default, note in pairs:
    rows.append((z_step, method, statistics.mean(flat['psnr']), statistics.mean(deep['psnr']),
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
  out = ['### What the neighbouring planes are worth, by z step', '',
         'The phantom of the table sampled at other z steps: the same objects in the same '
         f'depth ({spec["shape"][0]} planes at z step {spec["z_spacing"]:g}; the PSF\'s axial '
         f'standard deviation is {axial:g} xy pixels). On the held-out volumes\' first '
         'acquisitions, the best separable Gaussian blur in xy alone against the best that '
         'also blurs along z (widths searched on a grid). A linear filter shows how much '
         'signal the neighbouring planes share, not what a network can make of it. '
         f'Made by `tools/results_volumes_z_context.py` at {results["commit"]} on '
         f'{results["machine"]}, {results["date"]}.', '',
         '| z step (xy pixels) | planes | axial PSF s.d. (planes) | noisy | blur in xy | '
         'blur in xyz (its sigma z, planes) | xyz - xy |',
         '|---|---|---|---|---|---|---|']
  for row in results['z_steps']:
    planes = row.get('shape', [''])[0]
    out.append(f'| {row["z_step"]:g} | {planes} | {axial / row["z_step"]:.2f} | '
               f'{row["input"]:.2f} | {row["xy"]["psnr"]:.2f} | {row["xyz"]["psnr"]:.2f} '
               f'({row["xyz"]["sigma_z"]:g}) | {row["xyz"]["psnr"] - row["xy"]["psnr"]:+.2f} |')
  rows = network_rows(results, table)
  if not rows:
    return out + ['']
  out += ['', 'The networks of the table on the phantom at those z steps, trained and scored as '
          'there: 3D for the table\'s steps, 2D per plane for the time a short calibration run '
          'predicts (one seed per row):', '',
          '| z step | method | 2D per plane | 3D | 3D - 2D | steps 2D / 3D | '
          'training s 2D / 3D | measured at |',
          '|---|---|---|---|---|---|---|---|']
  for z_step, method, flat, deep, steps, seconds, stamp in rows:
    out.append(f'| {z_step:g} | {results_volumes.METHOD_SHORT[method]} | {flat:.2f} | '
               f'{deep:.2f} | {deep - flat:+.2f} | {steps} | {seconds} | {stamp} |')
  met = [f'{results_volumes.METHOD_SHORT[method]} at z step {z_step:g}'
         for z_step, method, flat, deep, _, _, _ in rows if round(deep - flat, 2) >= goal_db]
  out += ['', f'3D ahead of 2D per plane by {goal_db:g} dB or more: '
          f'{", ".join(met) if met else "in no row"}.', '']
  return out


if __name__ == '__main__':
  define_flags()
  app.run(main)
