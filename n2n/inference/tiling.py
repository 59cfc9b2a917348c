"""Denoising images of any size in bounded memory: overlapping tiles, blended.

A tile's output is least reliable near its edges, where the network saw no
context. Tiles overlap by `overlap` pixels and are blended with weights that
ramp linearly across each overlap, so every output pixel is a weighted mean
dominated by the tiles that saw it far from their edges, and no seam shows.
Edges on the image border keep full weight: there the whole-image output has
no more context either.
"""

import math

import numpy as np

from n2n.model import unet

# Tiles of up to 1024 x 1024 (balanced, see balanced_tile): a 6000 x 4000 RGB
# image runs 1.17x its pixels through the network (1.38x at 512) in 2.1 GiB
# peak RSS (1.6 GiB at 512), 13% faster end to end (bench/denoise_throughput.py).
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


def balanced_tile(size, tile, overlap):
  """The tile length along an axis of `size` pixels: no more than `tile`, as few
  tiles as `tile` needs, and then as short as a multiple of 32 allows.

  Every tile costs a full network pass, so shrinking the tiles until they just
  cover the axis removes the wasted overlap: 6000 x 4000 in tiles of at most
  1024 costs 1.17x the image's pixels instead of 1.53x.
  """
  if size <= tile:
    return round_up(size)
  count = math.ceil((size - overlap) / (tile - overlap))
  return min(tile, round_up(math.ceil((size - overlap) / count) + overlap))


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


def denoise_tiled(image, run_batch, tile_size=DEFAULT_TILE_SIZE, overlap=DEFAULT_OVERLAP,
                  batch_tiles=1):
  """Denoises one image tile by tile.

  Args:
    image: [H, W, C] float32, any size.
    run_batch: fn([N, T, T, C] float32) -> [N, T, T, C] float32, the network
      (T a multiple of 32).
    tile_size: tile side in pixels, a multiple of 32; images that fit in one
      tile are run whole (padded to a multiple of 32).
    overlap: pixels neighbouring tiles share, < tile_size / 2.
    batch_tiles: tiles per run_batch call.

  Returns:
    [H, W, C] float32.
  """
  height, width, channels = image.shape
  tile_h = balanced_tile(height, tile_size, overlap)
  tile_w = balanced_tile(width, tile_size, overlap)
  if tile_h > height or tile_w > width:
    # Smaller than one tile along an axis: reflect-pad to the tile (as whole-image
    # inference pads to a multiple of 32) and crop back afterwards.
    padded = reflect_pad(image, tile_h, tile_w)
    return denoise_tiled(padded, run_batch, tile_size, overlap, batch_tiles)[:height, :width]
  output = np.zeros((height, width, channels), np.float32)
  total_weight = np.zeros((height, width, 1), np.float32)
  corners = [(top, left) for top in tile_starts(height, tile_h, overlap)
             for left in tile_starts(width, tile_w, overlap)]
  for first in range(0, len(corners), batch_tiles):
    chunk = corners[first:first + batch_tiles]
    tiles = np.stack([image[top:top + tile_h, left:left + tile_w] for top, left in chunk])
    for (top, left), denoised in zip(chunk, run_batch(tiles)):
      weight = np.outer(_ramp(tile_h, top, height, overlap),
                        _ramp(tile_w, left, width, overlap))[:, :, np.newaxis]
      output[top:top + tile_h, left:left + tile_w] += weight * denoised
      total_weight[top:top + tile_h, left:left + tile_w] += weight
  output /= total_weight
  return output
