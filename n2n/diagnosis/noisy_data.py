"""The noise of a user's files: single noisy images, or scenes of two or more
captures (measured from their first two captures)."""

import numpy as np

from n2n.data import native_images
from n2n.data import rgb_images
from n2n.data import scenes as scenes_lib
from n2n.data import training_arrays
from n2n.diagnosis import noise_statistics

# Two registered captures of one view correlate far above this once the noise
# is averaged down (8x8 block means), even at a few photons per pixel; two
# photographs of different views hardly correlate at all.
SAME_VIEW_CORRELATION = 0.2
VIEW_BLOCK = 8


def _unit_pixels(path, array, white_level):
  """[H, W, C] colour pixels of one page on a 0-1 scale (alpha dropped);
  ValueError naming path for non-finite values."""
  colour, _ = native_images.split_alpha(array)
  level = white_level or scenes_lib.default_white_level(colour.dtype)
  pixels = native_images.to_unit_range(colour, level)
  if not np.all(np.isfinite(pixels)):
    raise ValueError(f'{path} holds NaN or infinite values; diagnose finite pixels only')
  return pixels


def _same_channels(path, image, first):
  if first is not None and image.shape[2] != first[1].shape[2]:
    raise ValueError(f'{path} has {image.shape[2]} channel(s) but {first[0]} has '
                     f'{first[1].shape[2]}: diagnose one kind of image at a time')


def _block_means(image):
  height, width = image.shape[0] // VIEW_BLOCK, image.shape[1] // VIEW_BLOCK
  return image[:height * VIEW_BLOCK, :width * VIEW_BLOCK].reshape(
      height, VIEW_BLOCK, width, VIEW_BLOCK, -1).mean(axis=(1, 3))


def _same_view(paths, pair):
  """ValueError naming both files when two captures are no exposures of one
  view (their 8x8 block means, where noise is averaged down, hardly correlate)."""
  first, second = (_block_means(image).ravel() for image in pair)
  if first.size < 2 or first.std() == 0 or second.std() == 0:
    return
  correlation = float(np.corrcoef(first, second)[0, 1])
  if correlation < SAME_VIEW_CORRELATION:
    raise ValueError(f'{paths[0]} and {paths[1]} look like two different views (correlation '
                     f'{correlation:.2f}): a scene\'s captures are registered exposures of one '
                     'view; without --scenes each file is diagnosed as a single noisy image')


def _file_pages(paths):
  """(path, its first page) of each file, read one at a time."""
  for path in paths:
    try:
      page = native_images.read_pages(path)[0]
    except rgb_images.ImageDecodeError as error:
      raise ValueError(f'{path}: not a readable image ({error})') from None
    yield path, page


def _images(labelled, white_level, counted, dtypes):
  """Each (label, page)'s pixels on a 0-1 scale, checked one at a time; each label
  used is appended to counted, its page's dtype to dtypes."""
  first = None
  for label, page in labelled:
    dtypes.append(page.dtype)
    image = _unit_pixels(label, page, white_level)
    if min(image.shape[:2]) < noise_statistics.PATCH:
      raise ValueError(f'{label} is {image.shape[1]}x{image.shape[0]}: too small to diagnose '
                       f'(under {noise_statistics.PATCH} pixels)')
    _same_channels(label, image, first)
    first = first or (label, image)
    counted.append(label)
    yield image


def diagnose_images(paths, white_level=0.0, max_images=0, seed=0, dtypes=None):
  """The noise of single noisy images, estimated from their flattest patches.

  Args:
    paths: image files (the first page of each), all of one kind of camera.
    white_level: the value that is 1.0; 0: each file's dtype maximum (1.0 for
      float files).
    max_images: use at most this many (0: all).
    seed: seed of the patches drawn from large images.
    dtypes: None, or a list to which each image's dtype is appended (what
      report.Diagnosis.of's pixel_types asks).

  Returns:
    (NoiseProfile, number of images used).

  Raises:
    ValueError: naming a file that is unreadable, too small, not finite or of
      other channels than the first; or no image shows noise.
  """
  paths = list(paths)[:max_images or None]
  if not paths:
    raise ValueError('no image to diagnose')
  return diagnose_pages(_file_pages(paths), white_level, seed, dtypes)


def diagnose_pages(labelled, white_level=0.0, seed=0, dtypes=None):
  """diagnose_images of pages given as (label, [H, W] or [H, W, C] array): a
  caller's arrays, or files' first pages; errors name the label."""
  counted = []
  profile = noise_statistics.estimate_single(
      _images(labelled, white_level, counted, [] if dtypes is None else dtypes), seed)
  return profile, len(counted)


def _file_scenes(root, white_level, max_images):
  """(the labels of its captures, SceneArrays) of each scene of a folder."""
  for scene in scenes_lib.find_scenes(root)[:max_images or None]:
    yield scene.captures, scenes_lib.read_scene(scene, white_level)


def _scene_pairs(scenes, white_level, counted):
  first = None
  for labels, arrays in scenes:
    level = white_level or scenes_lib.default_white_level(arrays.captures.dtype)
    pair = [native_images.to_unit_range(capture, level) for capture in arrays.captures[:2]]
    if not all(np.all(np.isfinite(capture)) for capture in pair):
      raise ValueError(f'{labels[0]} or {labels[1]} holds NaN or infinite '
                       'values; diagnose finite pixels only')
    if min(pair[0].shape[:2]) <= 2 * noise_statistics.MAX_LAG:
      raise ValueError(f'{labels[0]} is {pair[0].shape[1]}x{pair[0].shape[0]}: too small '
                       'to diagnose')
    _same_view(labels[:2], pair)
    _same_channels(labels[0], pair[0], first)
    first = first or (labels[0], pair[0])
    counted.append(arrays.name)
    yield pair


def diagnose_scenes(root, white_level=0.0, max_images=0, seed=0):
  """The noise of a folder of scenes (scenes.find_scenes), measured from the
  first two captures of each.

  Returns:
    (NoiseProfile, number of scenes used).

  Raises:
    ValueError (scenes.SceneError): naming the folder or file at fault.
  """
  return diagnose_scene_arrays(_file_scenes(root, white_level, max_images), white_level, seed)


def diagnose_scene_arrays(scenes, white_level=0.0, seed=0):
  """diagnose_scenes of scenes given as (labels of the captures, scenes.SceneArrays):
  a caller's arrays, or a folder's scenes; errors name the labels."""
  counted = []
  profile = noise_statistics.measure_pairs(_scene_pairs(scenes, white_level, counted), seed)
  return profile, len(counted)


def array_pages(images, argument='images'):
  """(label 'images[i]', array) of a caller's list of [H, W] or [H, W, C] arrays,
  as diagnose_pages takes them.

  Raises:
    ValueError: not a list, or an array of another shape or dtype, naming its index.
  """
  training_arrays.check_list(argument, images)
  return [(label, _checked_page(label, array)) for index, item in enumerate(images)
          for label, array in training_arrays.scene_items(argument, 'noisy', index, item)]


def array_scenes(captures, white_level=0.0, argument='captures'):
  """(labels, scenes.SceneArrays) of a caller's list of tuples of two or more
  captures of one scene ([H, W] or [H, W, C] each, alpha dropped), as
  diagnose_scene_arrays takes them; read and checked one scene at a time.

  Raises:
    ValueError: naming the argument and index at fault.
  """
  training_arrays.check_list(argument, captures)
  for index, item in enumerate(captures):
    labelled = [(label, native_images.split_alpha(_checked_page(label, array))[0])
                for label, array in training_arrays.scene_items(argument, 'captures', index,
                                                                item)]
    yield ([label for label, _ in labelled],
           scenes_lib.scene_arrays(f'{argument}[{index}]', labelled, white_level,
                                   white_level_flag='white_level'))


def _checked_page(label, array):
  page = np.asarray(array)
  if page.ndim not in (2, 3) or page.dtype.kind not in 'buif':
    raise ValueError(f'{label} is {page.dtype} of shape {page.shape}: diagnose takes images '
                     '[H, W] or [H, W, C] of integer, float or bool pixels')
  return page
