"""validate.py's library: score one checkpoint, or follow a run as a sidecar.

Unset settings take the run's own values (noise, levels, seed, precision,
data), so validate.py reports what the evaluation during training reported
for the same checkpoint.
"""

import dataclasses
import os

from absl import logging
import tensorflow as tf

from n2n import config as config_lib
from n2n import hardware
from n2n import run_dir
from n2n import shipped
from n2n.corruptions import catalog
from n2n.evaluation import eval_data
from n2n.evaluation import evaluator as evaluator_lib
from n2n.evaluation import report
from n2n.evaluation import scoring
from n2n.evaluation import summaries
from n2n.inference import whole_images
from n2n.inference import restore
from n2n.model import network


@dataclasses.dataclass(frozen=True)
class Plan:
  """What validate.py evaluates, every value resolved."""
  noise: str
  levels: tuple
  seed: int
  precision: str
  data: str
  max_images: int


def resolve_plan(config, run_config):
  """Fills config.ValidateConfig's unset values from the run's TrainConfig.

  Raises:
    ValueError: no --data given and the run had no --val_data; a 3D run on
      synthetic noise.
  """
  if config_lib.model_spatial_dims(run_config) == 3:
    if run_config.corruption.noise != config_lib.NO_NOISE:
      raise ValueError(f'--checkpoint={config.checkpoint} is a 3D run on synthetic noise: '
                       'validate.py scores 3D runs on scenes of stacks only so far')
  noise = config.noise or run_config.corruption.noise
  if (noise == config_lib.NO_NOISE) != (run_config.corruption.noise == config_lib.NO_NOISE):
    raise ValueError(
        f'--noise={noise}: the run was trained with --noise={run_config.corruption.noise}; '
        'a run on real noisy captures is scored on scenes, a run on synthetic '
        'noise on clean images')
  if noise == config_lib.NO_NOISE:
    if config.noise_levels:
      raise ValueError('--noise_levels does not apply to a run on real noisy captures')
    levels = ()
  elif config.noise_levels:
    levels = config.noise_levels
  elif noise == run_config.corruption.noise:
    levels = run_config.corruption.eval_noise_levels
  else:
    levels = catalog.get_spec(noise).default_eval_levels
  data = config.data or run_config.data.val_data
  if not data:
    raise ValueError('--data is required: the run was trained without --val_data')
  precision = run_config.run.precision if config.precision == 'run' else config.precision
  max_images = config.max_images or (run_config.evaluation.max_eval_images if config.follow else 0)
  return Plan(noise, tuple(levels), run_config.run.seed if config.seed < 0 else config.seed,
              hardware.resolve_precision(precision), data, max_images)


def validate_once(config):
  """Scores one checkpoint and writes --output_dir if given.

  Returns:
    (the printable report: a header line and the table, list of LevelScores).
  """
  prefix, model_dir = run_dir.resolve_checkpoint(config.checkpoint)
  plan = resolve_plan(config, restore.read_run_config(model_dir))
  restored = restore.restore_model(prefix, plan.precision)
  images = eval_data.load_eval_data(plan.data, restored.run_config, plan.noise, plan.max_images,
                                  flag_name='data')
  denoise, held_out_loss = evaluator_lib.scoring_functions(restored.network, restored.serving,
                                                           plan.seed)
  if restored.serving.whole_image_tta(config.tta):
    denoise = whole_images.with_test_time_augmentation(denoise)
  results = scoring.score(denoise, images, plan.noise, plan.levels, plan.seed,
                          keep_images=-1 if config.output_dir else 0,
                          held_out_loss=held_out_loss)
  header = (f'checkpoint {restored.prefix} (step {restored.step}), seed {plan.seed}, '
            f'precision {plan.precision}')
  if config.output_dir:
    report.write_outputs(config.output_dir, restored.prefix, restored.step, results)
  return f'{header}\n{report.format_table(results)}', results


def follow(config, poll_seconds=2.0):
  """Sidecar evaluation: scores each new checkpoint of a run as it appears.

  Writes the same summaries (model_dir/eval, same tags) and log line as the
  evaluation during training, and stops once the run's last step is scored.
  Like TensorFlow's SidecarEvaluator it scores the newest checkpoint at each
  look, so checkpoints written while it evaluates may be skipped.

  Args:
    config: config.ValidateConfig with follow=True; checkpoint is a model_dir.
    poll_seconds: how often to look for a new checkpoint.

  Returns:
    list of the steps scored.

  Raises:
    ValueError: --checkpoint is a file, or no new checkpoint came within
      --follow_timeout seconds.
  """
  model_dir = config.checkpoint
  if shipped.resolve(model_dir) != model_dir:
    raise ValueError(f'--follow scores a run\'s checkpoints as it trains; --checkpoint='
                     f'{model_dir} is a model n2n ships: leave --follow out to score it')
  # The folder may not exist yet: a sidecar can start before the training job.
  if tf.io.gfile.exists(model_dir) and not tf.io.gfile.isdir(model_dir):
    raise ValueError(f'--follow needs --checkpoint to be a model_dir, not {model_dir!r}')
  evaluator = model = run_config = None
  scored = []
  for prefix in tf.train.checkpoints_iterator(model_dir, poll_seconds, config.follow_timeout):
    if run_config is None:
      run_config = restore.read_run_config(model_dir)
      plan = resolve_plan(config, run_config)
      model = network.build_run_network(run_config, plan.precision)
      images = eval_data.load_eval_data(plan.data, run_config, plan.noise, plan.max_images,
                                      flag_name='data')
      writer = tf.summary.create_file_writer(os.path.join(model_dir, summaries.EVAL_SUBDIR))
      evaluator = evaluator_lib.Evaluator(model, images, plan.noise, plan.levels, plan.seed,
                                          run_config.evaluation.eval_image_summaries, writer,
                                          run_config.evaluation.colour_shift_warning,
                                          run_config)
    try:
      step = restore.checkpoint_step(prefix)
      if scored and step <= scored[-1]:
        continue
      restore.load_weights(model, prefix)
    except (tf.errors.NotFoundError, ValueError):
      # With --keep_checkpoints, training may delete the checkpoint between
      # its appearing and its loading (the first look also loads the data).
      if tf.io.gfile.exists(prefix + '.index'):
        raise
      logging.warning('%s was deleted before it could be scored; going on with the next '
                      'checkpoint.', prefix)
      continue
    evaluator(step)
    scored.append(step)
    if step >= run_config.optimisation.train_steps:
      return scored
  raise ValueError(f'--follow: no new checkpoint in {model_dir!r} for {config.follow_timeout} s '
                   f'(scored steps: {", ".join(map(str, scored)) or "none"})')
