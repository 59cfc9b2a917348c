"""n2n.diagnose's library: the noise of numpy arrays, single noisy images or
captures of scenes, diagnosed as diagnose.py diagnoses files."""

from n2n.diagnosis import noisy_data
from n2n.diagnosis import report


def diagnose_arrays(images=None, white_level=0.0, captures=None, max_images=0):
  """report.Diagnosis of images (single noisy images, [H, W] or [H, W, C]
  arrays: from their flattest patches) or of captures (tuples of two or more
  registered captures of one scene: from the first two); at most max_images
  images or scenes (0: all). white_level: the value that is 1.0 (0: the
  dtype's maximum, 1.0 for floats).

  Raises:
    ValueError: neither or both of images and captures, or an array at fault
      (naming the argument and its index).
  """
  if (images is None) == (captures is None):
    raise ValueError('n2n.diagnose takes images= (single noisy images) or captures= (two or '
                     'more captures of each scene), one of them')
  dtypes = []
  if images is not None:
    pages = noisy_data.array_pages(images)[:max_images or None]
    profile, count = noisy_data.diagnose_pages(pages, white_level, dtypes=dtypes)
  else:
    scenes = noisy_data.array_scenes(captures, white_level)
    profile, count = noisy_data.diagnose_scene_arrays(
        (scene for index, scene in enumerate(scenes) if not max_images or index < max_images),
        white_level)
  return report.Diagnosis.of(profile, count, white_level,
                            report.pixel_types_of(dtypes))


