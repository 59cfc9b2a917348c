"""The noise of a user's files: single noisy images, or scenes of two or more
captures (measured from their first two captures)."""

import numpy as np

from n2n.data import native_images
from n2n.data import rgb_images
from n2n.data import scenes as scenes_lib
from n2n.diagnosis import noise_statistics


def _unit_pixels(path, array, white_level):
  """[H, W, C] colour pixels of one page on a 0-1 scale (alpha dropped)."""
  colour, _ = native_images.split_alpha(array)
  level = white_level or scenes_lib.default_white_level(colour.dtype)
  return native_images.to_unit_range(colour, level)


def _same_channels(path, image, first):
  if first is not None and image.shape[2] != first[1].shape[2]:
    raise ValueError(f'{path} has {image.shape[2]} channel(s) but {first[0]} has '
                     f'{first[1].shape[2]}: diagnose one kind of image at a time')


# Two registered captures of one view correlate far above this even when noise
# is as strong as the scene's contrast; two photographs of different views
# hardly correlate at all.
SAME_VIEW_CORRELATION = 0.2


def _same_view(paths, pair):
  """ValueError naming both files when two captures are no exposures of one view."""
  first, second = (image.ravel().astype(np.float64) for image in pair)
  if first.std() == 0 or second.std() == 0:
    return
  correlation = float(np.corrcoef(first, second)[0, 1])
  if correlation < SAME_VIEW_CORRELATION:
    raise ValueError(f'{paths[0]} and {paths[1]} look like two different views (correlation '
                     f'{correlation:.2f}): a scene\'s captures are registered exposures of one '
                     'view; without --scenes each file is diagnosed as a single noisy image')


def diagnose_images(paths, white_level=0.0, max_images=0, seed=0):
  """The noise of single noisy images, estimated from their flattest patches.

  Args:
    paths: image files (the first page of each), all of one kind of camera.
    white_level: the value that is 1.0; 0: each file's dtype maximum (1.0 for
      float files).
    max_images: use at most this many (0: all).
    seed: seed of the patches drawn from large images.

  Returns:
    (NoiseProfile, number of images used).

  Raises:
    ValueError: naming a file that is unreadable, too small or of other
      channels than the first.
  """
  images, first = [], None
  for path in paths[:max_images or None]:
    try:
      page = native_images.read_pages(path)[0]
    except rgb_images.ImageDecodeError as error:
      raise ValueError(f'{path}: not a readable image ({error})') from None
    image = _unit_pixels(path, page, white_level)
    if min(image.shape[:2]) < noise_statistics.PATCH:
      raise ValueError(f'{path} is {image.shape[1]}x{image.shape[0]}: too small to diagnose '
                       f'(under {noise_statistics.PATCH} pixels)')
    _same_channels(path, image, first)
    first = first or (path, image)
    images.append(image)
  if not images:
    raise ValueError('no image to diagnose')
  return noise_statistics.estimate_single(images, seed), len(images)


def diagnose_scenes(root, white_level=0.0, max_images=0, seed=0):
  """The noise of a folder of scenes (scenes.find_scenes), measured from the
  first two captures of each.

  Returns:
    (NoiseProfile, number of scenes used).

  Raises:
    ValueError (scenes.SceneError): naming the folder or file at fault.
  """
  pairs, first = [], None
  for scene in scenes_lib.find_scenes(root)[:max_images or None]:
    arrays = scenes_lib.read_scene(scene, white_level)
    level = white_level or scenes_lib.default_white_level(arrays.captures.dtype)
    pair = [native_images.to_unit_range(capture, level) for capture in arrays.captures[:2]]
    _same_view(scene.captures[:2], pair)
    _same_channels(scene.captures[0], pair[0], first)
    first = first or (scene.captures[0], pair[0])
    pairs.append(pair)
  return noise_statistics.measure_pairs(pairs, seed), len(pairs)
