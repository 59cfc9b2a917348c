"""The Trainer: model, optimizer, step counter and checkpoints of one run, and
train(num_steps), the distributed training loop (orbit's StandardTrainer role).

Crash safety: checkpoints are written by tf.train.CheckpointManager, which
writes a checkpoint's files first and then atomically replaces the small
`checkpoint` index that names the newest one, so a process killed at any
moment leaves the previous complete checkpoint in place.
"""

import keras
import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir
from n2n.methods import registry as methods_registry
from n2n.pipelines import registry as pipelines
from n2n.model import network
from n2n.training import controller
from n2n.training import gradient_clipping
from n2n.training import losses
from n2n.training import schedules

# The checkpoint entry of the running gradient-norm average (checkpoints
# written before clipping existed lack it).
GRADIENT_NORM_AVERAGE_KEY = 'gradient_norm_average/.ATTRIBUTES/VARIABLE_VALUE'


def build_model_and_optimizer(config, precision, filter_gradient_mode='direct'):
  """Creates the network and Adam with the official settings (call in strategy scope).

  Args:
    config: config.TrainConfig.
    precision: resolved precision, 'float32', 'mixed_bfloat16' or 'mixed_float16'.
    filter_gradient_mode: see hardware.filter_gradient_mode; it changes how
      gradients are computed, never the network or its checkpoints.

  Returns:
    (keras.Model, built keras optimizer).
  """
  model = network.build_run_network(config, precision, seed=config.run.seed,
                                    filter_gradient_mode=filter_gradient_mode)
  schedule = schedules.RampDownSchedule(config_lib.peak_learning_rate(config),
                                        config.optimisation.train_steps,
                                        config.optimisation.rampdown_fraction)
  optimizer = keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.99, epsilon=1e-8)
  if precision == 'mixed_float16':
    optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
  # Keras 3 creates slots lazily, which fails inside a distributed tf.function.
  optimizer.build(model.trainable_variables)
  return model, optimizer


def poison_if_any_replica_overflowed(gradients):
  """Makes every replica's gradients NaN when any replica's are not finite.

  Keras 3's LossScaleOptimizer decides "finite" from replica 0's gradients,
  before they are summed across replicas; an overflow on another replica would
  then be summed into the update and turn the weights into NaN. With this, all
  replicas agree, and the optimizer skips the step and halves the loss scale.

  Args:
    gradients: list of this replica's gradient tensors (float, any shapes).

  Returns:
    The same list, unchanged or all NaN; call in a replica context.
  """
  local_overflow = tf.cast(tf.logical_not(tf.reduce_all(
      [tf.reduce_all(tf.math.is_finite(gradient)) for gradient in gradients])), tf.float32)
  overflowed = tf.distribute.get_replica_context().all_reduce(
      tf.distribute.ReduceOp.SUM, local_overflow) > 0
  return [gradient + tf.cast(tf.where(overflowed, float('nan'), 0.0), gradient.dtype)
          for gradient in gradients]


def _max_ignoring_nan(first, second):
  """The larger of two scalars, NaN standing for "no value"."""
  return tf.where(tf.math.is_nan(first), second,
                  tf.where(tf.math.is_nan(second), first, tf.maximum(first, second)))


class Trainer:
  """Owns the model, optimizer, step and checkpoint of one run, and trains it.

  Attributes:
    model: keras.Model.
    optimizer: keras optimizer (LossScaleOptimizer for mixed_float16).
    step: int64 tf.Variable, the global step.
    gradient_norm_average: float32 tf.Variable, the running average of
      clipped gradient norms (0 until the first step); see gradient_clipping.
    checkpoint: tf.train.Checkpoint(model, optimizer, step,
      gradient_norm_average); these attribute names are the checkpoint
      format: never rename them.
    manager: tf.train.CheckpointManager writing to checkpoint_dir, or None.
  """

  def __init__(self, config, strategy, precision, filter_gradient_mode='direct',
               checkpoint_dir=None):
    """Builds everything in the strategy's scope.

    Args:
      config: config.TrainConfig.
      strategy: tf.distribute.Strategy.
      precision: the resolved precision.
      filter_gradient_mode: see build_model_and_optimizer.
      checkpoint_dir: where this worker saves (model_dir on the chief); None
        for a Trainer that never saves (benchmarks).
    """
    self.config = config
    self.strategy = strategy
    self.precision = precision
    with strategy.scope():
      self.model, self.optimizer = build_model_and_optimizer(config, precision,
                                                             filter_gradient_mode)
      self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name='global_step',
                              aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
      self.gradient_norm_average = tf.Variable(
          0.0, dtype=tf.float32, trainable=False, name='gradient_norm_average',
          aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    self.checkpoint = tf.train.Checkpoint(model=self.model, optimizer=self.optimizer,
                                          step=self.step,
                                          gradient_norm_average=self.gradient_norm_average)
    self.manager = None
    if checkpoint_dir is not None:
      self.manager = tf.train.CheckpointManager(self.checkpoint, checkpoint_dir,
                                                config.run.keep_checkpoints,
                                                checkpoint_name=run_dir.CHECKPOINT_PREFIX)
    self._iterator = None
    self._train_loop = self._make_train_loop()

  def restore_or_initialize(self, model_dir):
    """Restores the newest checkpoint in model_dir (the chief's) if any.

    Every worker reads the chief's checkpoint, so all start from one state.

    Returns:
      The path restored, or None for a fresh start.
    """
    latest = tf.train.latest_checkpoint(model_dir) if model_dir else None
    if not latest:
      return None
    status = self.checkpoint.restore(latest)
    try:
      status.assert_existing_objects_matched()
    except AssertionError:
      # Perhaps written before gradient clipping, without the running average,
      # which then restarts at the first step; everything else must match.
      status.expect_partial()
      tf.train.Checkpoint(model=self.model, optimizer=self.optimizer, step=self.step).restore(
          latest).assert_existing_objects_matched()
    return latest

  @property
  def current_step(self):
    """The global step as a python int."""
    return int(self.step.numpy())

  def attach_dataset(self, dataset):
    """Sets what train() reads: a tf.data.Dataset or a distributed dataset."""
    if isinstance(dataset, tf.data.Dataset):
      dataset = self.strategy.experimental_distribute_dataset(dataset)
    self._iterator = iter(dataset)

  def train(self, num_steps):
    """Runs num_steps optimizer steps in one tf.function call.

    Returns:
      controller.TrainStats of those steps: mean loss (NaN/inf are returned,
      not raised: the caller decides), gradient norms, clipped steps.

    Raises:
      tf.errors.OpError from the input pipeline (e.g. DataLossError).
    """
    stats = self._train_loop(self._iterator, tf.constant(num_steps, tf.int32))
    return controller.TrainStats(**{name: value.numpy().item() for name, value in stats.items()})

  def save(self, step):
    """Writes a checkpoint numbered step; returns its path."""
    return self.manager.save(checkpoint_number=step)

  def _make_loss_and_gradients(self):
    """fn(batch, step_fraction) -> (the replica's loss, its reconstruction
    loss, its scaled gradients): the method's per-pixel loss and its own term
    (Neighbor2Neighbor's regulariser), as a mean over the global batch's
    examples; the reconstruction loss is the per-pixel loss alone (NaN for a
    method without a term of its own, whose loss is just that)."""
    config, model, optimizer = self.config, self.model, self.optimizer
    loss_fn = losses.get_loss(config.method.loss)
    # The method's own term beside the per-pixel loss (Neighbor2Neighbor's), or None.
    regulariser = pipelines.get(config.method.name).regulariser(config)
    # Training examples per crop of the global batch (a pixel-shuffle stride s
    # makes s * s sub-images of each): the loss is their mean.
    examples = config.optimisation.batch_size * methods_registry.get(
        config.method.name).examples_per_crop(config)

    def loss_and_gradients(batch, step_fraction):
      with tf.GradientTape() as tape:
        prediction = model(batch['input'], training=True)
        per_example = loss_fn(prediction, batch['target'], batch.get('target_mask'),
                              step_fraction)
        # What the regulariser's weight, ramped up over the run, does not move: the term
        # that shows the run improving (napari's loss plot).
        reconstruction = tf.constant(float('nan'))
        if regulariser is not None:
          reconstruction = tf.reduce_sum(per_example) / examples

          def predict_without_gradient(images):
            with tape.stop_recording():
              return model(images, training=True)

          per_example += regulariser(prediction, batch, predict_without_gradient, step_fraction)
        # Sum over the replica's examples / the global batch's: Keras sums
        # gradients across replicas.
        loss = tf.reduce_sum(per_example) / examples
        scaled_loss = optimizer.scale_loss(loss)
      return loss, reconstruction, tape.gradient(scaled_loss, model.trainable_variables)

    if config.run.jit_compile:
      return tf.function(loss_and_gradients, jit_compile=True, autograph=False)
    return loss_and_gradients

  def _make_train_step(self):
    """fn(batch) -> (loss, reconstruction loss, gradient norm, clip factor) of one replica's step:
    gradients agreed on overflow across replicas (mixed_float16), clipped
    against the running average of norms, applied."""
    config, strategy, model, optimizer = self.config, self.strategy, self.model, self.optimizer
    loss_and_gradients = self._make_loss_and_gradients()
    agree_on_overflow = (self.precision == 'mixed_float16'
                         and strategy.num_replicas_in_sync > 1)
    # Under mixed_float16 the gradients come scaled by the loss scale.
    loss_scale = (optimizer.dynamic_scale
                  if isinstance(optimizer, keras.optimizers.LossScaleOptimizer) else None)
    clip_multiple = float(config.optimisation.gradient_clip_multiple)
    norm_average = self.gradient_norm_average

    def train_step(batch):
      step_fraction = tf.cast(optimizer.iterations, tf.float32) / config.optimisation.train_steps
      loss, reconstruction, gradients = loss_and_gradients(batch, step_fraction)
      if agree_on_overflow:
        gradients = poison_if_any_replica_overflowed(gradients)
      norm = gradient_clipping.replica_gradient_norm(gradients, loss_scale)
      factor = gradient_clipping.clip_factor(norm, norm_average, clip_multiple)
      gradients = [gradient * tf.cast(factor, gradient.dtype) for gradient in gradients]
      optimizer.apply_gradients(zip(gradients, model.trainable_variables))
      return loss, reconstruction, norm, factor

    return train_step

  def _make_train_loop(self):
    """tf.function(iterator, num_steps) -> the window's logs: num_steps steps on
    every replica, the running norm average updated, loss and norms summed."""
    strategy, norm_average = self.strategy, self.gradient_norm_average
    clip_multiple = float(self.config.optimisation.gradient_clip_multiple)
    train_step = self._make_train_step()

    # autograph=False, the loop written as tf.while_loop: AutoGraph would convert
    # every function the step calls anew in each process (n2n/data/traced.py).
    @tf.function(autograph=False)
    def train_loop(iterator, num_steps):

      def one_step(index, loss_sum, reconstruction_sum, norm_sum, clipped, skipped, max_norm,
                   max_ratio):
        per_replica_loss, per_replica_reconstruction, per_replica_norm, per_replica_factor = (
            strategy.run(train_step, args=(next(iterator),)))
        loss_sum += strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_loss, axis=None)
        reconstruction_sum += strategy.reduce(tf.distribute.ReduceOp.SUM,
                                              per_replica_reconstruction, axis=None)
        # Every replica computed the same norm and factor.
        norm = strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica_norm, axis=None)
        factor = strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica_factor, axis=None)
        average = norm_average.read_value()
        clipped += tf.cast(factor < 1.0, tf.float32)
        # A non-finite norm is a step the loss-scale optimizer skips (or a
        # diverged loss, which the finite-loss check stops): counted, and kept
        # out of the mean, which would otherwise read inf for the whole window.
        finite = tf.math.is_finite(norm)
        skipped += tf.cast(tf.logical_not(finite), tf.float32)
        ratio = tf.where(average > 0.0, norm / average, float('nan'))
        norm_sum += tf.where(finite, norm, 0.0)
        max_norm = _max_ignoring_nan(max_norm, norm)
        max_ratio = _max_ignoring_nan(max_ratio, ratio)
        with tf.control_dependencies([norm_average.assign(
            gradient_clipping.updated_average(average, norm, clip_multiple))]):
          return (index + 1, tf.identity(loss_sum), reconstruction_sum, norm_sum, clipped,
                  skipped, max_norm, max_ratio)

      zero, nan = tf.constant(0.0), tf.constant(float('nan'))
      _, loss_sum, reconstruction_sum, norm_sum, clipped, skipped, max_norm, max_ratio = (
          tf.while_loop(lambda index, *_: index < num_steps, one_step,
                        (tf.constant(0, tf.int32), zero, zero, zero, zero, zero, nan, nan)))
      self.step.assign_add(tf.cast(num_steps, tf.int64))
      steps = tf.cast(num_steps, tf.float32)
      finite_steps = steps - skipped
      return {'loss': loss_sum / steps, 'reconstruction_loss': reconstruction_sum / steps,
              'mean_gradient_norm': tf.where(finite_steps > 0, norm_sum / finite_steps,
                                             float('nan')),
              'max_gradient_norm': max_norm, 'max_norm_ratio': max_ratio,
              'clipped_steps': tf.cast(clipped, tf.int32),
              'skipped_steps': tf.cast(skipped, tf.int32)}

    return train_loop
