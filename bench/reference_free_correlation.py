"""Does a reference-free score rank checkpoints like the true error does?

  python -m bench.reference_free_correlation --model_dir=runs/demo_scenes
  python -m bench.reference_free_correlation --model_dir=runs/cpu/single_gaussian_n2nb

Reads a run's evaluation summaries (model_dir/eval) and, for each score that
needs no clean image, logged beside the true PSNR:
  noisy_target_mse/captures   scenes: the first capture's output against the
                              second capture (scoring.evaluate_scenes)
  held_out_loss/TAG           single-image methods: their own loss on the
                              held-out noisy images (n2n/evaluation/held_out.py)
prints per step the score beside the true MSE (from the mean PSNR:
10^(-PSNR/10), the MSE of an image at that PSNR), then their Pearson
correlation and the Spearman rank correlation over the run's evaluations.
Under the methods' assumptions each score is the true error plus a constant
(the noise variance), so the two should move together.
"""

import os
import sys

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top

from n2n.evaluation import summaries  # pylint: disable=g-import-not-at-top

SCORES = ('noisy_target_mse', 'held_out_loss')

flags.DEFINE_string('model_dir', None, 'A run whose validation data has references: a scene run '
                    'or a single-image run.')
FLAGS = flags.FLAGS


def ranks(values):
  return np.argsort(np.argsort(values)).astype(np.float64)


def correlations(psnr_curve, score_curve):
  """How a reference-free score follows the true error over one run.

  Args:
    psnr_curve, score_curve: [(step, value), ...]; steps in both are used.

  Returns:
    {'pearson', 'spearman': correlation of the score with the true MSE
     (10^(-PSNR/10)), 'offset': mean score minus true MSE, 'evaluations': count};
    None with fewer than 3 common steps.
  """
  scores = dict(score_curve)
  common = [(step, psnr) for step, psnr in psnr_curve if step in scores]
  if len(common) < 3:
    return None
  true = np.array([10 ** (-psnr / 10) for _, psnr in common])
  score = np.array([scores[step] for step, _ in common])
  return {'pearson': float(np.corrcoef(true, score)[0, 1]),
          'spearman': float(np.corrcoef(ranks(true), ranks(score))[0, 1]),
          'offset': float(np.mean(score - true)), 'evaluations': len(common)}


def main(argv):
  del argv
  if not FLAGS.model_dir:
    sys.exit('reference_free_correlation.py: error: --model_dir is required')
  curves = summaries.read_scalars(os.path.join(FLAGS.model_dir, summaries.EVAL_SUBDIR))
  pairs = [(tag, f'psnr/{tag.split("/", 1)[1]}') for tag in sorted(curves)
           if tag.split('/')[0] in SCORES]
  pairs = [(tag, psnr_tag) for tag, psnr_tag in pairs if psnr_tag in curves]
  found = [(tag, psnr_tag, correlations(curves[psnr_tag], curves[tag]))
           for tag, psnr_tag in pairs]
  found = [item for item in found if item[2]]
  if not found:
    sys.exit(f'reference_free_correlation.py: error: {FLAGS.model_dir} has no 3 evaluations '
             f'with both a PSNR and a reference-free score ({", ".join(SCORES)})')
  for tag, psnr_tag, result in found:
    scores = dict(curves[tag])
    print(f'{tag}')
    print(f'{"step":>6}  {"PSNR dB":>8}  {"true MSE":>10}  {"score":>10}  {"difference":>10}')
    for step, psnr in curves[psnr_tag]:
      if step in scores:
        true = 10 ** (-psnr / 10)
        print(f'{step:>6}  {psnr:8.2f}  {true:10.6f}  {scores[step]:10.6f}  '
              f'{scores[step] - true:10.6f}')
    print(f'Pearson r = {result["pearson"]:.3f}, Spearman rho = {result["spearman"]:.3f} over '
          f'{result["evaluations"]} evaluations; score minus true MSE: {result["offset"]:.6f}')


if __name__ == '__main__':
  app.run(main)
