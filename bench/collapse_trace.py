"""A training run traced step by step, to see what makes a run collapse.

  python -m bench.collapse_trace --flagfile=configs/demo.cfg --noise=poisson \\
      --noise_range=0,50 --eval_noise_levels=30 --target=clean \\
      --gradient_clip_multiple=0 --trace_json=runs/trace_off.json

Takes every train.py flag and trains with the same Trainer and input pipeline,
one step per call, recording for every step: the loss, the gradient norm and
its ratio to the running average (gradient_clipping), whether it was clipped,
the largest input and target pixel of the batch, the root-mean-square of
Adam's second moment over all weights (its "velocity") and of the weight update;
and the validation PSNR every --trace_eval_every steps. A second instance of the
same seeded pipeline supplies the batch's pixels; that it is the batch the
Trainer took is checked on the first steps by recomputing their loss.

It prints the steps whose gradient was furthest above the running average,
with what followed them, and writes everything to --trace_json.
"""

import json
import time

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
from n2n import config_flags  # pylint: disable=g-import-not-at-top
from n2n import hardware  # pylint: disable=g-import-not-at-top
from n2n.data import dataset_writer  # pylint: disable=g-import-not-at-top
from n2n.data import input_pipeline  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.training import losses  # pylint: disable=g-import-not-at-top
from n2n.training import preflight  # pylint: disable=g-import-not-at-top
from n2n.training import trainer as trainer_lib  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('trace_json', '', 'Write the per-step trace here (JSON).')
flags.DEFINE_integer('trace_eval_every', 100, 'Steps between validation PSNRs.')
flags.DEFINE_integer('trace_check_steps', 5, 'Steps on which the probe batch is checked '
                     'against the Trainer\'s loss.')
flags.DEFINE_integer('trace_report', 5, 'Largest gradient-norm ratios to report.')
FLAGS = flags.FLAGS


def flat_weights(model):
  """Every trainable weight in one float64 vector."""
  return np.concatenate([variable.numpy().ravel() for variable in model.trainable_variables]
                        ).astype(np.float64)


def velocity_rms(optimizer):
  """Root-mean-square of Adam's second-moment estimates over all weights."""
  velocities = [variable.numpy().ravel() for variable in optimizer.variables
                if variable.path.endswith('_velocity')]
  return float(np.sqrt(np.mean(np.concatenate(velocities).astype(np.float64))))


def report(trace, count):
  """Prints the steps with the largest gradient-norm ratio and what followed."""
  ratios = np.nan_to_num(np.array(trace['norm_ratio'], np.float64), nan=0.0)
  psnr_steps = np.array(trace['psnr_steps'])
  psnrs = np.array(trace['psnr'])
  for index in np.argsort(-ratios)[:count]:
    step = index + 1
    before = psnrs[psnr_steps < step]
    after = psnrs[psnr_steps >= step]
    velocity = trace['velocity_rms']
    print(f'step {step}: gradient {ratios[index]:.3g}x the running average '
          f'(norm {trace["gradient_norm"][index]:.3g}, loss {trace["loss"][index]:.3g}, '
          f'{"clipped" if trace["clipped"][index] else "not clipped"}); batch input max '
          f'{trace["input_max"][index]:.4g}, target max {trace["target_max"][index]:.4g}; '
          f'Adam velocity RMS {velocity[max(index - 1, 0)]:.3g} -> {velocity[index]:.3g}; '
          f'PSNR before {before[-1] if len(before) else float("nan"):.2f} dB, next '
          f'{after[0] if len(after) else float("nan"):.2f} dB', flush=True)


def main(argv):
  del argv
  config = config_flags.config_from_flags(config_lib.TrainConfig).resolved()
  dataset_writer.build_if_missing(config.data.train_data, config.data.train_images_dir,
                                  min_size=config.data.crop_size, seed=config.run.seed)
  strategy = tf.distribute.get_strategy()
  inputs = preflight.check_training_inputs(config, strategy)
  config = inputs.config
  trainer = trainer_lib.Trainer(config, strategy, inputs.precision,
                                hardware.filter_gradient_mode(inputs.precision, strategy))
  build = lambda: input_pipeline.build_train_dataset(config, inputs.per_replica_batch,
                                                     inputs.cache, 0)
  trainer.attach_dataset(build())
  probe = iter(build())
  loss_fn = losses.get_loss(config.method.loss)
  level = config.corruption.eval_noise_levels[0]
  corrupt = scoring.make_corruption(config.corruption.noise)
  # The denoiser is made at each evaluation: it runs the weights as they are then (frozen).
  evaluate = lambda: scoring.evaluate(whole_images.make_denoiser(trainer.model),
                                      inputs.eval_images, config.corruption.noise, [level],
                                      config.run.seed, corrupt=corrupt)[0]
  trace = {name: [] for name in ('loss', 'gradient_norm', 'norm_ratio', 'clipped', 'input_max',
                                 'target_max', 'velocity_rms', 'update_rms', 'psnr_steps',
                                 'psnr')}
  trace['config'] = json.loads(config.to_json())
  trace['input_psnr'] = float(evaluate().mean_input_psnr)
  weights = flat_weights(trainer.model)
  started = time.perf_counter()
  for step in range(1, config.optimisation.train_steps + 1):
    batch = next(probe)
    if step <= FLAGS.trace_check_steps:
      expected = float(tf.reduce_mean(loss_fn(trainer.model(batch['input']), batch['target'],
                                              batch.get('target_mask'), 0.0)))
    stats = trainer.train(1)
    if step <= FLAGS.trace_check_steps and not np.isclose(expected, stats.loss, rtol=0.05):
      raise SystemExit(f'the probe pipeline is not the Trainer\'s: step {step} loss '
                       f'{stats.loss:.6g}, probe batch {expected:.6g}')
    new_weights = flat_weights(trainer.model)
    trace['loss'].append(stats.loss)
    trace['gradient_norm'].append(stats.max_gradient_norm)
    trace['norm_ratio'].append(stats.max_norm_ratio)
    trace['clipped'].append(stats.clipped_steps)
    trace['input_max'].append(float(tf.reduce_max(batch['input'])))
    trace['target_max'].append(float(tf.reduce_max(batch['target'])))
    trace['velocity_rms'].append(velocity_rms(trainer.optimizer))
    trace['update_rms'].append(float(np.sqrt(np.mean(np.square(new_weights - weights)))))
    weights = new_weights
    if step % FLAGS.trace_eval_every == 0 or step == config.optimisation.train_steps:
      psnr = float(evaluate().mean_psnr)
      trace['psnr_steps'].append(step)
      trace['psnr'].append(psnr)
      recent = slice(step - FLAGS.trace_eval_every, step)
      print(f'step {step}: PSNR {psnr:.2f} dB, loss {np.mean(trace["loss"][recent]):.4g}, '
            f'largest gradient ratio {np.nanmax(trace["norm_ratio"][recent]):.3g}, clipped '
            f'{sum(trace["clipped"][recent])}, {time.perf_counter() - started:.0f} s', flush=True)
  print(f'input PSNR {trace["input_psnr"]:.2f} dB; best {max(trace["psnr"]):.2f} dB, final '
        f'{trace["psnr"][-1]:.2f} dB; {sum(trace["clipped"])} clipped steps')
  report(trace, FLAGS.trace_report)
  if FLAGS.trace_json:
    with open(FLAGS.trace_json, 'w') as trace_file:
      json.dump(trace, trace_file)


if __name__ == '__main__':
  config_flags.define_flags(config_lib.TrainConfig, flags.FLAGS)
  app.run(main)
