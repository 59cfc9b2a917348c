"""Strategy selection and worker roles."""

import os

import tensorflow as tf


def create_strategy(name, tpu=''):
  """Creates the tf.distribute strategy named by --strategy.

  Args:
    name: 'auto' (tpu if tpu is given, mirrored with more than one GPU, else
      default), 'default', 'mirrored', 'multi_worker' (TF_CONFIG) or 'tpu'.
    tpu: TPU name, grpc:// address or 'local', for 'tpu' and 'auto'.

  Returns:
    A tf.distribute.Strategy.
  """
  if name == 'auto':
    if tpu:
      name = 'tpu'
    elif len(tf.config.list_logical_devices('GPU')) > 1:
      name = 'mirrored'
    else:
      name = 'default'
  if name == 'multi_worker':
    # Cluster layout and this process's role come from the TF_CONFIG variable.
    return tf.distribute.MultiWorkerMirroredStrategy()
  if name == 'default':
    return tf.distribute.get_strategy()
  if name == 'mirrored':
    # All local GPUs; on a machine without GPUs, all logical CPU devices (one
    # unless the CPU was split with tf.config.set_logical_device_configuration).
    if tf.config.list_logical_devices('GPU'):
      return tf.distribute.MirroredStrategy()
    return tf.distribute.MirroredStrategy(
        [device.name for device in tf.config.list_logical_devices('CPU')])
  if name == 'tpu':
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
  raise ValueError(f'--strategy={name!r} is not one of auto, default, mirrored, multi_worker, tpu')


def check_global_batch(global_batch_size, strategy):
  """Per-replica batch size; ValueError when the global batch does not divide."""
  replicas = strategy.num_replicas_in_sync
  if global_batch_size % replicas:
    raise ValueError(f'--batch_size={global_batch_size} must be divisible by the number of '
                     f'replicas ({replicas})')
  return global_batch_size // replicas


def is_chief(strategy):
  """True on the worker that writes checkpoints and summaries (always, off-cluster)."""
  resolver = getattr(strategy, 'cluster_resolver', None)
  if resolver is None or not resolver.cluster_spec().as_dict():
    return True
  task_type, task_id = resolver.task_type, resolver.task_id
  if task_type == 'chief':
    return True
  has_chief = 'chief' in resolver.cluster_spec().as_dict()
  return task_type == 'worker' and task_id == 0 and not has_chief


def is_multi_worker(strategy):
  """True for strategies over several workers, whose saves need every worker."""
  return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)


def worker_write_dir(model_dir, strategy):
  """Where this worker writes: model_dir on the chief, a private temporary
  folder inside it on other workers (TensorFlow's multi-worker convention:
  every worker must save, only the chief's copy is kept)."""
  if is_chief(strategy):
    return model_dir
  resolver = strategy.cluster_resolver
  return os.path.join(model_dir, '.workers', f'{resolver.task_type}_{resolver.task_id}')
