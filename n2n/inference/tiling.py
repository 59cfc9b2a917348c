"""Denoising images and volumes of any size in bounded memory: overlapping tiles, blended.

A tile's output is least reliable near its edges, where the network saw no
context. Tiles overlap by `overlap` pixels and are blended with weights that
ramp linearly across each overlap, so every output pixel is a weighted mean
dominated by the tiles that saw it far from their edges, and no seam shows.
Edges on the image border keep full weight: there the whole-image output has
no more context either. Volumes are tiled the same way along every spatial
axis (z, y, x), each axis with its own tile length, overlap and multiple.
"""

import functools
import itertools
import math

import numpy as np

from n2n.model import unet

# Tiles of up to 1024 x 1024 (balanced, see balanced_tile): a 6000 x 4000 RGB
# image runs 1.17x its pixels through the network (1.38x at 512) in 2.1 GiB
# peak RSS (1.6 GiB at 512), 13% faster end to end (bench/denoise_throughput.py);
# with oneDNN's AVX2 kernels and in bfloat16 alike, 512 was 10-25% slower and
# 1536 up to a quarter faster at about twice the memory (bench/denoise_paths.py,
# docs/performance.md, issue 64).
# With 64 shared pixels the tiled output stays within 1/255 of the whole-image
# output (bench/tile_seams.py; README).
DEFAULT_TILE_SIZE = 1024
DEFAULT_OVERLAP = 64


def round_up(value, multiple=unet.SIZE_MULTIPLE):
  """The smallest multiple of `multiple` >= value."""
  return -(-value // multiple) * multiple


def reflect_pad(image, height, width):
  """Reflect-pads the bottom and right of [H, W, C] up to at least (height, width).

  numpy's 'reflect' reflects again when the pad exceeds the image, so even
  tiny images reach any size.
  """
  return np.pad(image, ((0, max(0, height - image.shape[0])),
                        (0, max(0, width - image.shape[1])), (0, 0)), mode='reflect')


def pad_to_multiple(image, multiple=unet.SIZE_MULTIPLE):
  """[H, W, C] reflect-padded to the next multiples of `multiple`; crop [:H, :W] to undo."""
  return reflect_pad(image, round_up(image.shape[0], multiple), round_up(image.shape[1], multiple))


def balanced_tile(size, tile, overlap, multiple=unet.SIZE_MULTIPLE):
  """The tile length along an axis of `size` pixels: no more than `tile`, as few
  tiles as `tile` needs, and then as short as a multiple of 32 allows.

  Every tile costs a full network pass, so shrinking the tiles until they just
  cover the axis removes the wasted overlap: 6000 x 4000 in tiles of at most
  1024 costs 1.17x the image's pixels instead of 1.53x. `multiple`: the
  network's size multiple along this axis (32; a 3D network's depth multiple).
  """
  if size <= tile:
    return round_up(size, multiple)
  count = math.ceil((size - overlap) / (tile - overlap))
  return min(tile, round_up(math.ceil((size - overlap) / count) + overlap, multiple))


def tile_starts(size, tile, overlap):
  """Offsets of tiles of `tile` pixels covering [0, size), evenly spread,
  neighbours sharing at least `overlap` pixels. [0] when one tile is enough."""
  if size <= tile:
    return [0]
  count = math.ceil((size - overlap) / (tile - overlap))
  return [round(index * (size - tile) / (count - 1)) for index in range(count)]


def _ramp(length, start, size, overlap):
  """Blend weights along one axis of a tile at `start` of `length` pixels: [length] float32."""
  weights = np.ones(length, np.float32)
  # The outermost quarter of the overlap gets no weight: those pixels are the
  # furthest from the tile's context. The ramp runs over the rest.
  margin = overlap // 4
  ramp = np.clip((np.arange(overlap, dtype=np.float32) + 1.0 - margin) / (overlap - margin + 1.0),
                 0.0, 1.0)
  if start > 0:
    weights[:overlap] = np.minimum(weights[:overlap], ramp)
  if start + length < size:
    weights[length - overlap:] = np.minimum(weights[length - overlap:], ramp[::-1])
  return weights


def _per_axis(value, dims):
  """An int (the same on every axis) or a sequence of dims ints -> tuple of dims ints."""
  return (value,) * dims if isinstance(value, int) else tuple(value)


def _geometry(spatial, tile_size, overlap, multiples):
  """(tile sizes, overlaps, multiples, balanced tiles), one of each per axis of spatial."""
  dims = len(spatial)
  tile_sizes, overlaps = _per_axis(tile_size, dims), _per_axis(overlap, dims)
  multiples = _per_axis(multiples, dims)
  tiles = tuple(balanced_tile(size, tile, lap, multiple)
                for size, tile, lap, multiple in zip(spatial, tile_sizes, overlaps, multiples))
  return tile_sizes, overlaps, multiples, tiles


def tile_count(spatial, tile_size=DEFAULT_TILE_SIZE, overlap=DEFAULT_OVERLAP,
               multiples=unet.SIZE_MULTIPLE):
  """How many tiles denoise_tiled runs through the network for an image (or
  volume) of spatial shape (H, W) (or (D, H, W)); the other arguments as its."""
  _, overlaps, _, tiles = _geometry(spatial, tile_size, overlap, multiples)
  # An axis shorter than its tile is padded to it: one tile along it.
  return math.prod(len(tile_starts(max(size, tile), tile, lap))
                   for size, tile, lap in zip(spatial, tiles, overlaps))


def denoise_tiled(image, run_batch, tile_size=DEFAULT_TILE_SIZE, overlap=DEFAULT_OVERLAP,
                  batch_tiles=1, multiples=unet.SIZE_MULTIPLE):
  """Denoises one image (or volume) tile by tile.

  Args:
    image: [H, W, C] float32 (or [D, H, W, C] for a volume), any size.
    run_batch: fn([N, T, T, C] float32) -> [N, T, T, C] float32, the network
      ([N, Td, T, T, C] for volumes; each T a multiple of its axis' multiple).
    tile_size: tile length in pixels, one int for every axis or one per
      spatial axis, multiples of `multiples`; images that fit in one tile are
      run whole (padded to the multiple).
    overlap: pixels neighbouring tiles share (int or one per axis), < tile / 2.
    batch_tiles: tiles per run_batch call.
    multiples: the network's size multiple, int or one per axis.

  Returns:
    float32 of image's shape.
  """
  spatial = image.shape[:-1]
  tile_sizes, overlaps, multiples, tiles = _geometry(spatial, tile_size, overlap, multiples)
  if any(tile > size for tile, size in zip(tiles, spatial)):
    # Smaller than one tile along an axis: reflect-pad to the tile (as whole-image
    # inference pads to a multiple of 32) and crop back afterwards. numpy's
    # 'reflect' reflects again when the pad exceeds the image.
    padded = np.pad(image, [(0, max(0, tile - size)) for tile, size in zip(tiles, spatial)]
                    + [(0, 0)], mode='reflect')
    output = denoise_tiled(padded, run_batch, tile_sizes, overlaps, batch_tiles, multiples)
    return output[tuple(slice(0, size) for size in spatial)]
  output = np.zeros(image.shape, np.float32)
  total_weight = np.zeros(spatial + (1,), np.float32)
  corners = list(itertools.product(*[tile_starts(size, tile, lap)
                                     for size, tile, lap in zip(spatial, tiles, overlaps)]))
  for first in range(0, len(corners), batch_tiles):
    chunk = corners[first:first + batch_tiles]
    windows = [tuple(slice(start, start + tile) for start, tile in zip(corner, tiles))
               for corner in chunk]
    batch = np.stack([image[window] for window in windows])
    for corner, window, denoised in zip(chunk, windows, run_batch(batch)):
      ramps = [_ramp(tile, start, size, lap)
               for tile, start, size, lap in zip(tiles, corner, spatial, overlaps)]
      weight = functools.reduce(np.multiply.outer, ramps)[..., np.newaxis]
      output[window] += weight * denoised
      total_weight[window] += weight
  output /= total_weight
  return output
