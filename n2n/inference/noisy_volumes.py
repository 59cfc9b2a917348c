"""Denoising TIFF stacks with a 3D run: read with their axes, denoised in 3D
tiles, written back as they came.

A 3D run (--spatial_dims=3) sees a stack as volumes [D, H, W, C]: a z-stack
is one volume per time point; a movie without z (axes like TYX) is one volume
whose depth is time. Axes order, dtype, format (plain, ImageJ or OME TIFF),
voxel sizes and time step come back as they went in (n2n/data/volumes.py).
Pixels map to network values by the rules of 2D files
(noisy_files.network_values): the white level, or, for a
--normalization=percentile run, each volume's own percentiles over all its
voxels and channels (as in training, where each acquisition is mapped by its
own).
"""

import dataclasses

from n2n.data import native_images
from n2n.data import volumes
from n2n.inference import noisy_files


@dataclasses.dataclass(frozen=True)
class StackFile:
  """A stack read for a 3D run: the Volume and the file it came from."""
  volume: volumes.Volume
  source: str


def read_stack(source, axes=''):
  """StackFile of a TIFF stack; VolumeError naming the file otherwise."""
  if native_images.family_of(source) != 'tiff':
    raise volumes.VolumeError(f'{source}: a 3D run denoises TIFF stacks (ImageJ, OME or '
                              'plain multi-page TIFF), not this format')
  return StackFile(volumes.read_volume(source, axes), source)


def denoise_volume(volume, denoise, serving, white_level_override=0.0):
  """One [D, H, W, C] volume denoised, in its own dtype.

  Args:
    volume: [D, H, W, C] of any image dtype (NaN and inf are not expected in
      stacks; they spread through a tile as through an image).
    denoise: fn([D, H, W, serving.channels] float32) -> same.
    serving: serving.Serving of the network (its channels: a 1-channel
      network denoises each channel alone; its white level or percentile rule).
    white_level_override: --white_level (0: the run's).
  """
  values, back = noisy_files.network_values(volume, serving, white_level_override)
  return back(noisy_files.through_network(values, denoise, serving.channels))


def denoise_stack(stack, denoise, serving, white_level_override=0.0):
  """Every volume of a StackFile denoised: [T, Z, Y, X, C] of its dtype."""
  return denoise_pixels(stack.volume.pixels, denoise, serving, white_level_override)


def denoise_pixels(pixels, denoise, serving, white_level_override=0.0):
  """Every volume of [T, Z, Y, X, C] pixels (volumes.volumes_of) denoised: the
  same shape and dtype."""
  return volumes.stack_like([denoise_volume(volume, denoise, serving, white_level_override)
                             for volume in volumes.volumes_of(pixels)], pixels)


def write_stack(destination, denoised, stack):
  """Writes denoised [T, Z, Y, X, C] like the stack it came from (beside, then
  renamed: never a truncated file under the final name); returns megavoxels."""
  partial = destination + '.partial.tif'
  noisy_files.make_parent(destination)
  try:
    volumes.write_volume(partial, denoised, stack.volume)
    noisy_files.rename_into_place(partial, destination)
  finally:
    noisy_files.remove_if_left(partial)
  return denoised[..., 0].size / 1e6
