"""A classical peer on the "Real (spatially correlated) noise" datasets of
docs/results.md: BM3D (CBM3D for colour) given the true noise level, scored
exactly as the trained runs are (tools/results_correlated.py).

  pip install bm3d     # an optional extra: not in requirements, never in the tests
  python bench/correlated_peers.py --output=docs/bench/correlated_peers.json

tools/results_grid.py shows the JSON as a row of each dataset's table. Run it
after the grid has trained each dataset's N2N run (runs/cpu/correlated_*_n2n2):
the images are read in that run's units (its normalisation and channels), so
input and output are on the scale its PSNR is measured on. "The true noise
level" is what only a simulation knows: the standard deviation of the capture
minus its reference, per image and channel. The noise's correlation is not
given (BM3D's sigma_psd could take a spectrum; a user would not have one).
The bm3d package is free for non-commercial use only (its own licence), which
is one more reason it stays outside n2n.
"""

import json
import os
import platform
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.quiet_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from tools import provenance  # pylint: disable=g-import-not-at-top
from tools import results_correlated  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'cpu'),
                    'Where the grid\'s runs are (their configurations give the units).')
flags.DEFINE_list('datasets', list(results_correlated.DATASET_NAMES), 'Datasets to score.')
flags.DEFINE_string('output', '', 'Write the scores here as JSON.')
FLAGS = flags.FLAGS


def true_sigma(noisy, reference):
  """[C] float: the standard deviation of noisy - reference per channel ([H, W, C])."""
  return np.std(noisy - reference, axis=(0, 1))


def bm3d_denoiser(sigma):
  """fn([H, W, C] float32) -> [H, W, C] float32: BM3D (C 1) or CBM3D (C 3) at sigma [C]."""
  import bm3d  # pylint: disable=g-import-not-at-top  (an optional extra)

  def denoise(noisy):
    if noisy.shape[-1] == 1:
      return bm3d.bm3d(noisy[..., 0], float(sigma[0]))[..., None].astype(np.float32)
    return bm3d.bm3d_rgb(noisy, list(map(float, sigma))).astype(np.float32)
  return denoise


def score_scenes(scenes):
  """(scoring's per-image dicts, seconds per megapixel per image) of BM3D on each
  scene's first capture at its true sigma."""
  images, seconds = [], []
  for scene in scenes:
    denoise = bm3d_denoiser(true_sigma(scene.first, scene.reference))
    start = time.perf_counter()
    level, = scoring.evaluate_scenes(denoise, [scene])
    seconds.append((time.perf_counter() - start) / (scene.first.shape[0] * scene.first.shape[1]
                                                    / 1e6))
    image = level.images[0]
    images.append({'name': image.name, 'psnr': image.psnr, 'input_psnr': image.input_psnr,
                   'colour_error': list(image.colour_error)})
  return images, seconds


def summary(images):
  return {'psnr': float(np.mean([image['psnr'] for image in images])),
          'input': float(np.mean([image['input_psnr'] for image in images])), 'images': images}


def main(argv):
  del argv
  import bm3d  # pylint: disable=g-import-not-at-top
  from importlib import metadata  # pylint: disable=g-import-not-at-top
  del bm3d
  host = next((line.split(':', 1)[1].strip() for line in open('/proc/cpuinfo')
               if line.startswith('model name')), platform.processor())
  out = {'title': f'BM3D given the true sigma (bm3d {metadata.version("bm3d")}, '
                  'bench/correlated_peers.py)',
         'host': f'{host}, {os.cpu_count()} cores', 'commit': provenance.commit(REPO_ROOT),
         'datasets': {}}
  for dataset in results_correlated.DATASETS:
    if dataset.name not in FLAGS.datasets:
      continue
    results_correlated.prepare_data(dataset)
    config = restore.read_run_config(
        os.path.join(FLAGS.runs_dir, f'{dataset.name}_{results_correlated.REFERENCE}'))
    scored, seconds = {}, []
    for part, folder in (('own_captures', 'train_raw'), ('validation', 'val')):
      scenes = eval_data.load_eval_scenes(os.path.join(dataset.folder, folder), config,
                                          flag_name='scenes')
      images, times = score_scenes(scenes)
      scored[part] = summary(images)
      seconds += times
    out['datasets'][dataset.name] = {**scored,
                                     'seconds_per_megapixel': float(np.median(seconds))}
    print(dataset.name, {part: round(scored[part]['psnr'], 2) for part in scored},
          f'input {scored["own_captures"]["input"]:.2f}', flush=True)
  if FLAGS.output:
    with open(FLAGS.output, 'w') as output:
      json.dump(out, output, indent=1)


if __name__ == '__main__':
  app.run(main)
