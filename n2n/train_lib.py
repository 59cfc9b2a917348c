"""The distributed training loop: steps, evaluation, checkpoints, summaries."""

import os
import time

from absl import logging
import keras
import numpy as np
import tensorflow as tf

from n2n import distribute
from n2n import evaluation
from n2n import input_pipeline
from n2n import losses
from n2n import model as model_lib
from n2n import run_dir
from n2n import schedules
from n2n import summaries


class NonFiniteLossError(FloatingPointError):
  """The training loss became NaN or infinite."""


def _decide_cache(config, files):
  if config.cache != 'auto':
    return config.cache == 'true'
  megabytes = input_pipeline.decoded_megabytes(input_pipeline.read_manifests(files))
  if megabytes is None:
    logging.info('No manifest.json beside the shards: not caching decoded images '
                 '(use --cache=true to force).')
    return False
  fits = megabytes <= config.cache_budget_mb
  logging.info('Decoded training images take %.0f MiB: %s (budget %d MiB).', megabytes,
               'caching them in memory' if fits else 'not caching', config.cache_budget_mb)
  return fits


def _check_crop_fits(config, files):
  for manifest in input_pipeline.read_manifests(files):
    largest = manifest.get('shortest_side', {}).get('max')
    if largest is not None and largest < config.crop_size:
      raise ValueError(f'--crop_size={config.crop_size} is larger than every image in '
                       f'--train_data (the largest shortest side is {largest} px)')


def _build_model_and_optimizer(config, precision):
  """Creates the network and Adam with the official settings (in strategy scope)."""
  model = model_lib.build_unet(config.model.channels, precision, seed=config.seed)
  schedule = schedules.RampDownSchedule(config.learning_rate, config.train_steps,
                                        config.rampdown_fraction)
  optimizer = keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.99, epsilon=1e-8)
  if precision == 'mixed_float16':
    optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
  # Keras 3 creates slots lazily, which fails inside a distributed tf.function.
  optimizer.build(model.trainable_variables)
  return model, optimizer


def _next_boundary(step, config):
  """The next step at which host work (log, eval, checkpoint, end) is due."""
  candidates = [config.train_steps]
  for every in (config.log_every, config.checkpoint_every, config.eval_every):
    candidates.append((step // every + 1) * every)
  return min(candidates)


def train_and_evaluate(config, strategy):
  """Trains (or resumes) the run in config.model_dir and evaluates it.

  Args:
    config: config.TrainConfig.
    strategy: tf.distribute.Strategy.

  Returns:
    The last evaluation's results (see evaluation.evaluate), or {} without
    --val_data.

  Raises:
    ValueError: bad configuration or input, with a one-line message.
    NonFiniteLossError: the loss diverged (no checkpoint of it is written).
  """
  model_dir = config.model_dir
  precision = distribute.resolve_precision(config.precision, strategy)
  per_replica_batch = distribute.check_global_batch(config.batch_size, strategy)
  files = input_pipeline.list_files(config.train_data)
  _check_crop_fits(config, files)
  run_dir.check_compatible(model_dir, config)
  eval_images = (input_pipeline.load_eval_images(config.val_data, config.model.channels,
                                                 config.max_eval_images)
                 if config.val_data else [])
  cache = _decide_cache(config, files)
  logging.info('Strategy %s with %d replica(s), precision %s, global batch %d.',
               type(strategy).__name__, strategy.num_replicas_in_sync, precision,
               config.batch_size)

  with strategy.scope():
    model, optimizer = _build_model_and_optimizer(config, precision)
    step = tf.Variable(0, dtype=tf.int64, trainable=False, name='global_step',
                       aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
  checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step)
  manager = tf.train.CheckpointManager(checkpoint, model_dir, config.keep_checkpoints,
                                       checkpoint_name=run_dir.CHECKPOINT_PREFIX)
  if manager.latest_checkpoint:
    checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
    logging.info('Resumed from %s at step %d.', manager.latest_checkpoint, int(step.numpy()))
  run_dir.write_config(model_dir, config)

  start_step = int(step.numpy())
  if start_step >= config.train_steps:
    logging.info('Step %d already reaches --train_steps=%d; nothing to train.', start_step,
                 config.train_steps)
  dataset = strategy.distribute_datasets_from_function(
      lambda context: input_pipeline.build_train_dataset(
          config, per_replica_batch, cache, start_step, context))
  iterator = iter(dataset)
  loss_fn = losses.get_loss(config.loss)

  def train_step(batch):
    step_fraction = tf.cast(optimizer.iterations, tf.float32) / config.train_steps
    with tf.GradientTape() as tape:
      prediction = model(batch['input'], training=True)
      per_example = loss_fn(prediction, batch['target'], batch.get('target_mask'), step_fraction)
      # Sum over the replica's examples / global batch: Keras sums gradients across replicas.
      loss = tf.reduce_sum(per_example) / config.batch_size
      scaled_loss = optimizer.scale_loss(loss)
    gradients = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss

  @tf.function
  def train_loop(iterator, num_steps):
    loss_sum = tf.constant(0.0)
    for _ in tf.range(num_steps):
      per_replica_loss = strategy.run(train_step, args=(next(iterator),))
      loss_sum += strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_loss, axis=None)
    step.assign_add(tf.cast(num_steps, tf.int64))
    return loss_sum / tf.cast(num_steps, tf.float32)

  train_writer = tf.summary.create_file_writer(os.path.join(model_dir, 'train'))
  eval_writer = tf.summary.create_file_writer(os.path.join(model_dir, 'eval'))
  denoise = evaluation.make_denoiser(model)
  results = {}

  def run_evaluation(current_step):
    evaluated = evaluation.evaluate(denoise, eval_images, config.noise, config.eval_noise_levels,
                                    config.seed, keep_images=config.eval_image_summaries)
    summaries.write_evaluation(eval_writer, current_step, config.noise, evaluated, eval_images)
    logging.info('Evaluation at step %d: %s', current_step,
                 summaries.format_evaluation(config.noise, evaluated))
    return evaluated

  current_step = start_step
  interval_loss, interval_steps, interval_seconds = 0.0, 0, 0.0
  while current_step < config.train_steps:
    num_steps = min(config.steps_per_loop, _next_boundary(current_step, config) - current_step)
    started = time.perf_counter()
    loss = float(train_loop(iterator, tf.constant(num_steps, tf.int32)))
    interval_seconds += time.perf_counter() - started
    if not np.isfinite(loss):
      raise NonFiniteLossError(
          f'loss became {loss} between steps {current_step} and {current_step + num_steps}; '
          f'last good checkpoint: {manager.latest_checkpoint or "none"}')
    current_step += num_steps
    interval_loss += loss * num_steps
    interval_steps += num_steps

    if current_step % config.log_every == 0 or current_step == config.train_steps:
      images_per_second = interval_steps * config.batch_size / interval_seconds
      mean_loss = interval_loss / interval_steps
      learning_rate = float(optimizer.learning_rate)
      eta_seconds = (config.train_steps - current_step) * interval_seconds / interval_steps
      logging.info('step %d/%d  loss %.6f  lr %.2e  %.1f images/s  ETA %s', current_step,
                   config.train_steps, mean_loss, learning_rate, images_per_second,
                   time.strftime('%H:%M:%S', time.gmtime(eta_seconds)))
      extra = {}
      if config.loss == 'annealed_l0':
        gamma = losses.annealed_l0_gamma(current_step / config.train_steps)
        extra['annealed_l0_gamma'] = float(gamma)
      summaries.write_training_scalars(train_writer, current_step, mean_loss, learning_rate,
                                       images_per_second, extra)
      interval_loss, interval_steps, interval_seconds = 0.0, 0, 0.0
    if current_step % config.checkpoint_every == 0 or current_step == config.train_steps:
      manager.save(checkpoint_number=current_step)
    if eval_images and (current_step % config.eval_every == 0
                        or current_step == config.train_steps):
      results = run_evaluation(current_step)

  train_writer.flush()
  if eval_images and not results:
    results = run_evaluation(current_step)
  return results
