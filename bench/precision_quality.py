"""What denoising in mixed bfloat16 (or float16) costs in PSNR against float32.

  python -m bench.precision_quality --quality_runs=runs/cpu/gaussian_n2n,runs/cpu/scenes_n2n

Scores each run's newest checkpoint with validate.py's own scoring (its
validation data, evaluation levels and seed, as in training) once per
precision, and reports per run and level the mean PSNR and the largest
per-image difference from float32. The figures behind denoise.py's default
--precision=auto (issue 24): every difference must stay within 0.05 dB.
"""

import json

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n.evaluation import validation  # pylint: disable=g-import-not-at-top

flags.DEFINE_list('quality_runs', [], 'Runs (model dirs) with --val_data to score.')
flags.DEFINE_list('quality_precisions', ['mixed_bfloat16'], 'Precisions compared with float32.')
flags.DEFINE_string('quality_output', '', 'Write the figures here as JSON.')
FLAGS = flags.FLAGS


def compare(model_dir, precisions):
  """{precision: {level tag: {'psnr', 'float32_psnr', 'mean_difference', 'largest_difference'}}}
  for one run, differences in dB (precision minus float32)."""
  scored = {}
  for precision in ['float32'] + list(precisions):
    _, results = validation.validate_once(
        config_lib.ValidateConfig(checkpoint=model_dir, precision=precision))
    scored[precision] = {scores.tag: scores for scores in results}
  figures = {}
  for precision in precisions:
    figures[precision] = {}
    for tag, scores in scored[precision].items():
      reference = scored['float32'][tag]
      differences = [image.psnr - base.psnr for image, base in zip(scores.images, reference.images)
                     if image.psnr is not None and base.psnr is not None]
      figures[precision][tag] = {
          'psnr': scores.mean_psnr, 'float32_psnr': reference.mean_psnr,
          'mean_difference': scores.mean_psnr - reference.mean_psnr,
          'largest_difference': max(differences, key=abs) if differences else None}
  return figures


def main(argv):
  del argv
  everything = {}
  for model_dir in FLAGS.quality_runs:
    everything[model_dir] = compare(model_dir, FLAGS.quality_precisions)
    for precision, levels in everything[model_dir].items():
      for tag, figure in levels.items():
        print(f'{model_dir} {precision} {tag}: {figure["psnr"]:.3f} dB against float32 '
              f'{figure["float32_psnr"]:.3f} ({figure["mean_difference"]:+.4f} mean, '
              f'{figure["largest_difference"]:+.4f} largest per image)', flush=True)
  if FLAGS.quality_output:
    with open(FLAGS.quality_output, 'w') as output:
      json.dump(everything, output, indent=1)


if __name__ == '__main__':
  app.run(main)
