"""The Trainer on its own: build, train, save, restore; mixed_float16 over replicas."""

import os

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.training import trainer as trainer_lib

CHECKPOINT_KEYS = 'tests/training/checkpoint_keys.txt'


def _config(**overrides):
  values = dict(train_data='unused', model_dir='', crop_size=32, batch_size=2, train_steps=10,
                learning_rate=1e-3, seed=1)
  values.update(overrides)
  return config_lib.train_config(**values)


def _batches(per_replica_inputs):
  """A dataset cycling through the given [1, 32, 32, 3] inputs, one per replica in turn."""
  inputs = np.concatenate(per_replica_inputs).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices(
      {'input': inputs, 'target': np.clip(inputs, 0, 1)}).batch(1).repeat()


@pytest.mark.slow
def test_mixed_float16_overflow_on_one_replica_skips_the_step_on_every_replica():
  # Reductions through one device, not collectives: collective instance keys
  # restart with every strategy, and this process has made other strategies
  # whose collectives of other shapes the runtime remembers.
  strategy = tf.distribute.MirroredStrategy(
      [device.name for device in tf.config.list_logical_devices('CPU')],
      cross_device_ops=tf.distribute.ReductionToOneDevice())
  assert strategy.num_replicas_in_sync == 2
  # 8 channels wide (the paper's 48): 1e6 overflows float16 whatever the width.
  trainer = trainer_lib.Trainer(_config(precision='mixed_float16', network_width=8), strategy,
                                'mixed_float16')
  before = [variable.numpy() for variable in trainer.model.trainable_variables]
  scale = float(trainer.optimizer.dynamic_scale.numpy())
  normal = np.random.default_rng(0).uniform(size=(1, 32, 32, 3))
  # 1e6 does not fit in float16: replica 1's forward and backward pass overflow.
  trainer.attach_dataset(strategy.distribute_datasets_from_function(
      lambda context: _batches([normal, normal * 1e6])))
  trainer.train(1)
  after = [variable.numpy() for variable in trainer.model.trainable_variables]
  assert all(np.isfinite(weights).all() for weights in after)
  assert all(np.array_equal(a, b) for a, b in zip(before, after))  # the step was skipped
  assert float(trainer.optimizer.dynamic_scale.numpy()) == scale / 2
  # Without overflow the same trainer steps normally.
  trainer.attach_dataset(strategy.distribute_datasets_from_function(
      lambda context: _batches([normal, normal])))
  trainer.train(1)
  assert not np.array_equal(trainer.model.trainable_variables[0].numpy(), before[0])
  assert int(trainer.optimizer.iterations.numpy()) == 1


def test_checkpoint_keys_are_the_ones_earlier_versions_wrote(tmp_path):
  # Variable paths are the checkpoint format: the list was written by the code
  # before n2n/ was split into sub-packages; moving modules must not change it.
  # Gradient clipping added one entry, the running average of gradient norms.
  trainer = trainer_lib.Trainer(_config(), tf.distribute.get_strategy(), 'float32',
                                checkpoint_dir=str(tmp_path))
  trainer.step.assign(3)
  path = trainer.save(3)
  keys = sorted(f'{name} {shape}' for name, shape in tf.train.list_variables(path)
                if not name.startswith('_CHECKPOINTABLE'))
  with open(CHECKPOINT_KEYS) as expected:
    earlier = expected.read().splitlines()
  assert keys == sorted(earlier + [f'{trainer_lib.GRADIENT_NORM_AVERAGE_KEY} []'])
  fresh = trainer_lib.Trainer(_config(seed=2), tf.distribute.get_strategy(), 'float32')
  assert fresh.restore_or_initialize(str(tmp_path)) == path
  assert fresh.current_step == 3
  for ours, theirs in zip(fresh.model.weights, trainer.model.weights):
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_checkpoint_written_before_gradient_clipping_resumes_with_a_fresh_average(tmp_path):
  earlier = trainer_lib.Trainer(_config(), tf.distribute.get_strategy(), 'float32')
  earlier.step.assign(5)
  # The three objects checkpoints held before the running average existed.
  path = tf.train.Checkpoint(model=earlier.model, optimizer=earlier.optimizer,
                             step=earlier.step).save(str(tmp_path / 'ckpt'))
  with open(tmp_path / 'checkpoint', 'w') as index:
    index.write(f'model_checkpoint_path: "{os.path.basename(path)}"\n')
  resumed = trainer_lib.Trainer(_config(seed=2), tf.distribute.get_strategy(), 'float32')
  resumed.gradient_norm_average.assign(7.0)  # the checkpoint has nothing to restore it from
  assert resumed.restore_or_initialize(str(tmp_path)) == path
  assert resumed.current_step == 5 and float(resumed.gradient_norm_average.numpy()) == 7.0
  np.testing.assert_array_equal(resumed.model.weights[0].numpy(), earlier.model.weights[0].numpy())
