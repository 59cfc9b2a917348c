"""Training and validation data given as numpy arrays (n2n.train's noisy=,
captures=, clean= and val=): checked, laid out as the scenes or images the
dataset writers take, and fingerprinted (array_records.py writes them once
into a folder of TFRecords that training reads as it reads any dataset).

What each argument becomes, as datasets/make_tfrecords.py would write files:
  noisy=[a, b]               one noisy capture per scene (--noisy_images)
  captures=[(a1, a2), ...]   two or more registered captures per scene (--scenes)
  clean=[a, b]               clean images (8-bit RGB, as clean image files), or
                             clean stacks (--clean_stacks) for a 3D run
Arrays are laid out as `axes` says (denoise.py's --axes letters: YX, YXC,
ZYX, TYX, TZYX, ...); without axes [H, W] and [H, W, 1 or 3] are images. A
stack trains the 3D network, or with spatial_dims=2 its planes are written
as images (make_tfrecords.py --planes). A scene too large for one record
(MAX_RECORD_BYTES) is written as blocks in y and x, each a scene of its own.
"""

import dataclasses
import hashlib
import json

import numpy as np

from n2n.data import scene_writer
from n2n.data import volumes

ARGUMENTS = ('noisy', 'captures', 'clean')
# The most two captures of one record may take: larger scenes are written as blocks in y
# and x. Below scene_writer's limit, because writing a record holds a few copies of it
# (the encoded tensor, the message) and training decodes whole records: with a 2 GiB
# stack in blocks of at most 128 MiB, Python's allocations peaked at 1.2 GiB while it was
# written and trained on (docs/bench/arrays_vs_records.json).
MAX_RECORD_BYTES = 1 << 28
_DTYPES = ('uint8', 'uint16', 'float32', 'float64')
_CHANNELS = (1, 3)


@dataclasses.dataclass(frozen=True)
class ArrayScene:
  """One scene of a caller's arrays.

  Attributes:
    name: its label, e.g. 'captures[2]', 'noisy[0] t3', 'noisy[1] y0 x1'.
    labels: each capture's label, e.g. ('captures[2][0]', 'captures[2][1]').
    captures: tuple of [H, W, C] or [D, H, W, C] views of the caller's arrays.
  """
  name: str
  labels: tuple
  captures: tuple


@dataclasses.dataclass(frozen=True)
class ArrayData:
  """A checked set of arrays, ready to write.

  Attributes:
    argument: 'noisy', 'captures', 'clean' (or 'val', validation of that kind).
    kind: 'noisy', 'captures' or 'clean': what the arrays are.
    scenes: list of ArrayScene.
    stacks: the arrays are stacks (volumes, or movies with time as depth).
    planes: stacks written plane by plane as images, for a 2D network.
    white_level: the value that maps to 1.0 (0 for float arrays: 1.0).
    fingerprint: hex digest of the arrays (shapes, dtypes, bytes) and of how
      they are written (kind, axes, white level, planes).
    max_record_bytes: the most one record of them holds: two captures of a
      block fit, and the writer groups more captures of a scene within it.
  """
  argument: str
  kind: str
  scenes: list
  stacks: bool
  planes: bool
  white_level: float
  fingerprint: str
  max_record_bytes: int = MAX_RECORD_BYTES

  @property
  def spatial_dims(self):
    """What the records hold: 3 for stacks, 2 for images (and for planes)."""
    return 3 if self.stacks and not self.planes else 2


def check_arrays(argument, kind, items, axes='', white_level=0.0, min_size=0, min_depth=0,
                 network_dims=0, max_record_bytes=MAX_RECORD_BYTES):
  """Checks a caller's arrays and lays them out as scenes.

  Args:
    argument: the argument's name, for errors ('noisy', 'captures', 'clean', 'val').
    kind: 'noisy', 'captures' or 'clean'.
    items: for noisy and clean a list of arrays, one per scene; for captures a
      list of sequences of two or more arrays, one sequence per scene.
    axes: the arrays' axes in their own order ('' : [H, W] or [H, W, C]).
    white_level: the value that maps to 1.0; 0: the dtype's maximum (n2n.train
      gives integer arrays default_white_level instead).
    min_size: the training crop's side (crop_size); smaller arrays are refused.
    min_depth: the planes a stack's training crop spans; shallower stacks are refused.
    network_dims: the run's --spatial_dims (0: as the data; 2 writes stacks' planes).
    max_record_bytes: the most one record holds: scenes of which two captures
      pass it are cut into blocks, and array_records writes their captures in
      groups within it.

  Returns:
    ArrayData.

  Raises:
    ValueError: one line naming the argument, the array's index and what is
      wrong (captures of one scene of other shapes among it).
  """
  check_list(argument, items)
  digest = hashlib.sha256(json.dumps([kind, axes, float(white_level)]).encode())
  laid_out, first = [], None
  for index, item in enumerate(items):
    arrays = scene_items(argument, kind, index, item)
    canonical = []
    for label, array in arrays:
      array = _checked_array(label, array, first)
      pixels = volumes.to_canonical(array, _axes_of(label, array, axes))
      if first is not None and pixels.shape[-1] != first[2]:
        raise ValueError(f'{label} has {pixels.shape[-1]} channel(s) but {first[0]} has '
                         f'{first[2]}; training arrays share one channel count')
      first = first or (label, array, pixels.shape[-1])
      _hash_array(digest, array)
      # Frames and planes here: a scene is cut into one unit per frame (_units)
      # before the writer compares the captures' images.
      if canonical and pixels.shape[:2] != canonical[0].shape[:2]:
        raise ValueError(f'{label} has shape {array.shape} but {arrays[0][0]} has '
                         f'{np.shape(arrays[0][1])} (axes={axes!r}); the captures of one '
                         'scene share their frames and planes')
      canonical.append(pixels)
    laid_out.append((f'{argument}[{index}]', [label for label, _ in arrays], canonical))
  stacks = {_is_stack(captures[0]) for _, _, captures in laid_out}
  if len(stacks) > 1:
    raise ValueError(f'{argument}= mixes images and stacks; give one kind (axes={axes!r})')
  stacks = stacks.pop()
  if network_dims == 3 and not stacks:
    raise ValueError(f'{argument}[0] is an image (axes {axes or "YX"!r}) but spatial_dims=3 '
                     "trains on stacks: give stacks with axes such as 'ZYX', or spatial_dims=2")
  planes = stacks and network_dims == 2
  digest.update(str(planes).encode())
  scenes = [scene for name, labels, captures in laid_out
            for scene in _units(name, labels, captures, stacks)]
  for scene in scenes:
    _check_size(scene, min_size, 0 if planes else min_depth, axes)
  scenes = [block for scene in scenes
            for block in _blocks(scene, planes, min_size, max_record_bytes)]
  if kind == 'clean' and planes:
    # Clean planes are written as images (dataset_writer), each a scene of one plane.
    scenes = [_plane(scene, plane) for scene in scenes
              for plane in range(scene.captures[0].shape[0])]
  return ArrayData(argument, kind, scenes, stacks, planes, white_level, digest.hexdigest(),
                   max_record_bytes)


def default_white_level(kind, items):
  """The white level integer arrays take where none is given: their brightest
  value rounded up to a whole number of bits (2**bits - 1: 255 for 8-bit data
  that reach 255, 511 for microscopy that reaches 400, 4095 for 12-bit
  frames), so the data fill at least half the network's range and validation
  or held-out arrays a little brighter than the training ones still fit.
  Taken from the training arrays (items, of kind) alone: the same arrays give
  the same white level, and the same fingerprint, with or without val=. 0 (the
  dtype's maximum: 1.0 for floats) for float arrays, and for arrays not yet
  checked (check_arrays then names what is wrong).

  A white level of the dtype's maximum leaves 16-bit microscopy that uses a
  few hundred levels at a few thousandths of the network's range: 300 steps of
  3D pairs from the phantom's stacks lost 18.7 dB there and gained 13.2 at
  their brightest value (bench/front_door.py's stacks, at 3ac59c9 with this
  rule's first form by hand; docs/bench/front_door.json measures the rule).
  """
  peak = 0
  if not isinstance(items, (list, tuple)):
    return 0.0
  for item in items:
    arrays = item if kind == 'captures' and isinstance(item, (list, tuple)) else [item]
    for array in arrays:
      if not isinstance(array, np.ndarray) or array.dtype.kind not in 'ui' or not array.size:
        return 0.0
      peak = max(peak, int(array.max()))
  return float((1 << peak.bit_length()) - 1) if peak > 0 else 0.0


def check_list(argument, items):
  """Raises ValueError unless items is a non-empty list (or tuple) of scenes."""
  if isinstance(items, np.ndarray) or not isinstance(items, (list, tuple)):
    raise ValueError(f'{argument}= takes a list of arrays (one per scene), not '
                     f'{type(items).__name__}; wrap one array as [array]')
  if not items:
    raise ValueError(f'{argument}= is empty')


def scene_items(argument, kind, index, item):
  """[(label, array)] of one scene as given: item itself, or for kind
  'captures' each of its two or more captures (ValueError otherwise)."""
  if kind != 'captures':
    return [(f'{argument}[{index}]', item)]
  if isinstance(item, np.ndarray) or not isinstance(item, (list, tuple)):
    raise ValueError(f'{argument}[{index}] is {type(item).__name__}; {argument}= takes a list '
                     'of tuples of two or more captures of one scene, e.g. [(a1, a2), (b1, b2)]')
  if len(item) < 2:
    raise ValueError(f'{argument}[{index}] holds {len(item)} capture; a scene needs two or more '
                     '(single noisy images: noisy= of n2n.train, images= of n2n.diagnose)')
  return [(f'{argument}[{index}][{number}]', array) for number, array in enumerate(item)]


def _checked_array(label, array, first):
  """array as numpy, its dtype, values and (against the first array) dtype checked."""
  array = np.asarray(array)
  if array.dtype.name not in _DTYPES:
    raise ValueError(f'{label} is {array.dtype.name}; training arrays are '
                     f'{", ".join(_DTYPES)}')
  if first is not None and array.dtype != first[1].dtype:
    raise ValueError(f'{label} is {array.dtype.name} but {first[0]} is {first[1].dtype.name}; '
                     'training arrays share one dtype')
  if array.dtype.kind == 'f' and not _all_finite(array):
    raise ValueError(f'{label} holds NaN or infinite values; training arrays must be finite')
  return array


def _all_finite(array):
  """np.isfinite over array, a plane at a time (no full-size boolean copy)."""
  return all(np.isfinite(part).all() for part in (array if array.ndim > 2 else [array]))


def _axes_of(label, array, axes):
  """axes checked against array; without axes, YX or YXC for an image."""
  if not axes:
    if array.ndim == 2 or (array.ndim == 3 and array.shape[2] in _CHANNELS):
      axes = 'YX' if array.ndim == 2 else 'YXC'
    else:
      raise ValueError(f'{label} has shape {array.shape}: give its axes, e.g. '
                       f"axes='{'ZYX' if array.ndim == 3 else 'TZYX'}' (an image is [H, W] or "
                       '[H, W, 1 or 3])')
  volumes.check_axes(axes, array.ndim, label)
  channels = array.shape[axes.replace('S', 'C').index('C')] if set('CS') & set(axes) else 1
  if channels not in _CHANNELS:
    raise ValueError(f'{label} has {channels} channels (axes={axes!r}); training takes 1 '
                     '(grey) or 3 (RGB)')
  return axes


def _hash_array(digest, array):
  """Adds array's shape, dtype and bytes to digest, a plane at a time."""
  digest.update(f'{array.shape} {array.dtype.str}'.encode())
  for part in (array if array.ndim > 2 else [array]):
    digest.update(np.ascontiguousarray(part).data)


def _is_stack(pixels):
  """[T, Z, Y, X, C] holds more than one plane."""
  return pixels.shape[0] > 1 or pixels.shape[1] > 1


def _units(name, labels, captures, stacks):
  """ArrayScenes of one given scene ([T, Z, Y, X, C] captures): an image, a
  stack (a movie's frames as depth), or one stack per time point of a z-stack."""
  if not stacks:
    return [ArrayScene(name, tuple(labels), tuple(pixels[0, 0] for pixels in captures))]
  frames, depth = captures[0].shape[:2]
  if frames > 1 and depth > 1:
    return [ArrayScene(f'{name} t{frame}', tuple(f'{label} t{frame}' for label in labels),
                       tuple(pixels[frame] for pixels in captures)) for frame in range(frames)]
  return [ArrayScene(name, tuple(labels), tuple(volumes.volumes_of(pixels)[0]
                                                for pixels in captures))]


def _check_size(scene, min_size, min_depth, axes):
  """ValueError when a scene cannot give one training crop."""
  pixels = scene.captures[0]
  height, width = pixels.shape[-3:-1]
  if min(height, width) < min_size:
    raise ValueError(f'{scene.labels[0]} is {width}x{height} (width x height) in y and x: '
                     f'smaller than crop_size={min_size}')
  if pixels.ndim == 4 and pixels.shape[0] < min_depth:
    raise ValueError(f'{scene.labels[0]} has {pixels.shape[0]} planes in depth (axes={axes!r}): '
                     f'fewer than the {min_depth} of a training crop (crop_depth)')


def _blocks(scene, planes, min_size, max_record_bytes):
  """The scene, or, where two captures (of one plane, with planes) pass what a
  record holds, blocks of it in y and x as scenes of their own."""
  pixels = scene.captures[0]
  parts = pixels.shape[0] if planes else 1
  least_record = 2 * pixels.nbytes // parts
  if least_record <= max_record_bytes:
    return [scene]
  height, width = pixels.shape[-3:-1]
  rows = columns = 1
  while least_record / (rows * columns) > max_record_bytes:
    if height / rows >= width / columns:
      rows += 1
    else:
      columns += 1
  if min(height // rows, width // columns) < max(min_size, 1):
    raise ValueError(f'{scene.labels[0]} is too large for one record and its blocks of '
                     f'{width // columns}x{height // rows} would be smaller than '
                     f'crop_size={min_size}')
  y_edges = np.linspace(0, height, rows + 1).astype(int)
  x_edges = np.linspace(0, width, columns + 1).astype(int)
  return [ArrayScene(f'{scene.name} y{row} x{column}',
                     tuple(f'{label} y{row} x{column}' for label in scene.labels),
                     tuple(capture[..., y_edges[row]:y_edges[row + 1],
                                   x_edges[column]:x_edges[column + 1], :]
                           for capture in scene.captures))
          for row in range(rows) for column in range(columns)]


def _plane(scene, plane):
  """ArrayScene of one plane of a stack's scene, named as scene_writer names planes."""
  return ArrayScene(scene_writer.plane_name(scene.name, plane),
                    tuple(scene_writer.plane_name(label, plane) for label in scene.labels),
                    tuple(capture[plane] for capture in scene.captures))
