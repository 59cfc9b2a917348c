"""OME-Zarr images (NGFF 0.4 on Zarr v2, NGFF 0.5 on Zarr v3): axes, voxel sizes and the
full-resolution array, read chunk by chunk through the optional `zarr` package.

Only the first multiscale image and its first (full-resolution) level are read;
outputs are written as one level with the input's axes, scale, chunks, dtype
and NGFF version. The NGFF metadata is a small JSON document, read and written
here, so no other package is needed (ome-zarr-py is not a dependency).
"""

import dataclasses
import json
import os

EXTRAS_MESSAGE = ('OME-Zarr needs the optional zarr package: pip install -r '
                  'requirements-zarr.txt')
SUFFIX = '.zarr'
# NGFF axis names, in n2n's letters.
_LETTERS = {'t': 'T', 'c': 'C', 'z': 'Z', 'y': 'Y', 'x': 'X'}


class OmeZarrError(ValueError):
  """An OME-Zarr n2n cannot use; the message names the path and the cause."""


def zarr_module():
  """The zarr package, or OmeZarrError saying how to install it."""
  try:
    import zarr  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise OmeZarrError(EXTRAS_MESSAGE) from None
  return zarr


def is_ome_zarr(path):
  """True for a folder named *.zarr (an OME-Zarr image or plain Zarr array)."""
  return path.rstrip('/').endswith(SUFFIX) and os.path.isdir(path)


@dataclasses.dataclass(frozen=True)
class OmeZarrImage:
  """A full-resolution OME-Zarr array and what its metadata says.

  Attributes:
    path: the .zarr folder.
    array: zarr.Array of the first level (not read into memory).
    axes: n2n letters in the array's order, e.g. 'TCZYX' or 'ZYX'.
    scale: voxel size per axis, in the array's order (1.0 where not given).
    units: {letter: unit} where the metadata gives one.
    version: '0.4' (Zarr v2) or '0.5' (Zarr v3).
    name: the multiscale image's name ('' where none).
  """
  path: str
  array: object
  axes: str
  scale: tuple
  units: dict
  version: str
  name: str = ''


def _multiscales(attributes):
  """(multiscales list, NGFF version) of a group's attributes, 0.5 or 0.4 layout."""
  if 'ome' in attributes:
    ome = attributes['ome']
    return ome.get('multiscales', []), str(ome.get('version', '0.5'))
  multiscales = attributes.get('multiscales', [])
  version = str(multiscales[0].get('version', '0.4')) if multiscales else '0.4'
  return multiscales, version


def open_image(path, mode='r'):
  """OmeZarrImage of an OME-Zarr folder's first image at full resolution.

  mode: 'r' to read, 'r+' to write chunks of an existing image (a resumed output).

  Raises:
    OmeZarrError: not Zarr, no multiscales metadata, or axes n2n does not know.
  """
  zarr = zarr_module()
  try:
    group = zarr.open_group(path, mode=mode)
  except Exception as error:  # zarr raises its own types for every kind of unreadable store
    raise OmeZarrError(f'{path}: not a readable Zarr group ({error})') from None
  multiscales, version = _multiscales(dict(group.attrs))
  if not multiscales:
    raise OmeZarrError(f'{path}: no OME-Zarr multiscales metadata (an OME-Zarr image has '
                       '"multiscales" in its group attributes)')
  image = multiscales[0]
  axes_metadata = image.get('axes', [])
  names = [axis['name'] if isinstance(axis, dict) else axis for axis in axes_metadata]
  unknown = [name for name in names if name not in _LETTERS]
  if unknown or 'x' not in names or 'y' not in names:
    raise OmeZarrError(f'{path}: axes {names} are not t, c, z, y, x (n2n reads those)')
  level = image['datasets'][0]
  array = group[level['path']]
  if array.ndim != len(names):
    raise OmeZarrError(f'{path}: {len(names)} axes for an array of {array.ndim} dimensions')
  scale = [1.0] * len(names)
  for transform in level.get('coordinateTransformations', []):
    if transform.get('type') == 'scale':
      scale = [float(value) for value in transform['scale']]
  units = {_LETTERS[axis['name']]: axis['unit'] for axis in axes_metadata
           if isinstance(axis, dict) and axis.get('unit')}
  return OmeZarrImage(path, array, ''.join(_LETTERS[name] for name in names), tuple(scale),
                      units, version, image.get('name', ''))


def _ngff_axes(axes, units):
  kinds = {'T': 'time', 'C': 'channel', 'Z': 'space', 'Y': 'space', 'X': 'space'}
  found = []
  for letter in axes:
    axis = {'name': letter.lower(), 'type': kinds[letter]}
    if letter in units:
      axis['unit'] = units[letter]
    found.append(axis)
  return found


def create_image(path, shape, chunks, dtype, axes, scale=None, units=None, version='0.4',
                 name=''):
  """Creates an empty one-level OME-Zarr image (no chunk written yet); returns its zarr.Array.

  Args:
    path: the .zarr folder to create (must not exist).
    shape, chunks: per axis, in `axes` order.
    dtype: numpy dtype name.
    axes: n2n letters, e.g. 'ZYX'.
    scale: voxel size per axis (1.0 each if None); units: {letter: unit}.
    version: '0.4' (Zarr v2) or '0.5' (Zarr v3).
  """
  zarr = zarr_module()
  zarr_format = 2 if version == '0.4' else 3
  group = zarr.open_group(path, mode='w-', zarr_format=zarr_format)
  multiscales = [{
      'name': name,
      'axes': _ngff_axes(axes, units or {}),
      'datasets': [{'path': '0', 'coordinateTransformations': [
          {'type': 'scale', 'scale': list(scale or [1.0] * len(axes))}]}],
  }]
  if version == '0.4':
    multiscales[0]['version'] = '0.4'
    group.attrs['multiscales'] = multiscales
  else:
    group.attrs['ome'] = {'version': version, 'multiscales': multiscales}
  # Every chunk is written, even one of fill values: a chunk's file then marks it as
  # denoised (and a resumed run sees it), whatever its pixels.
  return group.create_array('0', shape=tuple(shape), chunks=tuple(chunks), dtype=dtype,
                            fill_value=0, config={'write_empty_chunks': True})


def create_like(path, image):
  """create_image with everything of an OmeZarrImage but its pixels."""
  return create_image(path, image.array.shape, image.array.chunks, image.array.dtype.name,
                      image.axes, image.scale, image.units, image.version, image.name)


def describe(image):
  """'TCZYX 2x1x64x2048x2048 uint16, chunks 1x1x32x256x256' for logs and errors."""
  join = lambda values: 'x'.join(str(value) for value in values)
  return (f'{image.axes} {join(image.array.shape)} {image.array.dtype.name}, '
          f'chunks {join(image.array.chunks)}')


def to_json(image):
  """What a run's log or a test compares of an image: axes, shape, chunks, dtype, scale, units."""
  return json.dumps({'axes': image.axes, 'shape': list(image.array.shape),
                     'chunks': list(image.array.chunks), 'dtype': image.array.dtype.name,
                     'scale': list(image.scale), 'units': image.units,
                     'version': image.version}, sort_keys=True)
