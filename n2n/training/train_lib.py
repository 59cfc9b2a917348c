"""train.py's library: check the inputs, build the Trainer, and run the controller
with the actions a run needs (log, checkpoint, evaluate, profile, stop)."""

import dataclasses
import os

from absl import logging
import tensorflow as tf

from n2n import config as config_lib
from n2n import hardware
from n2n import run_dir
from n2n.diagnosis import report as diagnosis_report
from n2n.evaluation import evaluator
from n2n.evaluation import summaries
from n2n.methods import registry as methods_registry
from n2n.pipelines import registry as pipelines
from n2n.training import actions
from n2n.training import best
from n2n.training import controller
from n2n.training import distribute
from n2n.training import hparams
from n2n.training import init_from
from n2n.training import losses
from n2n.training import preemption
from n2n.training import preflight
from n2n.training import trainer as trainer_lib

NonFiniteLossError = actions.NonFiniteLossError


@dataclasses.dataclass
class TrainedRun:
  """What train_and_evaluate leaves behind besides the model_dir.

  Attributes:
    model: the trained keras.Model (on every worker).
    step: the global step reached.
    results: the last evaluation (list of scoring.LevelScores); None without
      evaluation (no --val_data, --eval_every=0), on non-chief workers, and
      for a run stopped before its first evaluation.
    stopped: True when a stop asked for ended the run before train_steps
      (its step is saved; training again resumes there).
  """
  model: object
  step: int
  results: list
  stopped: bool = False


def _log_noise(config, profile, records):
  """The diagnosis of the training captures, and a warning where the method
  assumes what the noise is not (pixel independence)."""
  logging.info('Training data noise, from %d record(s): %s. diagnose.py on the source '
               'folder tells more.', records, diagnosis_report.summary_line(profile))
  kind = diagnosis_report.kind_of(profile)
  advice = methods_registry.get(config.method.name).noise_advice(config, kind)
  if advice:
    method = methods_registry.get(config.method.name)
    logging.warning('--method=%s as set assumes %s, but this data\'s noise is %s (correlation '
                    'at lag 1 %.2f): the network learns to keep much of it. %s; two captures '
                    'of each scene, trained with --method=pairs, need only independent '
                    'captures.', config.method.name, method.noise_assumption, kind,
                    profile.correlation_lag1, advice)


# A chosen value longer than this (a noise model's JSON) is named, not printed.
LONGEST_SHOWN_VALUE = 60


def _shown(flag, value):
  """--flag=value as the start-up log shows a chosen setting."""
  text = str(value)
  return (f'--{flag}=({len(text)} characters, in config.json)' if len(text) > LONGEST_SHOWN_VALUE
          else f'--{flag}={text}')


def _noise_kind(inputs):
  """'correlated', 'rows'... of real captures as diagnosed, else 'pixel-independent
  synthetic' (real captures the diagnosis cannot read have nothing chosen)."""
  if inputs.noise_profile:
    return diagnosis_report.kind_of(inputs.noise_profile[0])
  return 'pixel-independent synthetic'


def train_and_evaluate(config, strategy, stop=None, progress=None):
  """Trains (or resumes) the run in config.run.model_dir and evaluates it.

  Args:
    config: the run's TrainConfig; strategy: a tf.distribute.Strategy.
    stop: None, or a threading.Event (anything with is_set()) checked after
      every loop of steps: once set, the step is saved and training returns
      (TrainedRun.stopped) (actions.StopWhenAsked).
    progress: None, or fn(step, train_steps, logs) called at the start and
      after every loop (actions.ReportProgress), in the training thread.

  Raises:
    ValueError: bad configuration or input, with a one-line message.
    NonFiniteLossError: the loss diverged (no checkpoint of it is written).
    preemption.TrainingInterrupted: stopped by SIGTERM/SIGINT after saving.
  """
  inputs = preflight.check_training_inputs(config, strategy)
  config = inputs.config
  chief = distribute.is_chief(strategy)
  write_dir = distribute.worker_write_dir(config.run.model_dir, strategy)
  gradient_mode = hardware.filter_gradient_mode(inputs.precision, strategy)
  logging.info('Strategy %s with %d replica(s), precision %s, global batch %d, filter '
               'gradients %s.', type(strategy).__name__, strategy.num_replicas_in_sync,
               inputs.precision, config.optimisation.batch_size, gradient_mode)
  trainer = trainer_lib.Trainer(config, strategy, inputs.precision, gradient_mode, write_dir)
  restored = trainer.restore_or_initialize(config.run.model_dir)
  start_step = trainer.current_step
  if restored:
    logging.info('Resumed from %s at step %d.', restored, start_step)
  elif inputs.init_from_prefix:
    init_from.load_weights(trainer.model, inputs.init_from_prefix)
    logging.info('Started from the weights of %s (--init_from=%s).', inputs.init_from_prefix,
                 config.run.init_from)
  if start_step >= config.optimisation.train_steps:
    logging.info('Step %d already reaches --train_steps=%d; nothing to train.', start_step,
                 config.optimisation.train_steps)
  logging.info('%s (all of them: %s).', config_lib.resolved_summary(config),
               os.path.join(config.run.model_dir, run_dir.CONFIG_NAME))
  if chief and inputs.chosen_settings:
    logging.info('Chosen for the %s noise of the training data, where no flag gave them: %s.',
                 _noise_kind(inputs), ' '.join(_shown(flag, value) for flag, value
                                               in inputs.chosen_settings.items()))
  if chief and inputs.noise_profile:
    _log_noise(config, *inputs.noise_profile)
  if chief:
    run_dir.write_config(config.run.model_dir, config)
    hparams.write_hparams(config.run.model_dir, config)
  trainer.attach_dataset(strategy.distribute_datasets_from_function(
      lambda context: build_dataset(config, inputs.per_replica_batch, inputs.cache, start_step,
                                    context)))

  cluster_handler = preemption.cluster_preemption_handler(strategy, trainer.manager)
  with preemption.StopRequest(enabled=cluster_handler is None) as stop_request:
    run_actions, evaluate = _make_actions(config, trainer, inputs, chief, write_dir,
                                          cluster_handler, stop_request, stop, progress)
    step = controller.Controller(
        lambda num_steps: _train_naming_corrupt_shards(trainer, num_steps, inputs.train_files),
        start_step, config.optimisation.train_steps, config.run.steps_per_loop, run_actions).run()
  return TrainedRun(trainer.model, step, evaluate.results if evaluate else None,
                    stopped=step < config.optimisation.train_steps)


def build_dataset(config, per_replica_batch, cache, start_step=0, input_context=None):
  """The training dataset of one input pipeline, for the data kind and --method."""
  return pipelines.get(config.method.name).build_dataset(config, per_replica_batch, cache,
                                                         start_step, input_context)


def _make_actions(config, trainer, inputs, chief, write_dir, cluster_handler, stop_request,
                  stop=None, progress=None):
  """The controller's actions in the order they must run; and the Evaluate one, or None."""
  latest = lambda: trainer.manager.latest_checkpoint
  writer = (tf.summary.create_file_writer(os.path.join(config.run.model_dir, 'train')) if chief
            else tf.summary.create_noop_writer())

  def save(step):
    path = trainer.save(step)
    if not chief:
      # Non-chief copies exist only because every worker must take part in saving.
      tf.io.gfile.rmtree(write_dir)
    return path

  def extra_scalars(step):
    if config.method.loss != 'annealed_l0':
      return {}
    return {
        'annealed_l0_gamma': float(losses.annealed_l0_gamma(step / config.optimisation.train_steps))
    }

  saver = actions.SaveCheckpoint(config.run.checkpoint_every, config.optimisation.train_steps, save)
  # The finite-loss check comes first: nothing, not even a preemption save, may
  # checkpoint a diverged model.
  run_actions = [actions.CheckFiniteLoss(latest)]
  if cluster_handler is not None:
    run_actions.append(actions.SyncPreemption(cluster_handler))
  run_actions += [
      actions.LogProgress(config.run.log_every, config.optimisation.train_steps,
                          config.optimisation.batch_size, writer,
                          lambda: trainer.optimizer.learning_rate, extra_scalars),
      saver,
      actions.StopOnSignal(stop_request, saver, latest),
  ]
  evaluate = None
  if chief and inputs.eval_images and config.evaluation.eval_every:
    eval_writer = tf.summary.create_file_writer(
        os.path.join(config.run.model_dir, summaries.EVAL_SUBDIR))
    evaluate_fn = evaluator.Evaluator(trainer.model,
                                      inputs.eval_images,
                                      config.corruption.noise,
                                      config.corruption.eval_noise_levels,
                                      config.run.seed,
                                      config.evaluation.eval_image_summaries,
                                      eval_writer,
                                      config.evaluation.colour_shift_warning,
                                      config,
                                      final_step=config.optimisation.train_steps)
    if config.evaluation.keep_best and not distribute.is_multi_worker(trainer.strategy):
      keeper = best.BestCheckpoint(config.run.model_dir, trainer.model, trainer.step, config,
                                   config.evaluation.psnr_drop_warning_db, eval_writer)
      evaluate_fn = lambda step, scorer=evaluate_fn: keeper(step, scorer(step))
    evaluate = actions.Evaluate(config.evaluation.eval_every, config.optimisation.train_steps,
                                evaluate_fn)
    run_actions.append(evaluate)
  if config.run.profile_steps:
    run_actions.append(actions.Profile(*config.run.profile_steps, write_dir))
  # Last: the step's work (a save, an evaluation) is done and reported before a stop.
  if progress is not None:
    run_actions.append(actions.ReportProgress(progress, config.optimisation.train_steps,
                                              evaluate))
  if stop is not None:
    run_actions.append(actions.StopWhenAsked(stop, saver))
  return run_actions, evaluate


def _train_naming_corrupt_shards(trainer, num_steps, train_files):
  """trainer.train, with a corrupt shard turned into a message naming it."""
  try:
    return trainer.train(num_steps)
  except tf.errors.DataLossError:
    corrupt = preflight.find_corrupt_shard(train_files)
    where = f'{corrupt[0]} is corrupt ({corrupt[1]})' if corrupt else 'a shard is corrupt'
    raise ValueError(f'--train_data: {where}; rerun with --skip_corrupt_records to skip bad '
                     f'records (last checkpoint: {trainer.manager.latest_checkpoint or "none"})'
                     ) from None
