"""The 3D learning tests' outcome over seeds: the basis of their bounds.

  python -m bench.volume_learning_spread --seeds=1,2,3 --methods=pairs,neighbor2neighbor,\
blind_spot,neighbouring_frames,pairs_gaussian,pairs_percentile \
      --output=docs/bench/volume_learning_spread_width24.json     # the tests' width, 24
  python -m bench.volume_learning_spread --seeds=1,2,3,4 --network_width=48 \
      --output=docs/bench/volume_learning_spread.json             # the files before it

The files written before --network_width existed (volume_learning_spread.json, its
_blind_spot and _gaussian companions, volume_percentile_spread.json) were measured at the
paper's width, 48, and their rows do not say so.

Runs each 3D learning test's setup (bench/recipes/volumes.py: its data, 60 steps of batch
4 on 8-plane crops at 5e-4, float32) at every seed and prints the PSNR gains in dB of each
scored stack, denoised as denoise.py does by default:
  - pairs: tests/training/test_volume_training.py (three volumes, two acquisitions);
  - neighbor2neighbor and blind_spot: tests/methods/test_single_image_volumes.py (three
    volumes of one acquisition, scored on the volumes trained on);
  - neighbouring_frames: tests/methods/test_neighbouring_frames.py (two drifting movies);
  - pairs_gaussian: tests/training/test_volume_synthetic_noise.py (three clean stacks,
    Gaussian sigma 25 drawn on the crops; scored on two held-out volumes);
  - pairs_percentile: tests/training/test_volume_percentile.py (the pairs data written
    with the default white level, 65535, and --normalization=percentile);
  - pairs_dim: the same data divided by that white level, for comparison (what the
    percentiles are for).
"""

import json
import os
import pathlib
import tempfile

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.recipes import volumes as volume_helpers  # pylint: disable=g-import-not-at-top
from n2n.data import volumes  # pylint: disable=g-import-not-at-top

flags.DEFINE_list('seeds', ['1', '2', '3', '4'], 'Training seeds.')
flags.DEFINE_list('methods', ['pairs', 'neighbor2neighbor', 'blind_spot', 'neighbouring_frames',
                             'pairs_gaussian', 'pairs_percentile', 'pairs_dim'],
                  'Which tests\' setups.')
flags.DEFINE_float('blind_spot_fraction', 0.05,
                   'Masked fraction of the blind_spot runs (the test uses 0.05; the default of '
                   'train.py, 0.002, is too few masked voxels for 60 steps).')
flags.DEFINE_integer('network_width', volume_helpers.NETWORK_WIDTH,
                     "The runs' --network_width (the tests' own by default; 48 is the paper's).")
flags.DEFINE_string('output', '', 'Also write the results here as JSON.')
FLAGS = flags.FLAGS


def _setups(root, blind_spot_fraction):
  """{method: (records, scored, train_run overrides)} as the tests build them."""
  pairs_records, raw = volume_helpers.write_phantom_dataset(root / 'pairs')
  pairs_scored = [(volumes.read_volume(str(raw / scene / 'acquisition_0.tif')).pixels[0, ..., 0],
                   volumes.read_volume(str(raw / scene / 'reference.tif')).pixels[0, ..., 0])
                  for scene in sorted(os.listdir(raw))]
  single_records, single_scored = volume_helpers.write_single_acquisition_dataset(root / 'single')
  movies = volume_helpers.drifting_movies()
  movie_records = volume_helpers.movie_dataset(root / 'movies', [noisy for noisy, _ in movies])
  clean_records = volume_helpers.write_clean_stack_dataset(root / 'clean')
  dim_records, _ = volume_helpers.write_phantom_dataset(root / 'dim', white_level=0.0)
  sigma = 25.0
  return {
      'pairs': (pairs_records, pairs_scored, {}),
      'pairs_percentile': (dim_records, pairs_scored, dict(normalization='percentile')),
      'pairs_dim': (dim_records, pairs_scored, {}),
      'pairs_gaussian': (clean_records, volume_helpers.gaussian_held_out_volumes(sigma),
                         dict(noise='gaussian', noise_range=(sigma, sigma))),
      'neighbor2neighbor': (single_records, single_scored,
                            dict(method='neighbor2neighbor', crop_size=64, crop_depth=8)),
      'blind_spot': (single_records, single_scored,
                     dict(method='blind_spot', crop_size=32, crop_depth=8,
                          blind_spot_fraction=blind_spot_fraction)),
      'neighbouring_frames': (movie_records, movies,
                              dict(method='neighbouring_frames', crop_depth=8)),
  }


def main(argv):
  del argv
  results = {**provenance.stamp(REPO_ROOT),
             'steps': 60, 'runs': []}
  with tempfile.TemporaryDirectory() as folder:
    root = pathlib.Path(folder)
    setups = _setups(root, FLAGS.blind_spot_fraction)
    for method in FLAGS.methods:
      records, scored, overrides = setups[method]
      for seed in (int(seed) for seed in FLAGS.seeds):
        model_dir = volume_helpers.train_run(records, root / f'{method}_{seed}', 60, seed=seed,
                                             network_width=FLAGS.network_width, **overrides)
        gains = [round(gain, 2) for gain in volume_helpers.denoise_py_gains(model_dir, scored)]
        # The settings that differ between methods go into each row, so that a file of
        # rows says what it measured (the learning rate is train_run's, 5e-4, for all).
        run = {'method': method, 'seed': seed, 'settings': overrides, 'learning_rate': 5e-4,
               'network_width': FLAGS.network_width, 'gains_db': gains, 'least': min(gains)}
        print(json.dumps(run), flush=True)
        results['runs'].append(run)
        # After every row: a run stopped part-way keeps what it measured.
        json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
