"""Command-line flags: the only module that reads absl FLAGS.

define_train_flags()/define_validate_flags() are called by the entry points;
*_config_from_flags() turn the parsed flags into plain config values.
"""

from absl import flags

from n2n import config as config_lib
from n2n.corruptions import noise as noise_lib


def parse_float_list(flag_name, text):
  try:
    return tuple(float(part) for part in text.split(',') if part.strip())
  except ValueError:
    raise ValueError(f'--{flag_name}={text!r} is not a comma-separated list of numbers') from None


def define_train_flags():
  """Defines train.py's flags (names are a public interface; keep them)."""
  flags.DEFINE_string('train_data', None, 'Training TFRecord glob; comma-separated globs allowed.')
  flags.DEFINE_string('train_images_dir', '',
                      'Optional image folder: when --train_data matches no file, TFRecords are '
                      'first built from this folder into the directory of --train_data.')
  flags.DEFINE_string('val_data', '', 'Validation images: a folder of images or a TFRecord glob. '
                      'Empty: no evaluation during training.')
  flags.DEFINE_string('model_dir', None, 'Run directory: checkpoints, config.json, TensorBoard '
                      'logs. Rerunning with the same model_dir resumes.')
  flags.DEFINE_string('noise', 'gaussian', 'Corruption: ' + ', '.join(sorted(noise_lib.CORRUPTIONS)))
  flags.DEFINE_string('noise_range', '', 'Training level range "low,high": Gaussian sigma in '
                      '0-255 units (default 0,50) or Poisson lambda (default 0,50).')
  flags.DEFINE_string('eval_noise_levels', '', 'Comma list of evaluation levels, same units as '
                      '--noise_range (default: sigma 25 / lambda 30).')
  flags.DEFINE_enum('target', 'noisy', config_lib.TARGETS,
                    'noisy: Noise2Noise (independent corruption); clean: the N2C baseline.')
  flags.DEFINE_string('loss', 'auto', 'Loss: auto (the paper\'s loss for --noise: l2 for gaussian '
                      'and poisson, l1 for text, annealed_l0 for impulse, masked_l2 for bernoulli), '
                      'l2, l1, annealed_l0 or masked_l2.')
  flags.DEFINE_integer('channels', 3, 'Image channels: 3 (RGB) or 1 (grayscale, luma).')
  flags.DEFINE_integer('crop_size', 256, 'Square training crop in pixels, a multiple of 32.')
  flags.DEFINE_integer('batch_size', 4, 'Global batch size (all replicas together).')
  flags.DEFINE_integer('train_steps', 300000, 'Total optimizer steps.')
  flags.DEFINE_float('learning_rate', 3e-4, 'Adam peak learning rate.')
  flags.DEFINE_float('rampdown_fraction', 0.3, 'Final fraction of train_steps over which the '
                     'learning rate ramps down to 0 (cosine squared).')
  flags.DEFINE_enum('precision', 'auto', config_lib.PRECISIONS,
                    'auto picks mixed_bfloat16 where the hardware supports it, else float32.')
  flags.DEFINE_enum('strategy', 'auto', config_lib.STRATEGIES,
                    'auto: tpu if --tpu, mirrored with >1 GPU, else default.')
  flags.DEFINE_string('tpu', '', 'TPU name or address for --strategy=tpu (or auto).')
  flags.DEFINE_integer('steps_per_loop', 10, 'Training steps per tf.function call.')
  flags.DEFINE_integer('checkpoint_every', 1000, 'Steps between checkpoints.')
  flags.DEFINE_integer('keep_checkpoints', 3, 'Checkpoints to keep.')
  flags.DEFINE_integer('eval_every', 5000, 'Steps between evaluations on --val_data.')
  flags.DEFINE_integer('log_every', 100, 'Steps between console log lines and loss summaries.')
  flags.DEFINE_integer('seed', 0, 'Seed for data order, crops, augmentation, noise and weights.')
  flags.DEFINE_enum('cache', 'auto', config_lib.CACHE_MODES,
                    'Keep decoded training images in memory. auto: when the dataset manifest '
                    'says they fit in --cache_budget_mb.')
  flags.DEFINE_integer('cache_budget_mb', 2048, 'Memory budget for --cache=auto, MiB.')
  flags.DEFINE_integer('crops_per_image', 4, 'Random crops taken per decoded training image.')
  flags.DEFINE_boolean('augment_flips', True, 'Random horizontal and vertical flips.')
  flags.DEFINE_boolean('augment_rotations', True, 'Random 90-degree rotations.')
  flags.DEFINE_boolean('augment_channel_permutations', True,
                       'Random RGB channel permutations (widens the colour distribution).')
  flags.DEFINE_integer('max_eval_images', 0, 'Evaluate on at most this many images (0: all).')
  flags.DEFINE_integer('eval_image_summaries', 3, 'Validation images shown in TensorBoard.')
  flags.DEFINE_boolean('skip_corrupt_records', False, 'Skip unreadable training records with '
                       'a warning instead of stopping with an error naming the shard.')
  flags.DEFINE_boolean('jit_compile', False, 'Compile the forward and backward pass with XLA '
                       '(off by default: 2.3x slower than oneDNN on CPU here; try it on GPU).')
  flags.DEFINE_string('profile_steps', '', 'START,END: write a TensorBoard profiler trace of '
                      'those steps to model_dir/plugins/profile.')
  flags.DEFINE_boolean('deterministic', False, 'Enable TensorFlow op determinism: the same '
                       'seed gives the same losses and weights (slower on some devices).')


def train_config_from_flags(values):
  """Builds a TrainConfig from parsed flags; raises ValueError naming a bad flag."""
  if not values.train_data:
    raise ValueError('--train_data is required (a TFRecord glob)')
  if not values.model_dir:
    raise ValueError('--model_dir is required')
  noise_range = parse_float_list('noise_range', values.noise_range)
  if values.noise_range and len(noise_range) != 2:
    raise ValueError(f'--noise_range={values.noise_range!r} needs exactly two numbers: low,high')
  eval_levels = parse_float_list('eval_noise_levels', values.eval_noise_levels)
  return config_lib.TrainConfig(
      train_data=values.train_data,
      train_images_dir=values.train_images_dir,
      val_data=values.val_data,
      model_dir=values.model_dir,
      noise=values.noise,
      noise_range=noise_range,
      eval_noise_levels=eval_levels,
      target=values.target,
      loss=values.loss,
      crop_size=values.crop_size,
      batch_size=values.batch_size,
      train_steps=values.train_steps,
      learning_rate=values.learning_rate,
      rampdown_fraction=values.rampdown_fraction,
      precision=values.precision,
      strategy=values.strategy,
      tpu=values.tpu,
      steps_per_loop=values.steps_per_loop,
      checkpoint_every=values.checkpoint_every,
      keep_checkpoints=values.keep_checkpoints,
      eval_every=values.eval_every,
      log_every=values.log_every,
      seed=values.seed,
      cache=values.cache,
      cache_budget_mb=values.cache_budget_mb,
      crops_per_image=values.crops_per_image,
      max_eval_images=values.max_eval_images,
      eval_image_summaries=values.eval_image_summaries,
      skip_corrupt_records=values.skip_corrupt_records,
      deterministic=values.deterministic,
      jit_compile=values.jit_compile,
      profile_steps=tuple(int(step) for step in
                          parse_float_list('profile_steps', values.profile_steps)),
      model=config_lib.ModelConfig(channels=values.channels),
      augment=config_lib.AugmentConfig(
          flips=values.augment_flips,
          rotations=values.augment_rotations,
          channel_permutations=values.augment_channel_permutations),
  )


def define_validate_flags():
  """Defines validate.py's flags."""
  flags.DEFINE_string('checkpoint', None, 'A model_dir (newest checkpoint) or a checkpoint path '
                      '(model_dir/ckpt-N).')
  flags.DEFINE_string('data', None, 'A folder of images or a TFRecord glob.')
  flags.DEFINE_string('noise', '', 'Corruption (default: the run\'s --noise).')
  flags.DEFINE_string('noise_levels', '', 'Comma list of levels (default: the run\'s '
                      '--eval_noise_levels).')
  flags.DEFINE_integer('seed', 0, 'Seed of the fixed evaluation noise.')
  flags.DEFINE_string('output_dir', '', 'Write denoised PNGs and metrics.json here.')
  flags.DEFINE_enum('precision', 'float32', ('float32', 'mixed_bfloat16', 'mixed_float16'),
                    'Inference precision.')
  flags.DEFINE_integer('max_images', 0, 'Score at most this many images (0: all).')
