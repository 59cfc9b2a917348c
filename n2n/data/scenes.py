"""Scenes of real noisy captures: folders of registered exposures of one view.

Every folder that directly holds image files is a scene; each image in it is a
capture of the same view (same size, channels and dtype), except a file named
`reference.*`, the scene's clean (or many-frame average) reference, which is
never a training input. Noise2Noise needs two captures per scene and no clean
image; a reference, where there is one, allows Noise2Clean training and PSNR.

Pixels keep their native dtype (uint8, uint16, float32) and channels (1 or 3)
here. One linear scale per dataset maps them to [0, 1]: `white_level`, by
default the integer dtype's maximum (1.0 for float data).
"""

import dataclasses
import os

import numpy as np
import tensorflow as tf

from n2n.data import file_lists
from n2n.data import native_images
from n2n.data import rgb_images
from n2n.data import volumes

IMAGE_SUFFIXES = ('.png', '.tif', '.tiff', '.jpg', '.jpeg', '.bmp', '.webp', '.gif')
REFERENCE_STEM = 'reference'
DTYPES = ('uint8', 'uint16', 'float32')


class SceneError(ValueError):
  """A scene that breaks the rules; the message names the file or folder."""


@dataclasses.dataclass(frozen=True)
class Scene:
  """One scene's files.

  Attributes:
    name: the folder's path below the dataset root ('.' for the root itself;
      for a noisy-image dataset, the file's path).
    captures: sorted paths of the noisy captures (two or more; one in a
      noisy-image dataset).
    reference: path of reference.*, or None.
  """
  name: str
  captures: tuple
  reference: str = None


@dataclasses.dataclass(frozen=True)
class SceneArrays:
  """One scene's pixels, native dtype.

  Attributes:
    name: as Scene.name.
    captures: [N, H, W, C] uint8, uint16 or float32 (C 1 or 3), N >= 2 (1 for
      a noisy image); [N, D, H, W, C] for stacks (volumes, or movies with
      time as D).
    reference: [H, W, C] (or [D, H, W, C]) of the same dtype, or None.
    brightest: the largest value of the captures.
  """
  name: str
  captures: np.ndarray
  reference: np.ndarray = None
  brightest: float = 0.0

  @property
  def dtype(self):
    return self.captures.dtype.name


def is_reference(path):
  """True for reference.png, reference.tif, ...: a scene's clean reference."""
  return os.path.splitext(os.path.basename(path))[0].lower() == REFERENCE_STEM


def find_scenes(root):
  """Every scene below root, sorted by name.

  Args:
    root: a folder; it and every non-hidden folder below it that directly
      holds image files is a scene.

  Returns:
    list of Scene.

  Raises:
    SceneError: root is not a folder or holds no scene, or a folder holds one
      capture (with or without a reference).
  """
  if not tf.io.gfile.isdir(root):
    raise SceneError(f'{root!r} is not a folder')
  scenes = []
  for folder, subfolders, names in tf.io.gfile.walk(root):
    subfolders[:] = sorted(name for name in subfolders if not name.startswith('.'))
    images = sorted(os.path.join(folder, name) for name in names
                    if not name.startswith('.')
                    and os.path.splitext(name)[1].lower() in IMAGE_SUFFIXES)
    if not images:
      continue
    references = [path for path in images if is_reference(path)]
    captures = tuple(path for path in images if not is_reference(path))
    if len(references) > 1:
      raise SceneError(f'{folder} holds {len(references)} reference files; a scene has at most '
                       'one')
    if len(captures) < 2:
      what = 'only a reference' if not captures else f'one capture ({captures[0]})'
      raise SceneError(f'{folder} holds {what}: a scene needs two or more noisy captures of '
                       'the same view')
    scenes.append(Scene(os.path.relpath(folder, root), captures,
                        references[0] if references else None))
  if not scenes:
    raise SceneError(f'{root!r} holds no scene (a folder with two or more captures)')
  return sorted(scenes, key=lambda scene: scene.name)


def find_noisy_images(root):
  """Every image file below root as a scene of its own with one capture and no
  reference (datasets/make_tfrecords.py --noisy_images), sorted by name.

  Raises:
    SceneError: root is not a folder or holds no image file.
  """
  if not tf.io.gfile.isdir(root):
    raise SceneError(f'{root!r} is not a folder')
  found = [Scene(os.path.relpath(path, root), (path,))
           for path in file_lists.files_below(root)
           if os.path.splitext(path)[1].lower() in IMAGE_SUFFIXES]
  if not found:
    raise SceneError(f'{root!r} holds no image file')
  return found


def default_white_level(dtype):
  """The value that maps to 1.0 unless told otherwise: integer max, 1.0 for floats."""
  dtype = np.dtype(dtype)
  return float(np.iinfo(dtype).max) if np.issubdtype(dtype, np.integer) else 1.0


def _read_stack(path, axes):
  """[D, H, W, C] of a TIFF stack: a volume (Z) or a movie (T, its frames as D)."""
  try:
    volume = volumes.read_volume(path, axes)
  except volumes.VolumeError as error:
    # The cause stays attached: a caller without --axes words its own advice.
    raise SceneError(str(error)) from error
  frames, depth = volume.pixels.shape[:2]
  if frames == depth == 1:
    return volume.pixels[0, 0]
  if frames > 1 and depth > 1:
    raise SceneError(f'{path} has {frames} time points of {depth} planes ({volume.axes}); '
                     'store each time point as its own file (a volume), or one plane over time '
                     '(a movie)')
  return volume.pixels[0] if frames == 1 else volume.pixels[:, 0]


def _read_capture(path, axes=''):
  """[H, W, C] native dtype (alpha dropped), or [D, H, W, C] for a TIFF stack;
  SceneError naming the file otherwise.

  Args:
    axes: a stack's axes where its file does not say them (--axes); '' else.
  """
  if native_images.family_of(path) == 'tiff' and (axes or volumes.page_count(path) > 1):
    colour = _read_stack(path, axes)
  else:
    try:
      pages = native_images.read_pages(path)
    except rgb_images.ImageDecodeError as error:
      raise SceneError(f'{path}: not a readable image ({error})') from None
    if len(pages) != 1:
      raise SceneError(f'{path} has {len(pages)} pages; store each capture as its own file')
    colour, _ = native_images.split_alpha(pages[0])
  if colour.dtype.name not in DTYPES:
    if colour.dtype == np.float64:
      colour = colour.astype(np.float32)
    else:
      raise SceneError(f'{path} has pixels of type {colour.dtype.name}; scenes take '
                       f'{", ".join(DTYPES)}')
  return colour


def read_scene(scene, white_level=0.0, axes=''):
  """Reads and checks one scene.

  Args:
    scene: Scene.
    white_level: values above it are an error; 0: the dtype's default.
    axes: the captures' axes where their TIFF stacks do not say them (--axes).

  Returns:
    SceneArrays.

  Raises:
    SceneError: naming the file whose size, channels or dtype differ from the
      scene's first capture, or whose values exceed the white level.
  """
  paths = list(scene.captures) + ([scene.reference] if scene.reference else [])
  # A generator: each file is checked against the first as it is read.
  return scene_arrays(scene.name, ((path, _read_capture(path, axes)) for path in paths),
                      white_level, has_reference=scene.reference is not None)


def scene_arrays(name, labelled, white_level=0.0, has_reference=False,
                 white_level_flag='--white_level'):
  """Checks one scene's pixels, from files or a caller's arrays.

  Args:
    name: the scene's name.
    labelled: iterable of (label, array): the captures, then the reference if
      has_reference; each array [H, W, C] (or [D, H, W, C]) of a DTYPES
      dtype, its label (a path, or an argument such as 'captures[2][1]') named
      in errors.
    white_level: values above it are an error; 0: the dtype's default.
    white_level_flag: how errors name the white level's setting.

  Returns:
    SceneArrays (a single capture's captures is a view of it, not a copy).

  Raises:
    SceneError: naming the label whose size, channels or dtype differ from
      the first capture's, or whose values exceed the white level.
  """
  labels, arrays = [], []
  for label, array in labelled:
    if arrays:
      first, first_label = arrays[0], labels[0]
      if array.shape != first.shape:
        raise SceneError(f'{label} is {_describe(array)} but {first_label} is '
                         f'{_describe(first)}; the captures of a scene must be registered images '
                         'of one size and channel count')
      if array.dtype != first.dtype:
        raise SceneError(f'{label} is {array.dtype.name} but {first_label} is '
                         f'{first.dtype.name}; a scene mixes bit depths')
    labels.append(label)
    arrays.append(array)
  resolved_white_level = white_level or default_white_level(arrays[0].dtype)
  tops = [float(array.max()) for array in arrays]
  for label, top in zip(labels, tops):
    if top > resolved_white_level:
      flag = (f'{white_level_flag}={resolved_white_level:g}' if white_level
              else f'the default white level {resolved_white_level:g}')
      raise SceneError(f'{label} holds values up to {top:g}, above {flag}; pass the sensor\'s '
                       'white level')
  count = len(arrays) - bool(has_reference)
  captures = arrays[0][np.newaxis] if count == 1 else np.stack(arrays[:count])
  return SceneArrays(name, captures, arrays[-1] if has_reference else None, max(tops[:count]))


def _describe(array):
  height, width, channels = array.shape[-3:]
  planes = f' x {array.shape[0]} planes' if array.ndim == 4 else ''
  return f'{width}x{height}{planes} with {channels} channel(s)'


def quantization_step(dtype, white_level):
  """The [0, 1]-scale step between representable values of the data: 1/white_level
  for integer data, 0 (none) for float data."""
  return 1.0 / white_level if np.issubdtype(np.dtype(dtype), np.integer) else 0.0
