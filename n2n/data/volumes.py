"""Volumes and movies in TIFF files: pixels, axes and physical sizes, read and written back.

A stack is held as one canonical array [T, Z, Y, X, C] (a missing axis has
size 1) plus the file's own axes string, so it can be written back exactly as
it came: the same axes order, dtype, format (plain multi-page TIFF, ImageJ
hyperstack or OME-TIFF) and physical sizes. Axis letters are tifffile's: T
time, Z depth, C channel planes, S samples (RGB), Y and X. Files that do not
say their axes (tifffile reads I or Q for "some pages") need them from the
user (--axes).
"""

import dataclasses
import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import tifffile

CANONICAL_AXES = 'TZYXC'
KNOWN_AXES = set('TZCSYX')
FORMATS = ('tiff', 'imagej', 'ome')
# OME's physical sizes and time step, kept through a round trip.
_OME_SIZE_KEYS = ('PhysicalSizeX', 'PhysicalSizeY', 'PhysicalSizeZ', 'TimeIncrement')


class VolumeError(ValueError):
  """A stack n2n cannot read as a volume; the message names the file and the cause."""


class UnknownAxesError(VolumeError):
  """A stack whose file does not say its axes, read without --axes."""

  def __init__(self, message, path):
    super().__init__(message)
    self.path = path


@dataclasses.dataclass(frozen=True)
class Volume:
  """A stack's pixels and how its file lays them out.

  Attributes:
    pixels: [T, Z, Y, X, C] array in the file's dtype (uint8, uint16, float32,
      ...); T, Z or C is 1 where the file has no such axis.
    axes: the file's axes, e.g. 'ZYX', 'TZCYX', 'TYX', 'ZYXS'.
    format: 'tiff' (plain multi-page), 'imagej' (hyperstack) or 'ome'.
    spacing: (z, y, x) physical voxel size, in `unit` (1.0 where unknown).
    unit: the spacing's unit ('' where unknown).
    time_step: seconds between frames (0.0 where unknown).
  """
  pixels: np.ndarray
  axes: str
  format: str = 'tiff'
  spacing: tuple = (1.0, 1.0, 1.0)
  unit: str = ''
  time_step: float = 0.0

  @property
  def is_stack(self):
    """True when it has more than one plane in T or Z."""
    return self.pixels.shape[0] > 1 or self.pixels.shape[1] > 1


def check_axes(axes, ndim, where):
  """Raises VolumeError unless `axes` names `ndim` distinct known axes including Y and X."""
  if len(axes) != ndim:
    raise VolumeError(f'{where}: axes {axes!r} name {len(axes)} axes, the data has {ndim}')
  unknown = set(axes) - KNOWN_AXES
  if unknown or len(set(axes)) != len(axes) or not {'Y', 'X'} <= set(axes):
    raise VolumeError(f"{where}: axes {axes!r} must be distinct letters of 'TZCSYX' with Y and X")
  if 'C' in axes and 'S' in axes:
    raise VolumeError(f'{where}: axes {axes!r} have both C and S channels; n2n takes one')


def to_canonical(array, axes):
  """[...] in `axes` order -> [T, Z, Y, X, C] (a view where it can be).

  Args:
    array: any dtype, one dimension per letter of axes.
    axes: letters of 'TZCSYX' (S and C both become the channel axis).
  """
  axes = axes.replace('S', 'C')
  order = [axes.index(letter) for letter in CANONICAL_AXES if letter in axes]
  moved = np.transpose(array, order)
  present = [letter for letter in CANONICAL_AXES if letter in axes]
  shape = [moved.shape[present.index(letter)] if letter in present else 1
           for letter in CANONICAL_AXES]
  return moved.reshape(shape)


def from_canonical(pixels, axes):
  """[T, Z, Y, X, C] -> the array laid out in `axes` (inverse of to_canonical)."""
  letters = axes.replace('S', 'C')
  kept = pixels.reshape([size for letter, size in zip(CANONICAL_AXES, pixels.shape)
                         if letter in letters])
  present = [letter for letter in CANONICAL_AXES if letter in letters]
  return np.transpose(kept, [present.index(letter) for letter in letters])


def volumes_of(pixels):
  """[T, Z, Y, X, C] -> list of [D, H, W, C] volumes: one per time point of a
  z-stack, or the whole movie (time as depth) where there is no z."""
  frames, depth = pixels.shape[:2]
  if depth == 1 and frames > 1:
    return [pixels[:, 0]]
  return [pixels[frame] for frame in range(frames)]


def stack_like(denoised, pixels):
  """Inverse of volumes_of: the list of [D, H, W, C] back to pixels' [T, Z, Y, X, C]."""
  frames, depth = pixels.shape[:2]
  if depth == 1 and frames > 1:
    return denoised[0][:, np.newaxis]
  return np.stack(denoised)


def _ome_sizes(ome_xml):
  """{key: value} of the first Pixels element's physical sizes and their units."""
  if not ome_xml:
    return {}
  try:
    root = ElementTree.fromstring(ome_xml)
  except ElementTree.ParseError:
    return {}
  for element in root.iter():
    if element.tag.endswith('}Pixels') or element.tag == 'Pixels':
      return {key: value for key, value in element.attrib.items()
              if key.startswith(_OME_SIZE_KEYS)}
  return {}


def _imagej_xy_spacing(page):
  """(y, x) pixel size from an ImageJ page's resolution tags (pixels per unit)."""
  sizes = []
  for tag in ('YResolution', 'XResolution'):
    value = page.tags.get(tag)
    numerator, denominator = value.value if value is not None else (1, 1)
    sizes.append(denominator / numerator if numerator else 1.0)
  return tuple(sizes)


def page_count(path):
  """Pages in a TIFF file (0 when it does not read as TIFF: the image reader then says why)."""
  try:
    with tifffile.TiffFile(path) as tiff:
      return len(tiff.pages)
  except (OSError, ValueError, tifffile.TiffFileError):
    return 0


def read_volume(path, axes=''):
  """Reads a TIFF stack (plain, ImageJ hyperstack or OME-TIFF) as a Volume.

  Args:
    path: a .tif/.tiff file.
    axes: the file's axes in its own order (e.g. 'ZYX'); '' to take them from
      the file. Needed where the file does not say them.

  Raises:
    VolumeError: unreadable, or axes unknown or inconsistent (names the file).
  """
  try:
    with tifffile.TiffFile(path) as tiff:
      series = tiff.series[0]
      array = series.asarray()
      file_axes = series.axes
      if tiff.is_ome:
        sizes = _ome_sizes(tiff.ome_metadata)
        spacing = tuple(float(sizes.get(f'PhysicalSize{letter}', 1.0)) for letter in 'ZYX')
        unit = sizes.get('PhysicalSizeXUnit', 'µm' if 'PhysicalSizeX' in sizes else '')
        volume_format, time_step = 'ome', float(sizes.get('TimeIncrement', 0.0))
      elif tiff.is_imagej:
        meta = tiff.imagej_metadata or {}
        spacing = (float(meta.get('spacing', 1.0)),) + _imagej_xy_spacing(tiff.pages[0])
        unit, time_step = str(meta.get('unit', '')), float(meta.get('finterval', 0.0))
        volume_format = 'imagej'
      else:
        spacing, unit, time_step, volume_format = (1.0, 1.0, 1.0), '', 0.0, 'tiff'
  except (OSError, ValueError, tifffile.TiffFileError) as error:
    raise VolumeError(f'{path}: not a readable TIFF stack ({error})') from None
  if axes:
    check_axes(axes, array.ndim, f'{path} --axes')
    file_axes = axes
  elif set(file_axes) - KNOWN_AXES:
    raise UnknownAxesError(
        f'{path}: the file does not say what its axes are (tifffile reads {file_axes!r}); '
        f"give them with --axes, e.g. --axes={'ZYX' if array.ndim == 3 else 'TZYX'}", path)
  else:
    check_axes(file_axes, array.ndim, path)
  return Volume(to_canonical(array, file_axes), file_axes, volume_format, spacing, unit,
                time_step)


def _resolution(spacing):
  """TIFF resolution tags (pixels per unit, y then x ordered as x, y) from (z, y, x) spacing."""
  return (1.0 / spacing[2], 1.0 / spacing[1])


def write_volume(path, pixels, like):
  """Writes [T, Z, Y, X, C] pixels laid out and described as `like` was.

  Args:
    path: the .tif file to write (overwritten: callers check first).
    pixels: [T, Z, Y, X, C] array of the dtype to store.
    like: the Volume the pixels came from (axes, format, spacing, unit).
  """
  array = from_canonical(pixels, like.axes)
  if like.format == 'imagej':
    # ImageJ knows TZCYXS only in that order: the file's axes are already so.
    metadata = {'axes': like.axes, 'spacing': like.spacing[0]}
    if like.unit:
      metadata['unit'] = like.unit
    if like.time_step:
      metadata['finterval'] = like.time_step
    tifffile.imwrite(path, array, imagej=True, metadata=metadata,
                     resolution=_resolution(like.spacing))
  elif like.format == 'ome':
    metadata = {'axes': like.axes, 'PhysicalSizeZ': like.spacing[0],
                'PhysicalSizeY': like.spacing[1], 'PhysicalSizeX': like.spacing[2]}
    if like.unit:
      metadata.update({f'PhysicalSize{letter}Unit': like.unit for letter in 'XYZ'})
    if like.time_step:
      metadata['TimeIncrement'] = like.time_step
    tifffile.imwrite(path, array, ome=True, metadata=metadata,
                     photometric='rgb' if 'S' in like.axes else 'minisblack')
  else:
    tifffile.imwrite(path, array, metadata={'axes': like.axes},
                     photometric='rgb' if 'S' in like.axes else 'minisblack')


def parse_axes_flag(value):
  """--axes as given ('' or letters, any case) -> upper-case letters; raises ValueError."""
  axes = value.strip().upper()
  if axes and not re.fullmatch('[TZCSYX]+', axes):
    raise ValueError(f"--axes={value!r} must be letters of 'TZCSYX', e.g. ZYX or TZCYX")
  return axes
