"""How deep 3D tiles should be: a 3D network trained on thin crops, denoising whole stacks
against tiles as deep as its training crops (the basis of denoise.py's --volume_tile depth 0,
the run's crop depth, and --volume_overlap auto, half of it).

  python -m bench.volume_tile_depth --output=docs/bench/volume_tile_depth.json
  python -m bench.volume_tile_depth --render=docs/bench/volume_tile_depth.json  # the table

Trains short runs on phantom data (n2n/data/phantom.py) from scratch in a temporary
folder, on 8 x 32 x 32 crops, batch 4, learning rate 5e-4, for each seed:
  - pairs: three 16 x 64 x 64 volumes of two acquisitions (--steps_pairs steps), scored on
    acquisition 0 of each against its reference;
  - neighbouring_frames: two 48-frame movies of one acquisition drifting 0.1 and 0.05 pixels
    a frame (--steps_frames steps), scored on each movie against its reference;
then denoises each stack whole (one tile as deep as the stack), in tiles of the training
crop's depth without overlap, and in such tiles overlapping by half their depth. PSNR gains
over the noisy input in dB (peak: the reference's range), float32.
"""

import json
import os
import tempfile

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n.data import phantom  # pylint: disable=g-import-not-at-top
from n2n.data import scene_writer  # pylint: disable=g-import-not-at-top
from n2n.data import volumes  # pylint: disable=g-import-not-at-top
from n2n.inference import loading  # pylint: disable=g-import-not-at-top
from n2n.training import distribute  # pylint: disable=g-import-not-at-top
from n2n.training import train_lib  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top

flags.DEFINE_list('seeds', ['1', '2', '3'], 'Training seeds.')
flags.DEFINE_integer('steps_pairs', 60, 'Steps of the pairs runs.', lower_bound=1)
flags.DEFINE_integer('steps_frames', 150, 'Steps of the neighbouring-frames runs.', lower_bound=1)
flags.DEFINE_string('output', '', 'Also write the results here as JSON.')
flags.DEFINE_string('render', '', 'Print the markdown table of this JSON result and stop.')
FLAGS = flags.FLAGS
# The phantom's counts reach about 100 + 8 * (2 + 30) plus noise: 600 maps them near 1.
WHITE_LEVEL = 600.0
CROP_DEPTH = 8
SPEC = phantom.PhantomSpec(shape=(16, 64, 64), nuclei=5, nucleus_radius=10.0, filaments=6)
MOVIE_SPEC = phantom.PhantomSpec(shape=(16, 64, 64), nuclei=6, nucleus_radius=10.0, filaments=6)


def _write(path, array, axes):
  like = volumes.Volume(volumes.to_canonical(array, axes), axes, 'imagej', (0.4, 0.1, 0.1),
                        'micron')
  volumes.write_volume(path, like.pixels, like)


def _pairs_data(root):
  """(records folder, [(noisy, reference)]) of three phantom volumes."""
  scored = []
  for index in range(3):
    captures, reference = phantom.phantom_scene(SPEC, seed=10 + index)
    folder = os.path.join(root, 'raw', f'scene_{index}')
    os.makedirs(folder)
    for number, capture in enumerate(captures):
      _write(os.path.join(folder, f'acquisition_{number}.tif'), capture, 'ZYX')
    scored.append((captures[0], reference))
  scene_writer.write_scene_dataset(os.path.join(root, 'raw'), os.path.join(root, 'records'),
                                   white_level=WHITE_LEVEL)
  return os.path.join(root, 'records'), scored


def _movie_data(root):
  """(records folder, [(noisy, reference)]) of two drifting movies, one acquisition each."""
  movies = [phantom.phantom_movie(MOVIE_SPEC, seed, 48, drift_per_frame=(0.0, 0.1, 0.05))
            for seed in (1, 2)]
  os.makedirs(os.path.join(root, 'raw'))
  for index, (noisy, _) in enumerate(movies):
    _write(os.path.join(root, 'raw', f'movie_{index}.tif'), noisy, 'TYX')
  scene_writer.write_scene_dataset(os.path.join(root, 'raw'), os.path.join(root, 'records'),
                                   white_level=WHITE_LEVEL, noisy_images=True)
  return os.path.join(root, 'records'), movies


def _psnr(estimate, reference):
  error = np.mean((np.asarray(estimate, np.float64) - reference) ** 2)
  return 10 * np.log10(float(reference.max() - reference.min()) ** 2 / error)


def _train(records, model_dir, method, steps, seed):
  config = config_lib.train_config(
      train_data=records, model_dir=model_dir, noise='none', method=method, crop_size=32,
      crop_depth=CROP_DEPTH, batch_size=4, precision='float32', seed=seed, train_steps=steps,
      steps_per_loop=10, log_every=steps, checkpoint_every=steps, learning_rate=5e-4,
      rampdown_fraction=0.0)
  train_lib.train_and_evaluate(config, distribute.create_strategy('default'))


def _gains(model_dir, scored):
  """{tiling: [gain per stack]} for the three tilings."""
  network = loading.from_checkpoint(model_dir, 'float32')
  found = {}
  for name, tile_depth, overlap in (('whole stack', None, 0),
                                    ('crop depth, no overlap', CROP_DEPTH, 0),
                                    ('crop depth, half overlap', CROP_DEPTH, CROP_DEPTH // 2)):
    gains = []
    for noisy, reference in scored:
      values = noisy.astype(np.float32)[..., np.newaxis] / WHITE_LEVEL
      depth = tile_depth or values.shape[0]
      denoise = loading.volume_function(network, (depth, 64, 64), (overlap, 0, 0), 1)
      clean = reference / WHITE_LEVEL
      gains.append(_psnr(denoise(values)[..., 0], clean) - _psnr(values[..., 0], clean))
    found[name] = [round(gain, 2) for gain in gains]
  return found


TILINGS = ('whole stack', 'crop depth, no overlap', 'crop depth, half overlap')


def table(results):
  """The markdown table of a result: per method and seed, the least gain over the
  scored stacks for each tiling."""
  lines = ['| method, steps | seed | ' + ' | '.join(TILINGS) + ' |',
           '|---|---|' + '---|' * len(TILINGS)]
  for run in results['runs']:
    steps = results['steps'][run['method']]
    lines.append(f'| {run["method"]}, {steps} | {run["seed"]} | ' +
                 ' | '.join(f'{min(run["gains_db"][name]):+.2f}' for name in TILINGS) + ' |')
  return '\n'.join(lines) + (f'\n\n{results["machine"]}, commit {results["commit"]}; '
                              f'{results["crop"][0]}-plane crops, batch {results["batch"]}, float32.')


def main(argv):
  del argv
  if FLAGS.render:
    with open(FLAGS.render) as source:
      print(table(json.load(source)))
    return
  results = {**provenance.stamp(REPO_ROOT),
             'crop': [CROP_DEPTH, 32, 32], 'batch': 4, 'learning_rate': 5e-4,
             'steps': {'pairs': FLAGS.steps_pairs, 'neighbouring_frames': FLAGS.steps_frames},
             'runs': []}
  with tempfile.TemporaryDirectory() as root:
    pairs_records, pairs_scored = _pairs_data(os.path.join(root, 'pairs'))
    movie_records, movies = _movie_data(os.path.join(root, 'movies'))
    for seed in (int(seed) for seed in FLAGS.seeds):
      for method, records, scored, steps in (
          ('pairs', pairs_records, pairs_scored, FLAGS.steps_pairs),
          ('neighbouring_frames', movie_records, movies, FLAGS.steps_frames)):
        model_dir = os.path.join(root, f'{method}_{seed}')
        _train(records, model_dir, method, steps, seed)
        run = {'method': method, 'seed': seed, 'gains_db': _gains(model_dir, scored)}
        print(json.dumps(run), flush=True)
        results['runs'].append(run)
  json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
