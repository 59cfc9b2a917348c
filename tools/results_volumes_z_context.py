"""How much the neighbouring planes are worth on the phantom, by z step: the best
separable Gaussian filter over xy alone against the best over z too, and the pairs
networks of the table (3D against 2D per plane at equal training time) at other z steps.

  python tools/results_volumes_z_context.py   # -> docs/results/volumes_z_context.json
  python tools/results_grid.py --render_only  # the "Volumes and movies" section

A 3D network can beat a 2D one per plane only by what the neighbouring planes tell
about a plane's signal. That depends on how finely z samples the objects and the
point-spread function: planes far apart (a z step near the PSF's axial width) share
little. This measures it without training anything, on the phantom of the table
(tools/results_volumes.py: its held-out seeds, its first acquisitions, PSNR against the
reference as the table scores) at several z steps, the xy size of the volume kept:
for each, the best Gaussian blur in xy only (sigma_z = 0) and the best in xyz, over a
grid of widths. A linear filter is a floor on what context is worth, not a ceiling:
a network may use it better. The filters take seconds on a CPU.

Then, at each of --network_z_steps, the Noise2Noise pairs row of the table is measured
again on a phantom at that z step (data in data/volumes/z_step_Z, written once): the 3D
network for the table's steps, the 2D network per plane for as long, scored as the table
scores (tools/results_volumes.py's functions and configs; about 15 minutes per z step on 2
cores). Trains and measures from a clean checkout only (as tools/results_grid.py).
"""

import dataclasses
import json
import os
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
SIGMAS_XY = (0.6, 0.8, 1.0, 1.2, 1.5, 2.0)
SIGMAS_Z = (0.0, 0.25, 0.4, 0.5, 0.6, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'results_volumes_z_context'),
                      'Where the network runs and their logs go.')
  flags.DEFINE_list('network_z_steps', ['2', '1'], 'The z steps at which the pairs networks '
                    'train and are scored (the table above is z step '
                    f'{results_volumes.SPEC.z_spacing:g}); empty for the filters only.')
  flags.DEFINE_boolean('allow_dirty', False, 'Train and measure from a changed checkout.')


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
  spec = dataclasses.replace(results_volumes.SPEC, z_spacing=z_step)
  volumes = []
  for seed in results_volumes.TEST_SEEDS:
    captures, reference = phantom.phantom_scene(spec, seed)
    volumes.append((captures[0].astype(np.float64), reference.astype(np.float64)))
  keys = ('psnr', 'sigma_z', 'sigma_xy')
  return {'z_step': z_step,
          'input': float(np.mean([results_volumes.psnr(noisy, reference)
                                  for noisy, reference in volumes])),
          'xy': dict(zip(keys, best_blur(volumes, (0.0,)))),
          'xyz': dict(zip(keys, best_blur(volumes, SIGMAS_Z)))}


def train_and_score(z_step, runs_dir):
  """{dims: run} of the pairs networks on the phantom at z_step, as the table's pairs row."""
  data = os.path.join(results_volumes.DATA, f'z_step_{z_step:g}')
  if not os.path.exists(os.path.join(data, 'records_2d', 'manifest.json')):
    results_volumes.prepare_volumes(
        dataclasses.replace(results_volumes.SPEC, z_spacing=z_step), data)
  runs, tests = {}, results_volumes.test_volumes(data)
  for dims in (3, 2):
    name = f'pairs_{dims}d_z{z_step:g}'
    extra = (f'--train_data={os.path.join(data, f"records_{dims}d")}',)
    if dims == 3:
      steps = results_volumes.THREE_D_STEPS
    else:
      calibration = f'calibration_2d_z{z_step:g}'
      results_volumes.train(calibration, 2, 'pairs', results_volumes.CALIBRATION_STEPS, runs_dir,
                            extra)
      steps = int(round(runs[3]['training_seconds'] / results_volumes.seconds_per_step(
          os.path.join(runs_dir, calibration))))
    results_volumes.train(name, dims, 'pairs', steps, runs_dir, extra)
    model_dir = os.path.join(runs_dir, name)
    denoise = results_volumes.denoiser(model_dir, dims)
    runs[dims] = {'steps': steps,
                  'training_seconds': steps * results_volumes.seconds_per_step(model_dir),
                  'psnr': [results_volumes.psnr(denoise(noisy)[..., 0], reference)
                           for noisy, reference in tests]}
  return runs


def main(argv):
  del argv
  z_steps = [float(value) for value in FLAGS.network_z_steps]
  if z_steps and not FLAGS.allow_dirty:
    provenance.require_clean_tree(REPO_ROOT, False)
  for z_step in z_steps:
    for name in (f'pairs_3d_z{z_step:g}', f'calibration_2d_z{z_step:g}', f'pairs_2d_z{z_step:g}'):
      if os.path.exists(os.path.join(FLAGS.runs_dir, name)):
        # train.py would resume it: a run of older code stamped with this commit.
        raise SystemExit(f'{os.path.join(FLAGS.runs_dir, name)} exists from an earlier '
                         'measurement; remove it or pass another --runs_dir')
  os.makedirs(FLAGS.runs_dir, exist_ok=True)
  results = {'commit': provenance.commit(REPO_ROOT), 'machine': provenance.machine_description(),
             'date': time.strftime('%Y-%m-%d'),
             'spec': {'shape': list(results_volumes.SPEC.shape),
                      'psf_sigma_xy': results_volumes.SPEC.psf_sigma_xy,
                      'psf_axial_ratio': results_volumes.SPEC.psf_axial_ratio},
             'z_steps': [measure(z_step) for z_step in Z_STEPS]}
  for row in results['z_steps']:
    print(f'z step {row["z_step"]:g}: xy {row["xy"]["psnr"]:.2f} dB, xyz '
          f'{row["xyz"]["psnr"]:.2f} dB ({row["xyz"]["psnr"] - row["xy"]["psnr"]:+.2f})',
          flush=True)
  results['networks'] = []
  for z_step in z_steps:
    runs = train_and_score(z_step, FLAGS.runs_dir)
    results['networks'].append({'z_step': z_step, 'pairs_3d': runs[3], 'pairs_2d': runs[2]})
    print(f'z step {z_step:g}: pairs 3D {np.mean(runs[3]["psnr"]):.2f} dB, 2D per plane '
          f'{np.mean(runs[2]["psnr"]):.2f} dB', flush=True)
  with open(RESULTS_JSON, 'w') as output:
    json.dump(results, output, indent=1)
  print(f'wrote {RESULTS_JSON}')


def read_results():
  """docs/results/volumes_z_context.json, or None before the first measurement."""
  return results_volumes.read_json(RESULTS_JSON)


def _network_gains(results, table):
  """{z step: (2D dB, 3D dB, note)}: the pairs networks measured here, and the
  table's own pairs row (tools/results_volumes.py) at its z step."""
  found = {}
  if table is not None and 'pairs_2d' in table['runs'] and 'pairs_3d' in table['runs']:
    runs = table['runs']
    found[float(table['spec']['z_spacing'])] = (
        statistics.mean(runs['pairs_2d']['psnr']), statistics.mean(runs['pairs_3d']['psnr']),
        f'the table above, at {runs["pairs_3d"].get("commit", table["commit"])}')
  for row in results.get('networks', []):
    found[float(row['z_step'])] = (statistics.mean(row['pairs_2d']['psnr']),
                                   statistics.mean(row['pairs_3d']['psnr']),
                                   f'{row["pairs_2d"]["steps"]} / {row["pairs_3d"]["steps"]} '
                                   'steps')
  return found


def section(results, table=None):
  """Markdown lines of the z-context table, from read_results() and the table's
  results_volumes.read_results()."""
  if results is None:
    return []
  spec = results['spec']
  axial = spec['psf_sigma_xy'] * spec['psf_axial_ratio']
  networks = _network_gains(results, table)
  out = ['### What the neighbouring planes are worth, by z step', '',
         'The phantom of the table at other z steps (the same objects and '
         f'{" x ".join(map(str, spec["shape"]))} voxels; the PSF\'s axial standard deviation '
         f'is {axial:g} xy pixels), held-out volumes, first acquisition. First the best '
         'separable Gaussian blur in xy alone against the best that also blurs along z '
         '(widths searched on a grid): a linear filter shows how much signal the neighbouring '
         'planes share, not what a network can make of it. Then the Noise2Noise pairs '
         'networks of the table, trained and scored as there (3D for the table\'s steps, 2D '
         'per plane for as long). '
         f'Made by `tools/results_volumes_z_context.py` at {results["commit"]} on '
         f'{results["machine"]}, {results["date"]}.', '',
         '| z step (xy pixels) | axial PSF s.d. (planes) | noisy | blur in xy | blur in xyz '
         '(sigma z, planes) | xyz - xy | pairs 2D per plane | pairs 3D | 3D - 2D | |',
         '|---|---|---|---|---|---|---|---|---|---|']
  for row in results['z_steps']:
    line = (f'| {row["z_step"]:g} | {axial / row["z_step"]:.2f} | {row["input"]:.2f} | '
            f'{row["xy"]["psnr"]:.2f} | {row["xyz"]["psnr"]:.2f} ({row["xyz"]["sigma_z"]:g}) | '
            f'{row["xyz"]["psnr"] - row["xy"]["psnr"]:+.2f} |')
    if float(row['z_step']) in networks:
      flat, deep, note = networks[float(row['z_step'])]
      line += f' {flat:.2f} | {deep:.2f} | {deep - flat:+.2f} | {note} |'
    else:
      line += ' | | | not measured |'
    out.append(line)
  return out + ['']


if __name__ == '__main__':
  define_flags()
  app.run(main)
