"""The 2D learning tests' outcome over seeds and run lengths: the basis of their bounds.

  python -m bench.learning_test_spread --tests=percentile --seeds=3,4,5,6 --steps=150 \
      --output=docs/bench/learning_test_spread.json    # the committed file (at ccc894e)

Runs each test's own setup (its data, its runs, its scoring: the functions the
test module calls) at every seed, float32, and prints what its assertion compares:
  - pixel_shuffle: tests/methods/test_pixel_shuffle_learning.py: the gains in dB of
    Neighbor2Neighbor without and through a stride-2 pixel-shuffle, on noise
    correlated over 2x2 pixels; the test asserts their difference;
  - structn2v: tests/methods/test_structn2v_learning.py: the gains in dB of blind-spot
    without and with 9-pixel row lines, on noise correlated along rows; likewise;
  - percentile: tests/training/test_percentile_training.py: the mean PSNRs of a
    white-level run on stretched 16-bit data and a percentile run on the same data
    squeezed into 1000-1400; the test asserts the stretched run's gain over its input
    and the percentile run's distance below it;
  - recorrupted: tests/methods/test_recorrupted_learning.py: the gain in dB of
    Recorrupted-to-Recorrupted on the pixel-shuffle test's data, given that noise's own
    model; the test bounds it;
  - single_image_neighbor2neighbor, single_image_blind_spot:
    tests/training/test_single_image.py's short runs on single noisy images: the
    PSNR gain in dB, the reference-free score trained over untrained, and the first
    and last logged loss; the test bounds the gain and the ratio;
  - few_dozen_steps: tests/training/test_train_lib.py's 60-step Gaussian run: the last
    logged loss over the first and the PSNR's rise from the first evaluation (step
    10) to the last; the test bounds both;
  - scenes: tests/training/test_scene_training.py's run on noisy captures alone: its
    PSNR over the noisy input's on the validation scenes; the test bounds it;
  - outlier_batch: tests/training/test_gradient_clipping.py's two runs through one
    outlier batch, with and without clipping: for each, the fall at the outlier
    (the best PSNR before it against the one after it) and from the best PSNR to
    the last; with clipping, the rise from step 60 to the last (no test bounds it: it
    fell at one seed of six); the tests bound the rest.
--steps gives every test's run that length (0: each test's own). --output is
rewritten after every row, holding this run's rows only: another length or test
goes to a file of its own. The precision is float32 because every one of these
tests trains in float32 (their settings say so). The runs are the tests' own recipes
(bench/recipes/), on the CPU split into two logical devices and with oneDNN's kernels, as
the suite has them (tests/conftest.py).
"""

import json
import pathlib
import tempfile

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
from n2n import config as config_lib  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from bench import recipes  # pylint: disable=g-import-not-at-top
recipes.two_logical_cpus()  # as the suite runs them, before TensorFlow runs anything
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench.recipes import clipping  # pylint: disable=g-import-not-at-top
from bench.recipes import correlated  # pylint: disable=g-import-not-at-top
from bench.recipes import images  # pylint: disable=g-import-not-at-top
from bench.recipes import pairs  # pylint: disable=g-import-not-at-top
from bench.recipes import percentile  # pylint: disable=g-import-not-at-top
from bench.recipes import scenes  # pylint: disable=g-import-not-at-top
from bench.recipes import arrays  # pylint: disable=g-import-not-at-top
from bench.recipes import single_image  # pylint: disable=g-import-not-at-top

flags.DEFINE_list('tests', ['pixel_shuffle', 'structn2v', 'percentile'], 'Which tests\' setups, '
                  'of pixel_shuffle, recorrupted, structn2v, percentile, '
                  'single_image_neighbor2neighbor, single_image_blind_spot, few_dozen_steps, '
                  'scenes, outlier_batch and arrays_captures.')
flags.DEFINE_list('seeds', ['1', '2', '3', '4'], 'Training seeds.')
flags.DEFINE_integer('steps', 0, 'Steps of every run; 0: each test\'s own.')
flags.DEFINE_integer('network_width', 0, "Every run's --network_width; 0: each test's own.")
flags.DEFINE_string('output', '', 'Also write the results here as JSON.')
FLAGS = flags.FLAGS


def _pixel_shuffle(root, unused_data, seed, steps, network_width):
  plain, shuffled = correlated.stride_gains(root, seed, steps, network_width)
  return {'plain_db': plain, 'shuffled_db': shuffled, 'difference_db': shuffled - plain}


def _recorrupted(root, unused_data, seed, steps, network_width):
  return {'gain_db': correlated.recorrupted_gain(root, seed, steps, network_width)}


def _structn2v(root, unused_data, seed, steps, network_width):
  plain, lines = correlated.line_gains(root, seed, steps, network_width)
  return {'plain_db': plain, 'lines_db': lines, 'difference_db': lines - plain}


def _percentile(root, datasets, seed, steps, network_width):
  scores = percentile.compare(datasets, root, seed, steps, network_width)
  return {**scores, 'stretched_gain_db': scores['stretched'] - scores['stretched_input'],
          'percentile_minus_stretched_db': scores['percentile'] - scores['stretched']}


def _run_folder(root, seed, steps, network_width):
  """A fresh model_dir per run under root (runs of one test share root and its data)."""
  return root / f'run_{seed}_{steps}_{network_width}'


def _single_image(method):
  def run(root, data, seed, steps, network_width):
    image_folder, records = data
    result = single_image.short_run(image_folder, records,
                                    _run_folder(root, seed, steps, network_width), method, seed,
                                    steps, network_width)
    return {'gain_db': result['gain_db'], 'held_out_ratio': result['held_out_ratio'],
            'first_loss': result['losses'][0], 'last_loss': result['losses'][-1]}
  return run


def _few_dozen_steps(root, data, seed, steps, network_width):
  image_folder, records = data
  losses, psnrs = pairs.few_dozen_steps(
      records, image_folder, _run_folder(root, seed, steps, network_width), seed, steps,
      network_width)
  return {'loss_ratio': losses[-1] / losses[0], 'psnr_rise_db': psnrs[-1] - psnrs[0],
          'first_psnr': psnrs[0], 'last_psnr': psnrs[-1]}


def _scenes(root, data, seed, steps, network_width):
  run = scenes.train_scene_run(
      *data, _run_folder(root, seed, steps, network_width), seed, steps, network_width)
  scores, = run.results
  return {'gain_db': scores.mean_psnr - scores.mean_input_psnr, 'psnr': scores.mean_psnr,
          'input_psnr': scores.mean_input_psnr}


def _outlier_batch(unused_root, train, seed, steps, network_width):
  if (steps, network_width) != (clipping.OUTLIER_RUN_STEPS,
                                config_lib.PAPER_NETWORK_WIDTH):
    raise ValueError('outlier_batch runs the tests\' own 120 steps at the paper\'s width: '
                     'leave --steps and --network_width out')
  clipped_psnrs, clipped = train(4.0, seed)
  plain_psnrs, plain_clipped = train(0.0, seed)
  fall = clipping.fall_at_outlier
  below_best = clipping.below_best_at_end
  # float and int: numpy's scalars are not JSON.
  return {'clipped_fall_at_outlier_db': float(fall(clipped_psnrs)),
          'clipped_best_minus_last_db': float(below_best(clipped_psnrs)),
          'clipped_rise_after_outlier_db': float(clipped_psnrs[-1] - clipped_psnrs[5]),
          'clipped_steps': int(clipped),
          'plain_fall_at_outlier_db': float(fall(plain_psnrs)),
          'plain_best_minus_last_db': float(below_best(plain_psnrs)),
          'plain_clipped_steps': int(plain_clipped)}


def _arrays_captures(root, unused_data, seed, steps, network_width):
  return {'gain_db': arrays.captures_gain(_run_folder(root, seed, steps, network_width), seed,
                                          steps, network_width)}


# name -> (writes the test's data under a folder and returns what its runs take
# besides the folder, runs one seed, the test's own steps and network width)
TESTS = {
    'pixel_shuffle': (correlated.write_pixel_shuffle_data, _pixel_shuffle,
                      correlated.PIXEL_SHUFFLE_STEPS, correlated.PIXEL_SHUFFLE_WIDTH),
    'recorrupted': (correlated.write_pixel_shuffle_data, _recorrupted,
                    correlated.PIXEL_SHUFFLE_STEPS, correlated.PIXEL_SHUFFLE_WIDTH),
    'structn2v': (correlated.write_row_noise_data, _structn2v,
                  correlated.LINE_STEPS, correlated.LINE_WIDTH),
    'percentile': (percentile.write_datasets, _percentile,
                   percentile.STEPS, percentile.NETWORK_WIDTH),
    **{f'single_image_{method}': (images.write_image_data, _single_image(method),
                                  settings['train_steps'], single_image.NETWORK_WIDTH)
       for method, settings in single_image.SHORT_RUNS.items()},
    'few_dozen_steps': (images.write_image_data, _few_dozen_steps,
                        pairs.FEW_DOZEN_STEPS, config_lib.PAPER_NETWORK_WIDTH),
    'scenes': (scenes.write_scene_data, _scenes, scenes.SCENE_STEPS,
               config_lib.PAPER_NETWORK_WIDTH),
    'arrays_captures': (lambda unused_root: None, _arrays_captures, arrays.STEPS,
                        arrays.NETWORK_WIDTH),
    'outlier_batch': (lambda unused_root: clipping.outlier_batch_training(),
                      _outlier_batch, clipping.OUTLIER_RUN_STEPS,
                      config_lib.PAPER_NETWORK_WIDTH),
}


def main(argv):
  del argv
  results = {**provenance.stamp(REPO_ROOT),
             'precision': 'float32', 'runs': []}
  with tempfile.TemporaryDirectory() as folder:
    for name in FLAGS.tests:
      write_data, run, own_steps, own_width = TESTS[name]
      steps = FLAGS.steps or own_steps
      network_width = FLAGS.network_width or own_width
      root = pathlib.Path(folder) / name
      root.mkdir()
      data = write_data(root)
      for seed in (int(seed) for seed in FLAGS.seeds):
        scores = {key: round(value, 3)
                  for key, value in run(root, data, seed, steps, network_width).items()}
        row = {'test': name, 'seed': seed, 'steps': steps, 'network_width': network_width,
               **scores}
        print(json.dumps(row), flush=True)
        results['runs'].append(row)
        # After every row: a run stopped part-way keeps what it measured.
        json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
