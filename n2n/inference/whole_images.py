"""Running a trained U-Net on whole images of any size."""

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.inference import frozen_weights
from n2n.inference import tiling


def model_function(model):
  """The model as fn([N, H, W, C] float32 array, H and W multiples of 32) -> same
  ([N, D, H, W, C] for a 3D model), with its weights as they are now, frozen into
  the graph (frozen_weights.py says why): a model that trains on is wrapped again
  before it is run again."""
  run_model = frozen_weights.frozen_model(model)
  return lambda tiles: run_model(tf.constant(tiles, tf.float32))


def make_denoiser(model, tile_size=tiling.DEFAULT_TILE_SIZE, overlap=tiling.DEFAULT_OVERLAP,
                  batch_tiles=1):
  """Wraps a Keras model as fn([H, W, C] float32 array) -> [H, W, C] float32 array,
  with the model's weights as they are now (model_function).

  Images of any size: those that fit in one tile are run whole (reflect-padded
  to a multiple of 32), larger ones in overlapping, blended tiles
  (n2n/inference/tiling.py). validate.py and denoise.py both use this path.
  """
  return tiled_denoiser(model_function(model), tile_size, overlap, batch_tiles)


def volume_denoiser(run_batch, multiples, tile, overlap, batch_tiles):
  """fn([D, H, W, C] float32) -> same: a 3D run's network function over
  overlapping (depth, height, width) tiles blended with (z, y, x) overlaps.

  Args:
    multiples: the (depth, height, width) multiples the network takes
      (serving.Serving.multiples of a 3D run).

  Raises:
    ValueError: a tile depth that is not a multiple of 2**z_pools of the run.
  """
  if tile[0] % multiples[0]:
    raise ValueError(f'the tile depth {tile[0]} (--volume_tile) must be a multiple of '
                     f'{multiples[0]}, 2**z_pools of the run')
  return tiled_denoiser(run_batch, tile, overlap, batch_tiles, multiples)


def make_volume_denoiser(model, serving):
  """Wraps a 3D run's Keras model as fn([D, H, W, C] float32) -> same, tiled
  as denoise.py tiles volumes by default (tiles as deep as the run's training
  crops, serving.volume_depth, overlapping by half in z;
  config.default_volume_tiling). Training's evaluation and validate.py score
  3D runs through it, so they score what denoise.py writes.
  """
  tile, overlap = config_lib.default_volume_tiling(serving.volume_depth)
  return volume_denoiser(model_function(model), serving.multiples, tile, overlap, 1)


def tiled_denoiser(run_batch, tile_size=tiling.DEFAULT_TILE_SIZE,
                   overlap=tiling.DEFAULT_OVERLAP, batch_tiles=1, multiples=32):
  """fn([H, W, C] float32) -> [H, W, C] float32 over any network function (or
  [D, H, W, C] volumes, with tile_size, overlap and multiples per axis: see
  tiling.denoise_tiled).

  Args:
    run_batch: fn([N, T, T, C] float32) -> [N, T, T, C] tensor or array, e.g. a
      Keras model or an exported SavedModel's signature.
  """

  def run_tiles(tiles):
    return np.asarray(run_batch(tiles))

  def denoise(noisy):
    return tiling.denoise_tiled(np.asarray(noisy, np.float32), run_tiles, tile_size, overlap,
                                batch_tiles, multiples)

  return denoise


# The 8 symmetries of the square: (quarter turns, then a left-right flip).
DIHEDRAL_TRANSFORMS = tuple((turns, flip) for turns in range(4) for flip in (False, True))


# The plane they turn and flip: (H, W) of [H, W, C] images and [D, H, W, C] volumes.
_PLANE = (-3, -2)


def with_test_time_augmentation(denoise):
  """fn([H, W, C]) -> [H, W, C]: the mean of denoise's outputs over the 8 flips
  and rotations of the image, each turned back before averaging (for volumes
  [D, H, W, C], of each plane: the turns and flips are in y and x).

  The network is not exactly equivariant to them, and its errors differ
  between them, so the mean is usually closer to the clean image; it costs 8
  passes. Each pass goes through denoise whole (tiling included), so any size,
  bit depth and precision works as without it.
  """

  def denoise_all(noisy):
    noisy = np.asarray(noisy, np.float32)
    total = np.zeros(noisy.shape, np.float64)
    for turns, flip in DIHEDRAL_TRANSFORMS:
      turned = np.rot90(noisy, turns, axes=_PLANE)
      turned = np.flip(turned, _PLANE[1]) if flip else turned
      output = np.asarray(denoise(np.ascontiguousarray(turned)), np.float64)
      output = np.flip(output, _PLANE[1]) if flip else output
      total += np.rot90(output, -turns, axes=_PLANE)
    return (total / len(DIHEDRAL_TRANSFORMS)).astype(np.float32)

  return denoise_all


def augmented_shapes(spatial):
  """The spatial shapes ((H, W) or (D, H, W)) of the 8 passes of
  with_test_time_augmentation: H and W swapped by odd quarter turns."""
  swapped = tuple(spatial[:-2]) + (spatial[-1], spatial[-2])
  return [swapped if turns % 2 else tuple(spatial) for turns, _ in DIHEDRAL_TRANSFORMS]
