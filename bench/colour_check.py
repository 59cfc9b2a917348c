"""Does a model keep colours it never saw in training? (issue 20)

  python -m bench.colour_check --model=runs/demo_scenes
  python -m bench.colour_check --model=runs/demo            # a clean-image model

Scores a model on datasets/colour_check/ (saturated greens, reds, blues,
violets and yellows that the demo training photographs lack), with the
model's own kind of noise: a scene model (--noise=none) on scenes simulated
from those photographs with datasets/make_noisy_scenes.py's sensor noise, a
clean-image model on the photographs corrupted at its first evaluation level.
Prints, per image, the input and output PSNR and the per-channel mean error
of the output (output minus clean, on the 0-1 scale), and whether the image
meets the bar: error under --max_channel_error on every channel and a
positive PSNR gain. Exits 1 when an image misses it.
"""

import dataclasses
import os
import tempfile

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n.data import simulated_scenes  # pylint: disable=g-import-not-at-top
from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top

PHOTOS = os.path.join(REPO_ROOT, 'datasets', 'colour_check', 'photos')
# The bar of issue 20: no channel's mean moves by this much or more (0-1 scale).
MAX_CHANNEL_ERROR = 0.03
# The simulated captures' noise: datasets/make_noisy_scenes.py's defaults, the
# noise of the demo scenes; seed 2 (train uses 0, the demo validation 1).
SCENE_SEED = 2
# The colour test's small budget (tests/training/test_colour_generalisation.py),
# as train.py flags: a fifth of the demo's pixels (600 steps of 8 crops of
# 32x32), enough to learn (or not) colours, about 25 s a run on 2 cores.
# bench/colour_test_spread.py measures its outcome over seeds and precisions.
SMALL_BUDGET_FLAGS = ('--crop_size=32', '--batch_size=8', '--train_steps=600',
                      '--learning_rate=1e-3', '--steps_per_loop=25', '--log_every=100',
                      '--checkpoint_every=600', '--eval_every=0', '--nokeep_best')

flags.DEFINE_string('model', None, "A run's model_dir or checkpoint prefix.")
flags.DEFINE_string('photos', PHOTOS, 'Folder of colour-check photographs.')
flags.DEFINE_float('max_channel_error', MAX_CHANNEL_ERROR, 'The bar, on the 0-1 scale.')
FLAGS = flags.FLAGS


@dataclasses.dataclass(frozen=True)
class Verdict:
  """One image's colour check."""
  score: scoring.ImageScore
  passed: bool


def score_model(restored, photos=PHOTOS, keep_images=False):
  """Scores a restored model on the colour-check photographs, with its kind of noise.

  Args:
    restored: restore.RestoredModel.
    photos: folder of clean photographs.
    keep_images: keep each score's noisy, denoised and clean arrays.

  Returns:
    list of scoring.ImageScore, one per photograph.
  """
  config = restored.run_config
  denoise = whole_images.make_denoiser(restored.model)
  keep = -1 if keep_images else 0
  if config.corruption.noise != config_lib.NO_NOISE:
    images = eval_data.load_eval_images(photos, config.model.channels, flag_name='photos')
    return list(
        scoring.evaluate(denoise,
                         images,
                         config.corruption.noise,
                         config.corruption.eval_noise_levels[:1],
                         config.run.seed,
                         keep_images=keep)[0].images)
  with tempfile.TemporaryDirectory() as scenes_dir:
    simulated_scenes.write_scenes(photos, scenes_dir, captures=2,
                                  grayscale=config.data.channels == 1, seed=SCENE_SEED)
    scenes = eval_data.load_eval_scenes(scenes_dir, config, flag_name='photos')
    return list(scoring.evaluate_scenes(denoise, scenes, keep_images=keep)[0].images)


def verdicts(scores, max_channel_error=MAX_CHANNEL_ERROR):
  """Each score with whether it meets the bar (colour kept, PSNR gained)."""
  return [Verdict(score, max(map(abs, score.colour_error)) < max_channel_error
                  and score.psnr > score.input_psnr) for score in scores]


def format_verdicts(checked):
  lines = [f'{"image":<16} {"input":>7} {"output":>7} {"gain":>6}  mean error R, G, B   bar']
  for verdict in checked:
    score = verdict.score
    errors = ', '.join(f'{error:+.3f}' for error in score.colour_error)
    lines.append(f'{score.name:<16} {score.input_psnr:7.2f} {score.psnr:7.2f} '
                 f'{score.psnr - score.input_psnr:+6.2f}  {errors:<19} '
                 f'{"ok" if verdict.passed else "MISSED"}')
  return '\n'.join(lines)


def summary(checked):
  """{'worst_channel_error', 'meeting_the_bar', 'mean_gain_db'} of verdicts."""
  gains = [verdict.score.psnr - verdict.score.input_psnr for verdict in checked]
  return {'worst_channel_error': max(max(map(abs, verdict.score.colour_error))
                                     for verdict in checked),
          'meeting_the_bar': sum(verdict.passed for verdict in checked),
          'mean_gain_db': sum(gains) / len(gains)}


def main(argv):
  del argv
  restored = restore.restore_model(FLAGS.model, flag_name='model')
  checked = verdicts(score_model(restored, FLAGS.photos), FLAGS.max_channel_error)
  print(
      f'{restored.prefix} (step {restored.step}, noise {restored.run_config.corruption.noise}) on '
      f'{FLAGS.photos}:')
  print(format_verdicts(checked))
  missed = [verdict.score.name for verdict in checked if not verdict.passed]
  print(f'{len(checked) - len(missed)} of {len(checked)} meet the bar'
        + (f'; missed: {", ".join(missed)}' if missed else ''))
  return 1 if missed else 0


if __name__ == '__main__':
  flags.mark_flags_as_required(['model'])
  app.run(main)
