"""Which devices denoise.py runs the network on: every GPU of the host, or
every logical CPU device, through tf.distribute.MirroredStrategy.

A batch of tiles is split across the devices (each runs its part of the
batch with its own copy of the weights); one device needs no strategy.
"""

import numpy as np
import tensorflow as tf


def split_cpu(count):
  """Splits the CPU into count logical devices (before TensorFlow starts using
  it); count <= 1, or a host with GPUs (which the network runs on), leaves it
  whole.

  Raises:
    ValueError: TensorFlow's devices were already initialised.
  """
  if count <= 1 or tf.config.list_physical_devices('GPU'):
    return
  cpu = tf.config.list_physical_devices('CPU')[0]
  try:
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)])
  except RuntimeError:
    raise ValueError(f'--logical_cpu_devices={count}: TensorFlow was already using the CPU; '
                     'it can only be split at start') from None


def inference_strategy():
  """MirroredStrategy over every GPU, or, without GPUs, every logical CPU
  device, when there are several; None for one device."""
  devices = tf.config.list_logical_devices('GPU') or tf.config.list_logical_devices('CPU')
  if len(devices) < 2:
    return None
  return tf.distribute.MirroredStrategy([device.name for device in devices])


def describe(strategy):
  """'1 device' or '2 devices (/job:localhost/.../CPU:0, ...)': for denoise.py's output."""
  if strategy is None:
    return '1 device'
  names = ', '.join(strategy.extended.worker_devices)
  return f'{strategy.num_replicas_in_sync} devices ({names})'


def distributed_function(run_model, strategy):
  """fn([N, H, W, C] float32 array) -> [N, H, W, C] array: the batch split into
  one contiguous part per device, each run by run_model on its device, the
  parts joined in order.

  Args:
    run_model: fn([n, H, W, C] float32 tensor) -> same, reading no variables
      (frozen_weights.frozen_model): each device runs it with its own copy of
      the constants.
    strategy: tf.distribute.MirroredStrategy.
  """

  @tf.function(reduce_retracing=True, autograph=False)
  def run_replicas(inputs):
    return strategy.run(run_model, args=(inputs,))

  def run(tiles):
    tiles = np.asarray(tiles, np.float32)
    count, replicas = len(tiles), strategy.num_replicas_in_sync
    # An empty part fails in the convolutions: fewer tiles than devices are
    # padded with copies of the last, which run beside it on idle devices.
    padded = np.concatenate([tiles, np.repeat(tiles[-1:], max(0, replicas - count), axis=0)])
    parts = np.array_split(padded, replicas)
    inputs = strategy.experimental_distribute_values_from_function(
        lambda context: tf.constant(parts[context.replica_id_in_sync_group]))
    outputs = run_replicas(inputs)
    return np.concatenate([np.asarray(part) for part in
                           strategy.experimental_local_results(outputs)], axis=0)[:count]

  return run
