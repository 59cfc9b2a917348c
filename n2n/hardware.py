"""What this machine's accelerators run fastest and right: precision and gradient kernels."""

import functools

from absl import logging
import tensorflow as tf


@functools.lru_cache(maxsize=None)
def cpu_supports_bfloat16():
  """True when the CPU has native bfloat16 arithmetic (AVX512-BF16 or AMX)."""
  try:
    with open('/proc/cpuinfo') as cpuinfo:
      flags_line = next((line for line in cpuinfo if line.startswith('flags')), '')
  except OSError:
    return False
  return bool(set(flags_line.split()) & {'avx512_bf16', 'amx_bf16'})


def _is_tpu(strategy):
  return strategy is not None and isinstance(strategy, tf.distribute.TPUStrategy)


def resolve_precision(requested, strategy=None):
  """Resolves --precision=auto to what this hardware runs fastest and safely.

  TPUs, GPUs of compute capability 8.0+ and CPUs with AVX512-BF16 or AMX get
  mixed_bfloat16; older GPUs of capability 7.0+ get mixed_float16 (with loss
  scaling); everything else float32. Any other value is returned unchanged.
  """
  if requested != 'auto':
    return requested
  if _is_tpu(strategy):
    return 'mixed_bfloat16'
  gpus = tf.config.list_physical_devices('GPU')
  if gpus:
    capability = tf.config.experimental.get_device_details(gpus[0]).get('compute_capability')
    if capability and capability >= (8, 0):
      return 'mixed_bfloat16'
    if capability and capability >= (7, 0):
      return 'mixed_float16'
    return 'float32'
  if cpu_supports_bfloat16():
    return 'mixed_bfloat16'
  logging.info('No bfloat16 support found on this CPU; using float32.')
  return 'float32'


def filter_gradient_mode(precision, strategy=None):
  """How the U-Net computes its kernel gradients (n2n/model/conv.py), for this hardware.

  Only bfloat16 on CPU departs from the stock kernel: CPUs with native
  bfloat16 gain from tiling large layers; CPUs without it sum the stock kernel
  in bfloat16 (8% wrong, 10x slower), so they compute it in float32. GPUs and
  TPUs have their own kernels and would only pay for extra copies.

  Returns:
    'direct', 'tiled' or 'float32'.
  """
  if precision != 'mixed_bfloat16' or _is_tpu(strategy) or tf.config.list_logical_devices('GPU'):
    return 'direct'
  return 'tiled' if cpu_supports_bfloat16() else 'float32'
