"""The network a denoiser runs, from a run's checkpoint or an export, and the
image function built on it: what denoise.py and n2n.Denoiser share."""

import dataclasses

from n2n import config as config_lib
from n2n.inference import whole_images
from n2n.inference import devices
from n2n.inference import exported_model
from n2n.inference import frozen_weights
from n2n.inference import restore
from n2n.inference import serving as serving_lib
from n2n.inference import tiling


@dataclasses.dataclass(frozen=True)
class Network:
  """A loaded network and what the per-page code needs to know about it.

  Attributes:
    run_batch: fn([N, H, W, C] float32 network values) -> same shape
      ([N, D, H, W, C] for a 3D run).
    serving: serving.Serving of its run, resolved once where it was loaded
      (channels C, dimensions, white level, data dtype, normalisation, scheme,
      input multiples), handed to the per-page code.
    source: what was loaded, for messages: a checkpoint prefix or 'the export PATH'.
    replicas: devices one call splits its batch of tiles across.
  """
  run_batch: object
  serving: serving_lib.Serving
  source: str
  replicas: int = 1


def from_export(path):
  """Network of a folder written by export.py; it runs as it was saved (float32)."""
  run_batch, serving = exported_model.load_export(path)
  return Network(run_batch, serving, f'the export {path}')


def from_package(path):
  """Network of a BioImage Model Zoo package that export.py --bioimageio wrote
  (its SavedModel, as from_export; float32)."""
  run_batch, serving = exported_model.load_package(path)
  return Network(run_batch, serving, f'the package {path}')


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
  return Network(run_batch, restored.serving, restored.prefix, replicas)


def volume_function(network, tile, overlap, batch_tiles):
  """fn([D, H, W, network.serving.channels] float32 network values) -> same: a 3D
  run's network over overlapping (depth, height, width) tiles blended with
  (z, y, x) overlaps, batch_tiles per device per call."""
  return whole_images.volume_denoiser(network.run_batch, network.serving.multiples, tile,
                                      overlap, batch_tiles * network.replicas)


def image_function(network, tile_size, tile_overlap, batch_tiles, tta=False):
  """fn([H, W, network.serving.channels] float32 network values) -> same: the network
  over overlapping tiles, batch_tiles per device per call, with tta the mean
  over the 8 flips and rotations."""
  denoise = whole_images.tiled_denoiser(network.run_batch, tile_size, tile_overlap,
                                        batch_tiles * network.replicas, network.serving.multiples)
  return whole_images.with_test_time_augmentation(denoise) if tta else denoise


def denoise_function(network, settings):
  """The network as fn(network values) -> same, tiled as settings (a
  DenoiseConfig: denoise.py's flags, n2n.Denoiser's) say: over images, or over
  volumes for a 3D run; with settings.tta the mean over the 8 flips and
  rotations (in y and x for volumes), unless the run's scheme takes it already."""
  tta = network.serving.whole_image_tta(settings.tta)
  if not network.serving.is_volume:
    return image_function(network, settings.tile_size, settings.tile_overlap,
                          settings.batch_tiles, tta)
  tile, overlap = _volume_tiles(network, settings)
  denoise = volume_function(network, tile, overlap, settings.batch_tiles)
  return whole_images.with_test_time_augmentation(denoise) if tta else denoise


def _volume_tiles(network, settings):
  """((depth, height, width) tiles, (z, y, x) overlaps) of a 3D run under settings."""
  return config_lib.volume_tiling(settings, network.serving.volume_depth)


def network_tiles(network, settings, spatial):
  """How many tiles denoise_function(network, settings) runs through the
  network for one pass over an image (H, W) or volume (D, H, W) of that shape
  (8 passes' worth with settings.tta)."""
  if network.serving.is_volume:
    tile, overlap = _volume_tiles(network, settings)
  else:
    tile, overlap = settings.tile_size, settings.tile_overlap
  shapes = (whole_images.augmented_shapes(spatial)
            if network.serving.whole_image_tta(settings.tta) else [tuple(spatial)])
  return sum(tiling.tile_count(shape, tile, overlap, network.serving.multiples)
             for shape in shapes)
