"""The results page's "Volumes and movies" section: 3D against 2D per plane on phantom stacks.

  python -m bench.results.volumes              # data, runs, scores, pictures -> docs/results/
  python -m bench.results.grid --render_only   # rewrites docs/results.md with the section

Eight phantom volumes (n2n/data/phantom.py: 32 x 128 x 128 voxels, z step 4 pixels,
Poisson-Gaussian noise, two acquisitions and a reference each): six train, two
are held out and scored. Eight phantom movies (its middle plane while its objects
drift slowly, one noisy acquisition per frame) for neighbouring frames: six
train, two are held out and scored against their clean frames. Each method trains twice for the same training time:
the 3D network on crops of the stacks (configs/cpu/volumes_3d.cfg: 16 x 64 x 64,
batch 2), and the 2D network on 64 x 64 crops of their xy planes (each plane a
2D scene; volumes_2d.cfg). The 3D runs train
THREE_D_STEPS steps; a short 2D calibration run of each method measures its 2D
step time, and its 2D run gets as many steps as fit in the 3D run's training
time. The single-image methods (Neighbor2Neighbor, blind-spot) train on every
acquisition as a volume (or plane) of its own, never on the pairs. Clean targets
(N2C) train on the references, for reference. Neighbouring frames trains the 3D
network on the movies (time as depth: even frames in, odd frames as targets)
(crops starting at any frame) and the 2D network on the pairs of frames
(2k, 2k + 1), each a 2D scene of two acquisitions, either one the input. Scores are
PSNR against the reference over each held-out volume (peak: the reference's
range), denoised as denoise.py does by default (the 3D network in tiles as deep
as its training crops, overlapping by half, the 2D network plane by plane), at
the precision denoise.py picks.

--methods measures only the rows named and keeps the others from
docs/results/volumes.json, each run with the commit it was measured at.

Trains and measures from a clean checkout only (as bench/results/grid.py).
"""

import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n.data import phantom  # pylint: disable=g-import-not-at-top
from n2n.data import volumes  # pylint: disable=g-import-not-at-top
from n2n.evaluation import summaries  # pylint: disable=g-import-not-at-top
from n2n.inference import loading  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import volumes_gpu  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top

DATA = os.path.join(REPO_ROOT, 'data', 'volumes')
RESULTS_DIR = os.path.join(REPO_ROOT, 'docs', 'results')
RESULTS_JSON = os.path.join(RESULTS_DIR, 'volumes.json')
# bench/volumes_gpu.py's measurement on an H200 (3D against 2D per plane, through JAX).
GPU_JSON = os.path.join(REPO_ROOT, 'docs', 'bench', 'volumes_gpu_h200.json')
SPEC = phantom.PhantomSpec()
TRAIN_SEEDS = tuple(range(6))
TEST_SEEDS = (100, 101)
# The phantom's counts reach about 100 + 8 * (2 + 30) plus noise: 600 maps them near 1.
WHITE_LEVEL = 600.0
THREE_D_STEPS = 300
CALIBRATION_STEPS = 60
# Phantom movies: frames of 128 x 128, drifting (z, y, x) pixels per frame: slowly,
# well under a pixel between the frames a pair joins.
MOVIE_FRAMES = {'train': 64, 'test': 32}
MOVIE_DRIFT = (0.0, 0.1, 0.05)
TRAIN_MOVIE_SEEDS = tuple(range(200, 206))
TEST_MOVIE_SEEDS = (300, 301)
_PAIRS = ('--method=pairs', '--target=noisy')
# The row of each method: its flags (beside the configs') in 3D and per plane.
METHOD_FLAGS = {
    'pairs': {3: _PAIRS, 2: _PAIRS},
    'neighbor2neighbor': {3: ('--method=neighbor2neighbor',),
                          2: ('--method=neighbor2neighbor',)},
    # The 3D sampler in 2x2x2 cells (the 2D network has only 2x2 cells).
    'neighbor2neighbor_cubes': {3: ('--method=neighbor2neighbor',
                                    '--neighbor2neighbor_cells=xyz'),
                                2: ('--method=neighbor2neighbor',)},
    'blind_spot': {3: ('--method=blind_spot',), 2: ('--method=blind_spot',)},
    'neighbouring_frames': {
        3: ('--method=neighbouring_frames', '--train_data=data/volumes/records_movies_3d'),
        2: _PAIRS + ('--train_data=data/volumes/records_movie_pairs_2d',)},
    'clean_targets': {3: ('--method=pairs', '--target=clean'),
                      2: ('--method=pairs', '--target=clean')},
}
# Rows scored on the movies rather than the volumes.
MOVIE_METHODS = ('neighbouring_frames',)
# (name, spatial dims, method): each method in 3D and per plane.
VARIANTS = tuple((f'{method}_{dims}d', dims, method) for method in METHOD_FLAGS
                 for dims in (3, 2))
METHOD_TITLES = {'pairs': 'Noise2Noise, two acquisitions',
                 'neighbor2neighbor': 'Neighbor2Neighbor, one acquisition at a time',
                 'neighbor2neighbor_cubes': 'Neighbor2Neighbor, 3D sampler in 2 x 2 x 2 cells '
                                            '(2D: 2 x 2, as above)',
                 'blind_spot': 'blind-spot (Noise2Void), one acquisition at a time',
                 'neighbouring_frames': 'neighbouring frames of a movie (2D: frame pairs as '
                                        'scenes)',
                 'clean_targets': 'clean targets (N2C), for reference'}
METHOD_SHORT = {'pairs': 'Noise2Noise pairs', 'neighbor2neighbor': 'Neighbor2Neighbor',
                'neighbor2neighbor_cubes': 'Neighbor2Neighbor in 2x2x2 cells',
                'blind_spot': 'blind-spot', 'neighbouring_frames': 'neighbouring frames',
                'clean_targets': 'clean targets'}
# Why a row stays outside the goal's count.
OUTSIDE_THE_GOAL = {'neighbouring_frames': 'movies, not anisotropic volumes',
                    'clean_targets': 'needs clean data',
                    'neighbor2neighbor_cubes': 'a variant of the Neighbor2Neighbor row'}
PICTURE_PLANE = 16   # z of the xy picture
PICTURE_ROW = 64     # y of the xz picture
GOAL_DB = 1.0

FLAGS = flags.FLAGS


def define_flags():
  """This program's flags (defined when it runs, not when grid.py imports the section)."""
  flags.DEFINE_string('runs_dir', os.path.join(REPO_ROOT, 'runs', 'results_volumes'),
                      'Where the runs, logs and calibration go.')
  flags.DEFINE_boolean('allow_dirty', False, 'Train and measure from a changed checkout.')
  flags.DEFINE_list('methods', list(METHOD_FLAGS), 'The rows to measure now; the others are '
                    'kept from docs/results/volumes.json with the commit they were measured at.')
  flags.DEFINE_integer('steps_3d', THREE_D_STEPS, 'Steps of the 3D runs (the page\'s: '
                       f'{THREE_D_STEPS}; fewer to try the program out).', lower_bound=1)


def _write_stack(path, array, axes='ZYX', z_spacing=None):
  spacing = (0.1 * (z_spacing or SPEC.z_spacing), 0.1, 0.1)
  like = volumes.Volume(volumes.to_canonical(array, axes), axes, 'imagej', spacing, 'micron')
  volumes.write_volume(path, like.pixels, like)


def _write_png16(path, plane):
  tf.io.write_file(path, tf.io.encode_png(plane[:, :, np.newaxis]))


def _make_records(source, records, *options, data=None, white_level=None):
  data = data or DATA
  command = [sys.executable, os.path.join(REPO_ROOT, 'datasets', 'make_tfrecords.py'),
             *options, f'--white_level={white_level or WHITE_LEVEL:g}', '--overwrite',
             f'--input_dir={os.path.join(data, source)}',
             f'--output_dir={os.path.join(data, records)}']
  finished = subprocess.run(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
  if finished.returncode:
    # Its own one-line error (e.g. counts above the white level), not a traceback of ours.
    lines = finished.stderr.strip().splitlines() or [f'exited with {finished.returncode}']
    raise SystemExit(f'datasets/make_tfrecords.py for {os.path.join(data, records)}: {lines[-1]}')


# What prepare_volumes writes in its data folder.
VOLUME_PARTS = ('stacks', 'planes', 'records_3d', 'records_2d')


def prepare_volumes(spec=None, data=None, white_level=None):
  """The phantom stacks of spec (SPEC) in data (DATA), their planes as 2D scenes,
  and both datasets (records_3d, records_2d) at white_level (WHITE_LEVEL)."""
  spec, data = spec or SPEC, data or DATA
  for split, seeds in (('train', TRAIN_SEEDS), ('test', TEST_SEEDS)):
    for seed in seeds:
      captures, reference = phantom.phantom_scene(spec, seed)
      folder = os.path.join(data, 'stacks', split, f'volume_{seed:03d}')
      os.makedirs(folder, exist_ok=True)
      for number, capture in enumerate(captures, 1):
        _write_stack(os.path.join(folder, f'acquisition_{number}.tif'), capture,
                     z_spacing=spec.z_spacing)
      _write_stack(os.path.join(folder, 'reference.tif'), reference, z_spacing=spec.z_spacing)
      if split != 'train':
        continue
      for plane in range(spec.shape[0]):
        scene = os.path.join(data, 'planes', f'volume_{seed:03d}_z{plane:02d}')
        os.makedirs(scene, exist_ok=True)
        for number, capture in enumerate(captures, 1):
          _write_png16(os.path.join(scene, f'acquisition_{number}.png'), capture[plane])
        _write_png16(os.path.join(scene, 'reference.png'), reference[plane])
  _make_records(os.path.join('stacks', 'train'), 'records_3d', '--scenes', data=data,
                white_level=white_level)
  _make_records('planes', 'records_2d', '--scenes', data=data, white_level=white_level)


def _prepare_movies():
  """The phantom movies (TYX stacks of one noisy acquisition; the held-out ones
  with their clean frames), the training movies' frame pairs (2k, 2k + 1) as 2D
  scenes, and both datasets."""
  for split, seeds in (('train', TRAIN_MOVIE_SEEDS), ('test', TEST_MOVIE_SEEDS)):
    folder = os.path.join(DATA, 'movies', split)
    os.makedirs(folder, exist_ok=True)
    for seed in seeds:
      noisy, reference = phantom.phantom_movie(SPEC, seed, MOVIE_FRAMES[split], MOVIE_DRIFT)
      _write_stack(os.path.join(folder, f'movie_{seed:03d}.tif'), noisy, 'TYX')
      if split != 'train':
        _write_stack(os.path.join(DATA, 'movies', f'reference_{seed:03d}.tif'), reference, 'TYX')
        continue
      for pair in range(len(noisy) // 2):
        scene = os.path.join(DATA, 'movie_pairs', f'movie_{seed:03d}_t{2 * pair:02d}')
        os.makedirs(scene, exist_ok=True)
        for number in (1, 2):
          _write_png16(os.path.join(scene, f'acquisition_{number}.png'),
                       noisy[2 * pair + number - 1])
  _make_records(os.path.join('movies', 'train'), 'records_movies_3d', '--noisy_images')
  _make_records('movie_pairs', 'records_movie_pairs_2d', '--scenes')


def volume_record(spec=None, white_level=None):
  """What the phantom volumes in a data folder and the runs on them depend on
  (spec, default SPEC; the seeds, white level (WHITE_LEVEL) and step counts), as JSON."""
  spec = spec or SPEC
  return {**dataclasses.asdict(spec), 'shape': list(spec.shape),
          'train_seeds': list(TRAIN_SEEDS), 'test_seeds': list(TEST_SEEDS),
          'white_level': white_level or WHITE_LEVEL, 'three_d_steps': THREE_D_STEPS,
          'calibration_steps': CALIBRATION_STEPS}


def ensure_volumes(spec=None, data=None, white_level=None):
  """prepare_volumes(spec, data, white_level) unless data holds them already,
  written from this spec and white level (its spec.json, volume_record), with
  both datasets' manifests: volumes written from another phantom or white
  level, or left half-written, are removed and written again (VOLUME_PARTS
  only: the movies and other folders in data stay)."""
  spec, data = spec or SPEC, data or DATA
  record = os.path.join(data, 'spec.json')
  try:
    written = read_json(record)
  except ValueError:  # Cut off mid-write: as if missing.
    written = None
  if written == volume_record(spec, white_level) and all(
      os.path.exists(os.path.join(data, records, 'manifest.json'))
      for records in ('records_3d', 'records_2d')):
    return
  for part in ('spec.json',) + VOLUME_PARTS:
    path = os.path.join(data, part)
    if os.path.isdir(path):
      shutil.rmtree(path)
    elif os.path.exists(path):
      os.remove(path)
  prepare_volumes(spec, data, white_level)
  # Written last, whole or not at all: a folder without it is incomplete.
  with open(record + '.partial', 'w') as output:
    json.dump(volume_record(spec, white_level), output, indent=1)
  os.replace(record + '.partial', record)


def prepare_data():
  """Writes the phantom volumes (ensure_volumes) and movies and their datasets, unless there."""
  ensure_volumes()
  if not os.path.exists(os.path.join(DATA, 'records_movie_pairs_2d', 'manifest.json')):
    _prepare_movies()


def config_path(dims):
  """configs/cpu/volumes_{dims}d.cfg: the flags of the dims-D runs."""
  return os.path.join(REPO_ROOT, 'configs', 'cpu', f'volumes_{dims}d.cfg')


def train(name, dims, method, steps, runs_dir, extra_flags=()):
  """Runs train.py for one variant into runs_dir/name (extra_flags last, so
  they win); returns the process' wall seconds."""
  model_dir = os.path.join(runs_dir, name)
  command = [sys.executable, os.path.join(REPO_ROOT, 'train.py'),
             f'--flagfile={config_path(dims)}',
             f'--model_dir={model_dir}', *METHOD_FLAGS[method][dims], f'--train_steps={steps}',
             f'--checkpoint_every={steps}', *extra_flags]
  print(f'{name}: {" ".join(command[1:])}', flush=True)
  started = time.perf_counter()
  with open(os.path.join(runs_dir, f'{name}.log'), 'w') as log:
    finished = subprocess.run(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
  if finished.returncode:
    raise SystemExit(f'{name}: train.py exited with {finished.returncode}')
  return time.perf_counter() - started


def batch_size(model_dir):
  """The batch size a run trained with (its config.json)."""
  return restore.read_run_config(model_dir).optimisation.batch_size


def seconds_per_step(model_dir):
  """The run's training seconds per step: its batch over its median images/s (from its events)."""
  training = summaries.read_scalars(os.path.join(model_dir, 'train'))
  return (batch_size(model_dir) /
          statistics.median(value for _, value in training['images_per_second']))


def psnr(estimate, reference):
  """PSNR in dB against the reference's own range (its max - min), float64."""
  error = np.mean((np.asarray(estimate, np.float64) - reference) ** 2)
  return float(10 * np.log10(float(reference.max() - reference.min()) ** 2 / error))


def test_volumes(data=None, white_level=None):
  """[(noisy [Z, Y, X, 1] float32, reference [Z, Y, X] float64)] on the scale of
  white_level (WHITE_LEVEL): the held-out stacks prepare_volumes wrote in data (DATA)."""
  data, white_level = data or DATA, white_level or WHITE_LEVEL
  found = []
  for seed in TEST_SEEDS:
    folder = os.path.join(data, 'stacks', 'test', f'volume_{seed:03d}')
    noisy = volumes.read_volume(os.path.join(folder, 'acquisition_1.tif')).pixels[0]
    reference = volumes.read_volume(os.path.join(folder, 'reference.tif')).pixels[0, ..., 0]
    found.append((noisy.astype(np.float32) / white_level, reference / white_level))
  return found


def test_movies():
  """[(noisy [T, Y, X, 1] float32, clean frames [T, Y, X] float64)] of the held-out movies."""
  found = []
  for seed in TEST_MOVIE_SEEDS:
    noisy = volumes.read_volume(
        os.path.join(DATA, 'movies', 'test', f'movie_{seed:03d}.tif')).pixels[0]
    reference = volumes.read_volume(
        os.path.join(DATA, 'movies', f'reference_{seed:03d}.tif')).pixels[0, ..., 0]
    found.append((noisy.astype(np.float32) / WHITE_LEVEL, reference / WHITE_LEVEL))
  return found


def denoiser(model_dir, dims, precision='auto'):
  """fn(noisy [Z, Y, X, 1]) -> same: a run's network (its model_dir, or a
  checkpoint prefix) as denoise.py runs it by default (at precision: 'auto',
  denoise.py's default, or a precision name)."""
  network = loading.from_checkpoint(model_dir, hardware.resolve_precision(precision))
  if dims == 3:
    return loading.volume_function(
        network, *config_lib.default_volume_tiling(network.serving.volume_depth), 1)
  image = loading.image_function(network, 1024, 64, 1)
  return lambda noisy: np.stack([image(plane) for plane in noisy])


def score(model_dir, dims, tests, precision='auto'):
  """PSNR dB of a run's network (denoiser, at precision) on each (noisy, reference) of tests."""
  denoise = denoiser(model_dir, dims, precision)
  return [psnr(denoise(noisy)[..., 0], reference) for noisy, reference in tests]


def refuse_existing_runs(runs_dir, names):
  """SystemExit naming the first of names already in runs_dir: train.py would
  resume it, a run of older code stamped with this commit."""
  for name in names:
    if os.path.exists(os.path.join(runs_dir, name)):
      raise SystemExit(f'{os.path.join(runs_dir, name)} exists from an earlier '
                       'measurement; remove it or pass another --runs_dir')


def seam_check(model_dir, noisy):
  """How far tiles of D x 64 x 64 (overlap D / 2, 16, 16) depart from tiles of
  D x 128 x 128 (overlap D / 2, 0, 0), which cover y and x whole (D: the
  training crops' depth): max and mean absolute difference, 0-1 scale (the xy
  seams)."""
  network = loading.from_checkpoint(model_dir, 'float32')
  depth = network.serving.volume_depth
  tile, overlap = [depth, 64, 64], [depth // 2, 16, 16]
  whole = loading.volume_function(network, (depth, 128, 128), (depth // 2, 0, 0), 1)(noisy)
  tiled = loading.volume_function(network, tuple(tile), tuple(overlap), 1)(noisy)
  difference = np.abs(tiled.astype(np.float64) - whole)
  return {'tile': tile, 'overlap': overlap, 'max': float(difference.max()),
          'mean': float(difference.mean())}


def _display(array, reference):
  """Values mapped so the reference spans 0-1 (its background at 0)."""
  low, high = float(reference.min()), float(reference.max())
  return np.clip((np.asarray(array, np.float64) - low) / (high - low), 0, 1)


def pictures(panels, reference):
  """docs/results/volumes_xy.png and volumes_xz.png: each panel's xy plane and xz
  section (z drawn 4x taller: its step is 4 pixels), side by side."""
  written = {}
  for view, cut in (('xy', lambda volume: volume[PICTURE_PLANE]),
                    ('xz', lambda volume: np.repeat(volume[:, PICTURE_ROW],
                                                    int(SPEC.z_spacing), axis=0))):
    gap = np.ones([cut(reference).shape[0], 4])
    strip = []
    for panel in panels:
      strip += [_display(cut(panel), reference), gap]
    pixels = np.round(np.concatenate(strip[:-1], axis=1) * 255).astype(np.uint8)
    path = os.path.join(RESULTS_DIR, f'volumes_{view}.png')
    tf.io.write_file(path, tf.io.encode_png(np.repeat(pixels[:, :, np.newaxis], 3, axis=2)))
    written[view] = os.path.relpath(path, os.path.join(REPO_ROOT, 'docs'))
  return written


def _specs():
  """The phantom data's description, as the results JSON records it."""
  return {'spec': {'shape': list(SPEC.shape), 'z_spacing': SPEC.z_spacing,
                   'peak_photons': SPEC.peak_photons, 'read_noise': SPEC.read_noise,
                   'train_volumes': len(TRAIN_SEEDS), 'test_volumes': len(TEST_SEEDS)},
          'movie_spec': {'frames': MOVIE_FRAMES, 'drift_per_frame': list(MOVIE_DRIFT),
                         'train_movies': len(TRAIN_MOVIE_SEEDS),
                         'test_movies': len(TEST_MOVIE_SEEDS)}}


def run_record(model_dir, dims, method, steps, wall, stamp=None):
  """What the JSON records of a finished run: its dims, method, steps, batch,
  wall and training seconds (steps times its median seconds per step), and stamp."""
  return {'dims': dims, 'method': method, 'steps': steps, 'batch_size': batch_size(model_dir),
          'wall_seconds': wall, 'training_seconds': steps * seconds_per_step(model_dir),
          **(stamp or {})}


def train_2d_for(seconds, method, name, calibration, runs_dir, extra_flags=(),
                 calibration_flags=()):
  """Trains method's 2D network per plane into runs_dir/name for about seconds
  of training: a CALIBRATION_STEPS run into runs_dir/calibration (reused if
  there; calibration_flags after extra_flags) measures its seconds per step.
  Returns (steps, wall seconds, the calibration's seconds per step)."""
  model_dir = os.path.join(runs_dir, calibration)
  if not os.path.exists(os.path.join(model_dir, 'config.json')):
    train(calibration, 2, method, CALIBRATION_STEPS, runs_dir,
          tuple(extra_flags) + tuple(calibration_flags))
  calibrated = seconds_per_step(model_dir)
  steps = int(round(seconds / calibrated))
  return steps, train(name, 2, method, steps, runs_dir, extra_flags), calibrated


def train_equal_time(method, runs_dir, names, steps_3d, extra_flags=None, stamp=None):
  """Trains a method's 3D network for steps_3d steps, then its 2D network per
  plane for the 3D run's training time (train_2d_for). names: {3: run, 2: run,
  'calibration': run} folder names in runs_dir; extra_flags: {dims: train.py
  flags} (the calibration gets the 2D ones); stamp: fields added to each record.
  Returns {dims: run record}."""
  extra_flags = extra_flags or {}
  wall = train(names[3], 3, method, steps_3d, runs_dir, extra_flags.get(3, ()))
  runs = {3: run_record(os.path.join(runs_dir, names[3]), 3, method, steps_3d, wall, stamp)}
  steps, wall, _ = train_2d_for(runs[3]['training_seconds'], method, names[2],
                                names['calibration'], runs_dir, extra_flags.get(2, ()))
  runs[2] = run_record(os.path.join(runs_dir, names[2]), 2, method, steps, wall, stamp)
  return runs


def _measure(methods, runs_dir, stamp):
  """Trains the 3D and 2D runs of each method for equal time: {name: run}."""
  runs = {}
  for method in METHOD_FLAGS:
    if method in methods:
      trained = train_equal_time(method, runs_dir, {3: f'{method}_3d', 2: f'{method}_2d',
                                                    'calibration': f'calibration_2d_{method}'},
                                 FLAGS.steps_3d, stamp=stamp)
      runs.update({f'{method}_{dims}d': run for dims, run in trained.items()})
  return runs


def main(argv):
  del argv
  if not FLAGS.allow_dirty:
    provenance.require_clean_tree(REPO_ROOT, False)
  unknown = sorted(set(FLAGS.methods) - set(METHOD_FLAGS))
  if unknown:
    raise SystemExit(f'--methods: {", ".join(unknown)} not one of {", ".join(METHOD_FLAGS)}')
  previous = read_results()
  if set(FLAGS.methods) != set(METHOD_FLAGS) and previous is None:
    raise SystemExit(f'--methods={",".join(FLAGS.methods)}: {RESULTS_JSON} does not exist yet '
                     'to keep the other rows from; measure every method first')
  specs = _specs()
  if previous is not None and set(FLAGS.methods) != set(METHOD_FLAGS):
    for key, value in specs.items():
      if key in previous and previous[key] != value:
        raise SystemExit(f'--methods={",".join(FLAGS.methods)}: the phantom\'s {key} changed '
                         f'since the rows kept from {RESULTS_JSON}; measure every method')
  refuse_existing_runs(FLAGS.runs_dir, [kept for name, _, method in VARIANTS
                                        if method in FLAGS.methods
                                        for kept in (name, f'calibration_2d_{method}')])
  os.makedirs(FLAGS.runs_dir, exist_ok=True)
  os.makedirs(RESULTS_DIR, exist_ok=True)
  prepare_data()
  stamp = provenance.stamp(REPO_ROOT)
  runs = _measure(FLAGS.methods, FLAGS.runs_dir, stamp)
  tests, movies = test_volumes(), test_movies()
  denoised_first = {}
  for name, run in runs.items():
    denoise = denoiser(os.path.join(FLAGS.runs_dir, name), run['dims'])
    scored = movies if run['method'] in MOVIE_METHODS else tests
    outputs = [denoise(noisy) for noisy, _ in scored]
    run['psnr'] = [psnr(output[..., 0], reference)
                   for output, (_, reference) in zip(outputs, scored)]
    denoised_first[name] = outputs[0][..., 0]
  noisy, reference = tests[0]
  results = {
      **stamp, **specs,
      'input_psnr': [psnr(noisy_volume[..., 0], ref) for noisy_volume, ref in tests],
      'movie_input_psnr': [psnr(noisy_movie[..., 0], ref) for noisy_movie, ref in movies],
  }
  if 'pairs' in FLAGS.methods:
    pictured = ['noisy', 'pairs_2d', 'pairs_3d'] + (
        ['neighbor2neighbor_3d'] if 'neighbor2neighbor_3d' in runs else []) + ['reference']
    panels = {'noisy': noisy[..., 0], 'reference': reference, **denoised_first}
    results['seams'] = {**seam_check(os.path.join(FLAGS.runs_dir, 'pairs_3d'), noisy), **stamp}
    results['pictures'] = pictures([panels[name] for name in pictured], reference)
    results['pictured'] = pictured
  else:
    # Kept with the pairs runs they show (their commit: the seams' own, or the pairs row's).
    results['seams'] = {'commit': previous['runs']['pairs_3d'].get('commit', previous['commit']),
                        **previous['seams']}
    for kept in ('pictures', 'pictured'):
      results[kept] = previous[kept]
  if previous is not None:
    # Rows measured before keep the commit, machine and date they were measured at.
    for name, run in previous['runs'].items():
      if run['method'] not in FLAGS.methods:
        runs[name] = {'commit': previous['commit'], 'machine': previous['machine'],
                      'date': previous['date'], **run}
  results['runs'] = {name: runs[name] for name, _, _ in VARIANTS if name in runs}
  with open(RESULTS_JSON, 'w') as output:
    json.dump(results, output, indent=1)
  for name, run in results['runs'].items():
    print(f'{name}: {statistics.mean(run["psnr"]):.2f} dB over {run["steps"]} steps, '
          f'{run["training_seconds"]:.0f} s training ({run["wall_seconds"]:.0f} s wall), '
          f'at {run["commit"]}')
  print(f'input {statistics.mean(results["input_psnr"]):.2f} dB (movies '
        f'{statistics.mean(results["movie_input_psnr"]):.2f}); wrote {RESULTS_JSON}')


def read_json(path):
  """The JSON a results tool wrote at path, or None before its first measurement."""
  if not os.path.exists(path):
    return None
  with open(path) as results_file:
    return json.load(results_file)


def read_results():
  """docs/results/volumes.json, or None before the first measurement."""
  return read_json(RESULTS_JSON)


def _mean(values):
  return statistics.mean(values)


def _provenance(results):
  """'at C on M, D' for each (commit, machine, date) the rows were measured at,
  naming the rows where they differ."""
  groups = {}
  for name, run in results['runs'].items():
    key = tuple(run.get(field, results[field]) for field in ('commit', 'machine', 'date'))
    groups.setdefault(key, [])
    if run['method'] not in groups[key]:
      groups[key].append(run['method'])
  if len(groups) == 1:
    (commit, machine, date), = groups
    return f'at {commit} on {machine}, {date}'
  return '(' + '; '.join(f'{", ".join(METHOD_SHORT[method] for method in methods)}: at '
                         f'{commit} on {machine}, {date}'
                         for (commit, machine, date), methods in groups.items()) + ')'


def gpu_line(gpu):
  """The line under the goal on bench/volumes_gpu.py's H200 measurement (its JSON,
  GPU_JSON): each 3D run's difference from the 2D run of its z step, by learning rate."""
  by_rate = {}
  for run, difference in volumes_gpu.against_planes(gpu):
    if difference is not None:
      failed = run['mean_psnr'] < statistics.mean(run['input_psnr'])
      by_rate.setdefault(volumes_gpu.learning_rate(run), []).append(
          f'{difference:+.2f} dB at z step {run["z_step"]:g}'
          + (f' (a failed run: {run["mean_psnr"]:.2f} dB, below the noisy input)' if failed else ''))
  rate_name = lambda rate: f'{rate:.1e}'.replace('e-0', 'e-')
  rates = '; '.join(f'at a peak learning rate of {rate_name(rate)}: {", ".join(found)}'
                    for rate, found in sorted(by_rate.items()))
  return ('These rows trained with n2n\'s trainer on 2 CPU cores. On one GPU '
          f'({gpu["device"].split(": ")[-1]}), in a JAX re-implementation of the U-Net '
          '(`bench/portable_unet.py`) trained by `bench/volumes_gpu.py`\'s own loop, not n2n\'s '
          'trainer (TensorFlow does not run on the GPU machines this project is lent), at equal '
          f'training time ({gpu["seconds_asked"]:g} s), 3D - 2D per plane for Noise2Noise pairs '
          f'was {rates}; one seed per row. Its 2D figures may be low: [Volumes and movies: on a '
          'GPU](volumes.md#on-a-gpu-the-3d-network-ahead).')


def section(results):
  """The "Volumes and movies" section's markdown lines, from read_results()."""
  if results is None:
    return []
  runs = results['runs']
  spec = results['spec']
  out = ['## Volumes and movies', '',
         f'Phantom stacks (`n2n/data/phantom.py`): {spec["train_volumes"]} training and '
         f'{spec["test_volumes"]} held-out volumes of {" x ".join(map(str, spec["shape"]))} '
         f'voxels, z step {spec["z_spacing"]:g} pixels (anisotropic), peak '
         f'{spec["peak_photons"]:g} photons with read noise {spec["read_noise"]:g}, two '
         'acquisitions and a reference each. Each method trains the 3D network on the stacks '
         'and the 2D network on their xy planes for as many steps as a short calibration said '
         'would take the same time (the 2D runs then trained 7-27% less time: '
         '[volumes.md](volumes.md)); both are scored on '
         'the held-out volumes (PSNR against the reference, peak: its range), denoised as '
         '`denoise.py` does by default. The single-image methods see each acquisition as a '
         'volume (or plane) of its own, never the pairs; clean targets (N2C) train on the '
         'references.']
  movie = results.get('movie_spec')
  if movie:
    out[-1] += (f' Movies: the phantom\'s middle plane while its objects drift '
                f'{movie["drift_per_frame"][1]:g} and {movie["drift_per_frame"][2]:g} pixels (y, '
                f'x) a frame, one noisy acquisition per frame; {movie["train_movies"]} training '
                f'movies of {movie["frames"]["train"]} frames and {movie["test_movies"]} held-out '
                f'ones of {movie["frames"]["test"]}, scored against their clean frames. The 3D '
                'network trains on them with time as depth (even frames in, odd frames as '
                'targets, crops starting at any frame); the 2D network on the pairs of frames '
                '(2k, 2k + 1), each a 2D scene of two acquisitions, either one the input.')
  out[-1] += f' Made by `bench/results/volumes.py` {_provenance(results)}.'
  out += ['', '| method | 2D per plane | 3D | 3D - 2D | steps 2D / 3D | training s 2D / 3D |',
          '|---|---|---|---|---|---|',
          f'| noisy input (volumes) | {_mean(results["input_psnr"]):.2f} | | | | |']
  gains = {}
  for method, title in METHOD_TITLES.items():
    if f'{method}_2d' not in runs or f'{method}_3d' not in runs:
      continue
    if method in MOVIE_METHODS:
      out.append(f'| noisy input (movies) | {_mean(results["movie_input_psnr"]):.2f} | | | | |')
    flat, deep = runs[f'{method}_2d'], runs[f'{method}_3d']
    gains[method] = _mean(deep['psnr']) - _mean(flat['psnr'])
    out.append(f'| {title} | {_mean(flat["psnr"]):.2f} | {_mean(deep["psnr"]):.2f} | '
               f'{gains[method]:+.2f} | {flat["steps"]} / {deep["steps"]} | '
               f'{flat["training_seconds"]:.0f} / {deep["training_seconds"]:.0f} |')
  missing = [METHOD_SHORT[method] for method in METHOD_TITLES if method not in gains]
  goal_methods = [method for method in gains if method not in OUTSIDE_THE_GOAL]
  verdicts = {method: round(gains[method], 2) >= GOAL_DB for method in goal_methods}
  others = [method for method in gains if method not in verdicts]
  out += ['', f'**Goal: the 3D model beats 2D per plane by at least {GOAL_DB:g} dB on '
          f'anisotropic volumes at equal training time: met for {sum(verdicts.values())} of '
          f'{len(verdicts)} methods** (' +
          '; '.join(f'{METHOD_SHORT[method]}: {gains[method]:+.2f} dB, '
                    f'{"met" if verdicts[method] else "not met"}' for method in verdicts) +
          ').' + (' Outside the count: ' + '; '.join(
              f'{METHOD_SHORT[method]} {gains[method]:+.2f} dB ({OUTSIDE_THE_GOAL[method]})'
              for method in others) + '.' if others else '') +
          ' One seed and one phantom per row.', '',
          gpu_line(read_json(GPU_JSON)), '']
  if missing:
    out += [f'Not measured here yet: {", ".join(missing)}.', '']
  seams = results['seams']
  seams_commit = seams.get('commit', runs.get('pairs_3d', {}).get('commit', results['commit']))
  out += [f'3D tiles of {" x ".join(map(str, seams["tile"]))} voxels blended over '
          f'{", ".join(map(str, seams["overlap"]))} voxels (z, y, x) depart from tiles as deep '
          f'that cover y and x whole by at most {seams["max"] * 255:.2f}/255 '
          f'(mean {seams["mean"] * 255:.3f}/255) of the white level, on the first held-out '
          f'volume with the 3D pairs network in float32 (at {seams_commit}).', '']
  titles = {'noisy': 'noisy', 'pairs_2d': '2D per plane', 'pairs_3d': '3D',
            'neighbor2neighbor_3d': '3D Neighbor2Neighbor', 'reference': 'reference'}
  captions = ' | '.join(titles[name] for name in results['pictured'])
  out += [f'xy plane {PICTURE_PLANE} of the first held-out volume ({captions}):', '',
          f'![xy plane]({results["pictures"]["xy"]})', '',
          f'xz section at y = {PICTURE_ROW}, z drawn {spec["z_spacing"]:g}x taller ({captions}):',
          '', f'![xz section]({results["pictures"]["xz"]})', '']
  return out


if __name__ == '__main__':
  define_flags()
  app.run(main)
