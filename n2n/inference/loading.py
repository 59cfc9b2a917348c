"""The network a denoiser runs, from a run's checkpoint or an export, and the
image function built on it: what denoise.py and n2n.Denoiser share."""

import dataclasses

from n2n import config as config_lib
from n2n.inference import whole_images
from n2n.inference import devices
from n2n.inference import exported_model
from n2n.inference import frozen_weights
from n2n.inference import noisy_volumes
from n2n.inference import restore
from n2n.inference import serving
from n2n.inference import tiling
from n2n.model import unet


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


def from_package(path):
  """Network of a BioImage Model Zoo package that export.py --bioimageio wrote
  (its SavedModel, as from_export; float32)."""
  run_batch, channels, run_config = exported_model.load_package(path)
  return Network(run_batch, channels, run_config, f'the package {path}')


def from_checkpoint(model, precision, strategy=None, flag_name='model'):
  """Network of a run's model_dir (newest checkpoint) or checkpoint prefix.

  Args:
    precision: resolved precision ('float32', 'mixed_bfloat16', 'mixed_float16').
    strategy: devices.inference_strategy() to split tiles across, or None.
    flag_name: the flag (or argument) named in error messages.

  Raises:
    ValueError: see restore.restore_model.
  """
  restored = restore.restore_model(model, precision, flag_name=flag_name)
  if strategy:
    run_model = frozen_weights.frozen_model(restored.model)
    run_batch = devices.distributed_function(run_model, strategy)
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


def whole_image_tta(run_config, tta):
  """Whether asking for test-time augmentation (tta) adds passes over the whole
  image: not where the run's inference scheme already averages the 8
  orientations (the mean of those means is the same mean, at 8 times the time)."""
  return bool(tta) and serving.of_run(run_config).scheme.orientations == 1


def denoise_function(network, settings):
  """The network as fn(network values) -> same, tiled as settings (a
  DenoiseConfig: denoise.py's flags, n2n.Denoiser's) say: over images, or over
  volumes for a 3D run; with settings.tta the mean over the 8 flips and
  rotations (in y and x for volumes), unless the run's scheme takes it already."""
  tta = whole_image_tta(network.run_config, settings.tta)
  if not noisy_volumes.is_volume_run(network.run_config):
    return image_function(network, settings.tile_size, settings.tile_overlap,
                          settings.batch_tiles, tta)
  tile, overlap = _volume_tiles(network, settings)
  denoise = volume_function(network, tile, overlap, settings.batch_tiles)
  return whole_images.with_test_time_augmentation(denoise) if tta else denoise


def _volume_tiles(network, settings):
  """((depth, height, width) tiles, (z, y, x) overlaps) of a 3D run under settings."""
  return config_lib.volume_tiling(settings, network.run_config.data.crop_depth)


def network_tiles(network, settings, spatial):
  """How many tiles denoise_function(network, settings) runs through the
  network for one pass over an image (H, W) or volume (D, H, W) of that shape
  (8 passes' worth with settings.tta)."""
  if noisy_volumes.is_volume_run(network.run_config):
    tile, overlap = _volume_tiles(network, settings)
    multiples = whole_images.volume_multiples(network.run_config)
  else:
    tile, overlap, multiples = settings.tile_size, settings.tile_overlap, unet.SIZE_MULTIPLE
  shapes = (whole_images.augmented_shapes(spatial)
            if whole_image_tta(network.run_config, settings.tta) else [tuple(spatial)])
  return sum(tiling.tile_count(shape, tile, overlap, multiples) for shape in shapes)
