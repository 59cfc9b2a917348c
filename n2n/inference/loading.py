"""The network a denoiser runs, from a run's checkpoint or an export, and the
image function built on it: what denoise.py and n2n.Denoiser share."""

import dataclasses

from n2n import config as config_lib
from n2n.inference import whole_images
from n2n.inference import devices
from n2n.inference import exported_model
from n2n.inference import restore


@dataclasses.dataclass(frozen=True)
class Network:
  """A loaded network and what the per-page code needs to know about it.

  Attributes:
    run_batch: fn([N, H, W, C] float32 network values) -> same shape.
    channels: C, 1 or 3.
    run_config: the run's TrainConfig (white level, data dtype, normalisation).
    source: what was loaded, for messages: a checkpoint prefix or 'the export PATH'.
    replicas: devices one call splits its batch of tiles across.
  """
  run_batch: object
  channels: int
  run_config: config_lib.TrainConfig
  source: str
  replicas: int = 1


def from_export(path):
  """Network of a folder written by export.py; it runs as it was saved (float32)."""
  run_batch, channels, run_config = exported_model.load_export(path)
  return Network(run_batch, channels, run_config, f'the export {path}')


def from_checkpoint(model, precision, strategy=None, flag_name='model'):
  """Network of a run's model_dir (newest checkpoint) or checkpoint prefix.

  Args:
    precision: resolved precision ('float32', 'mixed_bfloat16', 'mixed_float16').
    strategy: devices.inference_strategy() to split tiles across, or None.
    flag_name: the flag (or argument) named in error messages.

  Raises:
    ValueError: see restore.restore_model.
  """
  restored = restore.restore_model(model, precision, flag_name=flag_name, strategy=strategy)
  if strategy:
    run_batch = devices.distributed_function(restored.model, strategy)
    replicas = strategy.num_replicas_in_sync
  else:
    run_batch, replicas = whole_images.model_function(restored.model), 1
  return Network(run_batch, restored.run_config.model.channels, restored.run_config,
                 restored.prefix, replicas)


def volume_function(network, tile, overlap, batch_tiles):
  """fn([D, H, W, network.channels] float32 network values) -> same: a 3D
  run's network over overlapping (depth, height, width) tiles blended with
  (z, y, x) overlaps, batch_tiles per device per call."""
  return whole_images.volume_denoiser(network.run_batch, network.run_config, tile, overlap,
                                      batch_tiles * network.replicas)


def image_function(network, tile_size, tile_overlap, batch_tiles, tta=False):
  """fn([H, W, network.channels] float32 network values) -> same: the network
  over overlapping tiles, batch_tiles per device per call, with tta the mean
  over the 8 flips and rotations."""
  denoise = whole_images.tiled_denoiser(network.run_batch, tile_size, tile_overlap,
                                    batch_tiles * network.replicas)
  return whole_images.with_test_time_augmentation(denoise) if tta else denoise
