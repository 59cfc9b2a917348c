"""What test-time augmentation (denoise.py --tta) gains, and what it costs.

  python -m bench.tta_gain --tta_model_dir=runs/cpu/gaussian_n2n

Scores the run's checkpoint on its own validation data at its evaluation
levels (the evaluation during training: the same images, noise and seed)
without and with TTA, and times both on the same images, repetitions
interleaved so drift on a shared machine hits both alike. The cost is the
median of the per-repetition ratios of seconds per image; 8 passes make it
about 8. python -m bench.results.grid --tta puts these figures on docs/results.md.
"""

import statistics
import sys
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from n2n.inference import serving  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('tta_model_dir', None, 'A run with --val_data (its newest checkpoint).')
flags.DEFINE_integer('tta_repeats', 3, 'Timed repetitions of each.')
FLAGS = flags.FLAGS


def measure(model_dir, repeats=3):
  """PSNR without and with TTA, and the time ratio.

  Returns:
    {'levels': {tag: {'plain': dB, 'tta': dB, 'input': dB}}, 'seconds_per_image':
     {'plain', 'tta'} medians, 'cost': median ratio tta / plain, 'precision'}.
  """
  config = restore.read_run_config(model_dir)
  if not serving.of_run(config).whole_image_tta(True):
    raise ValueError(f'{model_dir}: its inference scheme averages the 8 orientations already '
                     '(--<method>_inference_orientations=8), so TTA has nothing to add')
  precision = hardware.resolve_precision(config.run.precision)
  model = restore.restore_model(model_dir, precision).model
  plain = whole_images.make_denoiser(model)
  tta = whole_images.with_test_time_augmentation(plain)
  data = eval_data.load_eval_data(config.data.val_data, config, config.corruption.noise,
                                  config.evaluation.max_eval_images)
  levels = config.corruption.eval_noise_levels
  scores = {name: scoring.score(denoise, data, config.corruption.noise, levels, config.run.seed)
            for name, denoise in (('plain', plain), ('tta', tta))}
  result = {'levels': {}, 'precision': precision}
  for plain_scores, tta_scores in zip(scores['plain'], scores['tta']):
    result['levels'][plain_scores.tag] = {'plain': plain_scores.mean_psnr,
                                          'tta': tta_scores.mean_psnr,
                                          'input': plain_scores.mean_input_psnr}
  inputs = [scene.first for scene in data] if config.corruption.noise == config_lib.NO_NOISE else [
      image.astype('float32') / 255.0 for _, image in data]
  seconds = {'plain': [], 'tta': []}
  for _ in range(repeats):
    for name, denoise in (('plain', plain), ('tta', tta)):
      started = time.perf_counter()
      for image in inputs:
        denoise(image)
      seconds[name].append((time.perf_counter() - started) / len(inputs))
  result['seconds_per_image'] = {name: statistics.median(values)
                                 for name, values in seconds.items()}
  result['cost'] = statistics.median(t / p for t, p in zip(seconds['tta'], seconds['plain']))
  return result


def main(argv):
  del argv
  if not FLAGS.tta_model_dir:
    sys.exit('tta_gain.py: error: --tta_model_dir is required')
  result = measure(FLAGS.tta_model_dir, FLAGS.tta_repeats)
  for tag, level in result['levels'].items():
    print(f'{tag}: input {level["input"]:.2f} dB, plain {level["plain"]:.2f} dB, TTA '
          f'{level["tta"]:.2f} dB ({level["tta"] - level["plain"]:+.2f})')
  print(f'{result["seconds_per_image"]["plain"]:.3f} s per image plain, '
        f'{result["seconds_per_image"]["tta"]:.3f} s with TTA: {result["cost"]:.2f}x '
        f'({result["precision"]})')


if __name__ == '__main__':
  app.run(main)
