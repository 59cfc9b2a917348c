"""Peers on the "Real (spatially correlated) noise" datasets of docs/results.md,
scored exactly as the trained runs are (bench/results/correlated.py), into one
JSON that bench/results/grid.py shows as rows of each dataset's table:

  pip install bm3d     # an optional extra: not in requirements, never in the tests
  python -m bench.correlated_peers --key=bm3d
  # CAREamics, trained by bench/careamics_peer.py in its own environment:
  python -m bench.correlated_peers --key=careamics_n2v2 --outputs=/tmp/careamics/n2v2

--key=bm3d denoises each capture with BM3D (CBM3D for colour) given the true
noise level: what only a simulation knows, the standard deviation of the capture
minus its reference per image and channel. Not its correlation (BM3D's
sigma_psd could take a spectrum; a user would not have one). The bm3d package
is free for non-commercial use only (its own licence), one more reason it stays
outside n2n. Any other key scores the files another program wrote:
OUTPUTS/<dataset>/{own_captures,validation}/SCENE.tif, float32 in the captures'
own units, and OUTPUTS/<dataset>/careamics.json (what ran).

Run it after the grid has trained each dataset's N2N run
(runs/cpu/correlated_*_n2n2): the images are read in that run's units (its
normalisation and channels), so every PSNR is on the scale the runs' are.
"""

import json
import os
import platform
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import classical  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.results import correlated as results_correlated  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'cpu'),
                    'Where the grid\'s runs are (their configurations give the units).')
flags.DEFINE_list('datasets', list(results_correlated.DATASET_NAMES), 'Datasets to score.')
flags.DEFINE_string('key', 'bm3d', 'bm3d, or the name of a peer whose files --outputs holds.')
flags.DEFINE_string('outputs', '', 'For a key other than bm3d: the peer\'s denoised files.')
flags.DEFINE_string('output', results_correlated.PEERS_JSON,
                    'The JSON to add this peer to (its other peers are kept).')
FLAGS = flags.FLAGS


def file_denoiser(path, scene_dir, config):
  """fn(capture) -> the peer's output file for that scene's first capture, in the
  run's units: mapped by the capture's own pixel map, as load_eval_scenes maps
  the capture and its reference."""
  # pylint: disable=g-import-not-at-top
  import tifffile
  from n2n.data import normalization
  from n2n.data import rgb_images
  from n2n.data import scenes as scenes_lib
  if not os.path.exists(path):
    raise SystemExit(f'--outputs: {path} is missing')
  scene, = [found for found in scenes_lib.find_scenes(os.path.dirname(scene_dir))
            if found.name == os.path.basename(scene_dir)]
  captured = scenes_lib.read_scene(scene, config.data.white_level).captures[0]
  pixel_map = normalization.image_map(captured, normalization.rule_of(config),
                                      config.data.white_level)
  output = tifffile.imread(path).astype(np.float32)
  if output.ndim == 2:
    output = output[..., None]
  if output.shape[:2] != captured.shape[:2]:
    raise SystemExit(f'--outputs: {path} is {output.shape[1]}x{output.shape[0]}, its capture '
                     f'{captured.shape[1]}x{captured.shape[0]}')
  denoised = rgb_images.convert_channels(normalization.normalize(output, pixel_map),
                                         config.model.channels)
  return lambda capture: denoised


def score_scenes(scenes, denoiser_of):
  """(scoring.ImageScores, seconds per megapixel of each denoising) of
  denoiser_of(scene)'s output on each scene's first capture."""
  images, seconds = [], []
  for scene in scenes:
    denoise = denoiser_of(scene)
    start = time.perf_counter()
    denoised = denoise(scene.first)
    seconds.append((time.perf_counter() - start) / (scene.first.shape[0] * scene.first.shape[1]
                                                    / 1e6))
    level, = scoring.evaluate_scenes(lambda _, output=denoised: output, [scene])
    images += level.images
  return images, seconds


def peer_description(key, dataset):
  """(title, setting) of the peer, setting per dataset; raises SystemExit where
  the peer is not there."""
  if key == 'bm3d':
    return f'BM3D {classical.bm3d_version()}', 'true sigma'
  ran_path = os.path.join(FLAGS.outputs, dataset.name, 'careamics.json')
  if not os.path.exists(ran_path):
    raise SystemExit(f'--outputs: {ran_path} is missing (bench/careamics_peer.py writes it)')
  with open(ran_path) as ran_file:
    ran = json.load(ran_file)
  setting = ('N2V2' if ran['struct_axis'] == 'none' else
             f'N2V2, structN2V {ran["struct_axis"]}, span {ran["struct_span"]}')
  # How far the wall time took it: CAREamics' PyTorch on 2 cores runs fewer pixels a second.
  setting += f', {ran["steps"]} steps of {ran["batch_size"]} x {ran["patch_size"]}x{ran["patch_size"]}'
  return f'CAREamics {ran["careamics"]}', setting


def main(argv):
  del argv
  unknown = set(FLAGS.datasets) - set(results_correlated.DATASET_NAMES)
  if unknown:
    raise app.UsageError(f'--datasets: unknown {", ".join(sorted(unknown))}; choose from '
                         f'{", ".join(results_correlated.DATASET_NAMES)}')
  if FLAGS.key != 'bm3d' and not FLAGS.outputs:
    raise app.UsageError(f'--key={FLAGS.key} scores a peer\'s files: give --outputs')
  host = next((line.split(':', 1)[1].strip() for line in open('/proc/cpuinfo')
               if line.startswith('model name')), platform.processor())
  peer = {'host': f'{host}, {os.cpu_count()} cores', 'commit': provenance.commit(REPO_ROOT),
          'datasets': {}}
  for dataset in results_correlated.DATASETS:
    if dataset.name not in FLAGS.datasets:
      continue
    title, setting = peer_description(FLAGS.key, dataset)
    results_correlated.prepare_data(dataset)
    run = os.path.join(FLAGS.runs_dir, f'{dataset.name}_{results_correlated.REFERENCE}')
    if not os.path.exists(os.path.join(run, 'config.json')):
      raise SystemExit(f'--runs_dir: {run} has no config.json; run bench/results/grid.py '
                       f'--rows={dataset.name} first')
    config = restore.read_run_config(run)
    scored, seconds = {}, []
    for part, folder in (('own_captures', 'train_raw'), ('validation', 'val')):
      root = os.path.join(dataset.folder, folder)
      scenes = eval_data.load_eval_scenes(root, config, flag_name='scenes')
      if FLAGS.key == 'bm3d':
        denoiser_of = lambda scene: classical.bm3d_denoiser(
            classical.true_sigma(scene.first, scene.reference))
      else:
        denoiser_of = lambda scene, root=root, part=part: file_denoiser(
            os.path.join(FLAGS.outputs, dataset.name, part, f'{scene.name}.tif'),
            os.path.join(root, scene.name), config)
      images, times = score_scenes(scenes, denoiser_of)
      scored[part] = results_correlated.summary(images)
      seconds += times
    if FLAGS.key == 'bm3d':
      cost = f'{np.median(seconds):.1f} s per megapixel'
    else:
      with open(os.path.join(FLAGS.outputs, dataset.name, 'careamics.json')) as ran_file:
        cost = f'{json.load(ran_file)["seconds_trained"] / 60:.1f} min of training'
    peer['title'] = title
    peer['datasets'][dataset.name] = {**scored, 'setting': setting, 'cost': cost}
    print(dataset.name, {part: round(scored[part]['psnr'], 2) for part in scored},
          f'input {scored["own_captures"]["input"]:.2f}', cost, flush=True)
  found = results_correlated.read_peers(FLAGS.output) or {'peers': {}}
  found['peers'][FLAGS.key] = peer
  with open(FLAGS.output, 'w') as output:
    json.dump(found, output, indent=1)


if __name__ == '__main__':
  app.run(main)
