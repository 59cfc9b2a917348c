"""Does the noisy-target error rank checkpoints like the true error does?

  python bench/noisy_target_correlation.py --model_dir=runs/demo_scenes

Reads a scene run's evaluation summaries (model_dir/eval: psnr/captures and
noisy_target_mse/captures, logged at every evaluation) and prints, per step,
the noisy-target MSE beside the true MSE against the references (from the
mean PSNR: 10^(-PSNR/10), the MSE of an image at that PSNR), then their
Pearson correlation and the Spearman rank correlation. Under Noise2Noise's
assumptions the noisy-target MSE is the true MSE plus the noise variance, so
the two should move together.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order,unused-import
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.evaluation import summaries  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('model_dir', None, 'A run trained with --noise=none and --val_data scenes '
                    'that have references.')
flags.mark_flag_as_required('model_dir')
FLAGS = flags.FLAGS


def read_series(eval_dir):
  """{step: {'psnr': dB, 'noisy_target_mse': value}} from the eval event files."""
  series = {}
  wanted = {f'psnr/{scoring.CAPTURES_TAG}': 'psnr',
            f'noisy_target_mse/{scoring.CAPTURES_TAG}': 'noisy_target_mse'}
  for path in sorted(tf.io.gfile.glob(os.path.join(eval_dir, 'events.out.tfevents.*'))):
    for event in summaries.read_events(path):
      for value in event.summary.value:
        if value.tag in wanted:
          series.setdefault(event.step, {})[wanted[value.tag]] = float(
              tf.make_ndarray(value.tensor))
  return {step: values for step, values in series.items() if len(values) == 2}


def ranks(values):
  return np.argsort(np.argsort(values)).astype(np.float64)


def main(argv):
  del argv
  series = read_series(os.path.join(FLAGS.model_dir, summaries.EVAL_SUBDIR))
  if len(series) < 3:
    sys.exit(f'noisy_target_correlation.py: error: {FLAGS.model_dir} has {len(series)} '
             'evaluations with both psnr/captures and noisy_target_mse/captures; need 3 or more')
  steps = sorted(series)
  noisy = np.array([series[step]['noisy_target_mse'] for step in steps])
  true = np.array([10 ** (-series[step]['psnr'] / 10) for step in steps])
  print(f'{"step":>6}  {"PSNR dB":>8}  {"true MSE":>10}  {"noisy-target MSE":>16}  {"difference":>10}')
  for step, true_mse, noisy_mse in zip(steps, true, noisy):
    print(f'{step:>6}  {series[step]["psnr"]:8.2f}  {true_mse:10.6f}  {noisy_mse:16.6f}  '
          f'{noisy_mse - true_mse:10.6f}')
  pearson = np.corrcoef(true, noisy)[0, 1]
  spearman = np.corrcoef(ranks(true), ranks(noisy))[0, 1]
  print(f'Pearson r = {pearson:.3f}, Spearman rho = {spearman:.3f} over {len(steps)} evaluations; '
        f'noisy-target minus true MSE: {np.mean(noisy - true):.6f} +- {np.std(noisy - true):.6f}')


if __name__ == '__main__':
  app.run(main)
