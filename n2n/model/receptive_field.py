"""How far the U-Net sees along one axis: its receptive field and halo, from its layer list.

Counted on boolean rows rather than measured through the network, so any
axis of any configuration is cheap: an axis of a 3D network that some stages
do not pool (unet.z_pooled_stages) is one more row rule. tests/model probe
the built networks with single-voxel impulses against these counts.
"""

import numpy as np

from n2n.model import unet

ALL_POOLED = (True,) * unet.STAGES
ALL_SPREAD = (True,) * unet.LEVELS


def influence(downsampling, position, size=1024, pooled=ALL_POOLED, spread=ALL_SPREAD):
  """Boolean [size]: the output pixels of a size-pixel row that the input pixel
  at `position` reaches, from unet.build_unet's layer list in one dimension.

  A 3x3 convolution spreads a pixel to its neighbours at its scale; a 2x2 max
  pool merges the pair (2i, 2i + 1) into unit i; max-blur pooling a stride-1
  max of (i, i + 1), then a 3-tap blur at stride 2, merges 2i - 1 to 2i + 2;
  nearest upsampling repeats each unit twice; a stage that does not pool this
  axis (pooled[stage - 1] False) neither merges nor repeats; a convolution at
  a resolution level whose kernels are 1 wide along the axis (spread[level]
  False: the 3D network's in-plane levels, along z) does not spread; a skip
  concatenation joins two paths. The top skip (the input before the last
  convolutions) is left out: it lies inside the deep path's reach.
  """
  def conv(reached, level):
    if not spread[level]:
      return reached
    padded = np.pad(reached, 1)
    return padded[:-2] | padded[1:-1] | padded[2:]

  def pool(reached, stage):
    if not pooled[stage - 1]:
      return reached
    if downsampling == 'max_pool':
      return reached[0::2] | reached[1::2]
    maxed = reached | np.append(reached[1:], False)
    padded = np.pad(maxed, 1)
    return padded[0:-2:2] | padded[1:-1:2] | padded[2::2]

  def upsample(reached, stage):
    return np.repeat(reached, 2) if pooled[stage - 1] else reached

  if downsampling not in unet.DOWNSAMPLINGS:
    raise ValueError(f'downsampling={downsampling!r} is not one of '
                     f'{", ".join(unet.DOWNSAMPLINGS)}')
  reached = np.zeros(size, bool)
  reached[position] = True
  # Pooling stage s leads from resolution level s - 1 to level s.
  reached = pool(conv(conv(reached, 0), 0), 1)  # enc_conv0, enc_conv1, pool1
  skips = [None]
  for stage in range(2, 6):  # enc_conv{2..5}, pool{2..5}
    skips.append(reached)
    reached = pool(conv(reached, stage - 1), stage)
  reached = conv(reached, unet.STAGES)  # enc_conv6
  for stage in range(5, 1, -1):  # upsample, concat, dec_conv{stage}a/b
    reached = conv(conv(upsample(reached, stage) | skips[stage - 1], stage - 1), stage - 1)
  # dec_conv1a, dec_conv1b, dec_conv1
  return conv(conv(conv(upsample(reached, 1), 0), 0), 0)


def reaches(downsampling, pooled=ALL_POOLED, spread=ALL_SPREAD):
  """[(pixels before, pixels after)] an input pixel reaches in the output, for
  each of its positions on the axis' pooling grid (2 ** pooled stages)."""
  found = []
  for phase in range(2 ** sum(pooled)):
    position = 512 + phase
    reached = np.nonzero(influence(downsampling, position, pooled=pooled, spread=spread))[0]
    found.append((position - reached.min(), reached.max() - position))
  return found


def receptive_field(downsampling='max_pool', pooled=ALL_POOLED, spread=ALL_SPREAD):
  """The most output pixels along the axis that one input pixel reaches
  (286 for max_pool, 350 for max_blur_pool, on an axis every stage pools)."""
  return int(max(before + after + 1
                 for before, after in reaches(downsampling, pooled, spread)))


def halo(downsampling='max_pool', pooled=ALL_POOLED, spread=ALL_SPREAD):
  """Pixels of context each side of an output pixel along the axis: the
  farthest any input pixel reaches on one side (158 for max_pool, 189 for
  max_blur_pool, on an axis every stage pools).

  More than half the receptive field: the pooling grid puts the field off
  centre by up to 31 pixels, so with half of it the output pixels near a
  cropped tile's edge would still depend on pixels outside the tile.
  """
  return int(max(max(pair) for pair in reaches(downsampling, pooled, spread)))


def z_spread(xy_conv_levels):
  """(bool per resolution level 0..5): whether the 3D network's convolutions
  there spread along z (False at the xy_conv_levels finest, in-plane ones)."""
  unet.check_xy_conv_levels(xy_conv_levels)
  return tuple(level >= xy_conv_levels for level in range(unet.LEVELS))


def volume_halo(z_pools, xy_conv_levels=0):
  """(z, y, x) halo of the 3D network with z_pools z-pooling stages (max_pool)
  and xy_conv_levels in-plane levels."""
  z = halo('max_pool', unet.z_pooled_stages(z_pools), z_spread(xy_conv_levels))
  xy = halo('max_pool')
  return (z, xy, xy)


def volume_receptive_field(z_pools, xy_conv_levels=0):
  """(z, y, x) receptive field of the 3D network with z_pools z-pooling stages
  and xy_conv_levels in-plane levels."""
  z = receptive_field('max_pool', unet.z_pooled_stages(z_pools), z_spread(xy_conv_levels))
  xy = receptive_field('max_pool')
  return (z, xy, xy)
