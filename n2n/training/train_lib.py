"""The distributed training loop: steps, evaluation, checkpoints, summaries.

Crash safety: checkpoints are written by tf.train.CheckpointManager, which
writes a checkpoint's files first and then atomically replaces the small
`checkpoint` index that names the newest one, so a process killed at any
moment leaves the previous complete checkpoint in place. SIGTERM/SIGINT
finish the current step loop, save, and stop; a NaN/inf loss stops before
anything is saved.
"""

import dataclasses
import os
import time

from absl import logging
import keras
import numpy as np
import tensorflow as tf

from n2n import hardware
from n2n.training import distribute
from n2n.evaluation import scoring as evaluation
from n2n.data import input_pipeline
from n2n.training import losses
from n2n.model import unet as model_lib
from n2n.training import preemption
from n2n.training import preflight
from n2n import run_dir
from n2n.training import schedules
from n2n.evaluation import summaries


class NonFiniteLossError(FloatingPointError):
  """The training loss became NaN or infinite."""


@dataclasses.dataclass
class TrainedRun:
  """What train_and_evaluate leaves behind besides the model_dir.

  Attributes:
    model: the trained keras.Model (on every worker).
    step: the global step reached.
    results: the last evaluation (see evaluation.evaluate); {} without
      --val_data and on non-chief workers.
  """
  model: object
  step: int
  results: dict


def build_model_and_optimizer(config, precision, filter_gradient_mode='direct'):
  """Creates the network and Adam with the official settings (in strategy scope).

  filter_gradient_mode: see hardware.filter_gradient_mode; it changes how
  gradients are computed, never the network or its checkpoints.
  """
  model = model_lib.build_unet(config.model.channels, precision, seed=config.seed,
                               filter_gradient_mode=filter_gradient_mode)
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
  candidates.extend(boundary for boundary in config.profile_steps if boundary > step)
  return min(candidates)


def make_train_loop(config, strategy, model, optimizer, step):
  """The tf.function running num_steps steps per call; returns their mean loss."""
  loss_fn = losses.get_loss(config.loss)

  def loss_and_gradients(batch, step_fraction):
    with tf.GradientTape() as tape:
      prediction = model(batch['input'], training=True)
      per_example = loss_fn(prediction, batch['target'], batch.get('target_mask'), step_fraction)
      # Sum over the replica's examples / global batch: Keras sums gradients across replicas.
      loss = tf.reduce_sum(per_example) / config.batch_size
      scaled_loss = optimizer.scale_loss(loss)
    return loss, tape.gradient(scaled_loss, model.trainable_variables)

  if config.jit_compile:
    loss_and_gradients = tf.function(loss_and_gradients, jit_compile=True)

  def train_step(batch):
    step_fraction = tf.cast(optimizer.iterations, tf.float32) / config.train_steps
    loss, gradients = loss_and_gradients(batch, step_fraction)
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

  return train_loop


def _run_loop(train_loop, iterator, num_steps, train_files, manager):
  """One train_loop call, with data errors turned into messages naming the shard."""
  try:
    return float(train_loop(iterator, tf.constant(num_steps, tf.int32)))
  except tf.errors.DataLossError:
    corrupt = preflight.find_corrupt_shard(train_files)
    where = f'{corrupt[0]} is corrupt ({corrupt[1]})' if corrupt else 'a shard is corrupt'
    raise ValueError(f'--train_data: {where}; rerun with --skip_corrupt_records to skip bad '
                     f'records (last checkpoint: {manager.latest_checkpoint or "none"})') from None


def train_and_evaluate(config, strategy):
  """Trains (or resumes) the run in config.model_dir and evaluates it.

  Args:
    config: config.TrainConfig.
    strategy: tf.distribute.Strategy.

  Returns:
    TrainedRun.

  Raises:
    ValueError: bad configuration or input, with a one-line message.
    NonFiniteLossError: the loss diverged (no checkpoint of it is written).
    preemption.TrainingInterrupted: stopped by SIGTERM/SIGINT after saving.
  """
  inputs = preflight.check_training_inputs(config, strategy)
  model_dir = config.model_dir
  chief = distribute.is_chief(strategy)
  write_dir = distribute.worker_write_dir(model_dir, strategy)
  gradient_mode = hardware.filter_gradient_mode(inputs.precision, strategy)
  tiling = f', filter gradients {gradient_mode}' if gradient_mode != 'direct' else ''
  logging.info('Strategy %s with %d replica(s), precision %s, global batch %d%s.',
               type(strategy).__name__, strategy.num_replicas_in_sync, inputs.precision,
               config.batch_size, tiling)

  with strategy.scope():
    model, optimizer = build_model_and_optimizer(config, inputs.precision, gradient_mode)
    step = tf.Variable(0, dtype=tf.int64, trainable=False, name='global_step',
                       aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
  checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step)
  manager = tf.train.CheckpointManager(checkpoint, write_dir, config.keep_checkpoints,
                                       checkpoint_name=run_dir.CHECKPOINT_PREFIX)
  # Every worker restores the chief's newest checkpoint.
  latest = tf.train.latest_checkpoint(model_dir)
  if latest:
    checkpoint.restore(latest).assert_existing_objects_matched()
    logging.info('Resumed from %s at step %d.', latest, int(step.numpy()))
  if chief:
    run_dir.write_config(model_dir, config)

  start_step = int(step.numpy())
  if start_step >= config.train_steps:
    logging.info('Step %d already reaches --train_steps=%d; nothing to train.', start_step,
                 config.train_steps)
  dataset = strategy.distribute_datasets_from_function(
      lambda context: input_pipeline.build_train_dataset(
          config, inputs.per_replica_batch, inputs.cache, start_step, context))
  iterator = iter(dataset)
  train_loop = make_train_loop(config, strategy, model, optimizer, step)

  if chief:
    train_writer = tf.summary.create_file_writer(os.path.join(model_dir, 'train'))
    eval_writer = tf.summary.create_file_writer(os.path.join(model_dir, 'eval'))
  else:
    train_writer = eval_writer = tf.summary.create_noop_writer()
  eval_images = inputs.eval_images if chief else []
  denoise = evaluation.make_denoiser(model)
  results = {}

  def run_evaluation(current_step):
    evaluated = evaluation.evaluate(denoise, eval_images, config.noise, config.eval_noise_levels,
                                    config.seed, keep_images=config.eval_image_summaries)
    summaries.write_evaluation(eval_writer, current_step, config.noise, evaluated, eval_images)
    logging.info('Evaluation at step %d: %s', current_step,
                 summaries.format_evaluation(config.noise, evaluated))
    return evaluated

  def save(current_step):
    path = manager.save(checkpoint_number=current_step)
    if not chief:
      # Non-chief copies exist only because every worker must take part in saving.
      tf.io.gfile.rmtree(write_dir)
    return path

  current_step = start_step
  interval_loss, interval_steps, interval_seconds = 0.0, 0, 0.0
  cluster_handler = preemption.cluster_preemption_handler(strategy, manager)
  with preemption.StopRequest(enabled=cluster_handler is None) as stop_request:
    while current_step < config.train_steps:
      num_steps = min(config.steps_per_loop, _next_boundary(current_step, config) - current_step)
      if config.profile_steps and current_step == config.profile_steps[0]:
        tf.profiler.experimental.start(write_dir)
      started = time.perf_counter()
      loss = _run_loop(train_loop, iterator, num_steps, inputs.train_files, manager)
      interval_seconds += time.perf_counter() - started
      if cluster_handler is not None:
        # All workers agree on this step, save together, and exit if one was preempted.
        cluster_handler.save_checkpoint_if_preempted(checkpoint_number=current_step + num_steps)
      if not np.isfinite(loss):
        raise NonFiniteLossError(
            f'loss became {loss} between steps {current_step} and {current_step + num_steps}; '
            f'last good checkpoint: {manager.latest_checkpoint or "none"}')
      current_step += num_steps
      if config.profile_steps and current_step == config.profile_steps[1]:
        tf.profiler.experimental.stop()
        logging.info('Profiler trace of steps %d-%d written under %s/plugins/profile.',
                     *config.profile_steps, write_dir)
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
      saved = current_step % config.checkpoint_every == 0 or current_step == config.train_steps
      if saved:
        save(current_step)
      if stop_request.signal_number is not None:
        path = manager.latest_checkpoint if saved else save(current_step)
        train_writer.flush()
        raise preemption.TrainingInterrupted(stop_request.signal_number, current_step, path)
      if eval_images and (current_step % config.eval_every == 0
                          or current_step == config.train_steps):
        results = run_evaluation(current_step)

  train_writer.flush()
  if eval_images and not results:
    results = run_evaluation(current_step)
  return TrainedRun(model=model, step=current_step, results=results)
