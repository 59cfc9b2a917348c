"""The data an evaluation scores on, in the run's units: clean images for
synthetic noise, scenes of noisy captures (with or without references) for
--noise=none. Training's periodic evaluation, validate.py and the benchmarks
load it here, so all score the same pixels.
"""

import dataclasses
import os

from absl import logging
import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import file_lists
from n2n.data import input_pipeline
from n2n.data import normalization
from n2n.data import rgb_images
from n2n.data import scenes as scenes_lib
from n2n.data import tfrecord
from n2n.data import volumes
from n2n.methods import registry as methods_registry


def load_eval_images(path, channels=3, max_images=0, flag_name='val_data'):
  """Loads evaluation images from a folder (recursive), a TFRecord glob, or a
  dataset folder of TFRecords.

  Files that are not readable images are skipped with a warning.

  Args:
    path: folder of images, or TFRecord glob(s).
    channels: 3 for RGB, 1 for grayscale (luma).
    max_images: keep at most this many (0: all).
    flag_name: named in error messages.

  Returns:
    list of (name, [H, W, channels] uint8) in a fixed (sorted) order.

  Raises:
    ValueError: no usable image found.
  """
  images = []
  if tf.io.gfile.isdir(path) and not file_lists.is_record_folder(path):
    for file_path in file_lists.files_below(path):
      with tf.io.gfile.GFile(file_path, 'rb') as image_file:
        data = image_file.read()
      try:
        image = rgb_images.decode_image(data)
      except rgb_images.ImageDecodeError as error:
        logging.warning('Skipping %s: %s', file_path, error)
        continue
      images.append((os.path.relpath(file_path, path),
                     rgb_images.convert_channels(image, channels)))
      if max_images and len(images) >= max_images:
        break
  else:
    for record in tf.data.TFRecordDataset(file_lists.record_files(path, flag_name)):
      parsed = tfrecord.parse_image(record)
      images.append((parsed['name'].numpy().decode('utf-8') or f'record{len(images):05d}',
                     rgb_images.convert_channels(parsed['image'].numpy(), channels)))
      if max_images and len(images) >= max_images:
        break
  if not images:
    raise ValueError(f'--{flag_name}: no readable image in {path!r}')
  return images


@dataclasses.dataclass(frozen=True)
class EvalScene:
  """A validation scene, on the network's scale: 1.0 at the training data's
  white level, or the first capture's percentiles mapped to 0 and 1
  (--normalization=percentile; its PSNR is then relative to that range).

  Attributes:
    name: the scene folder below the validation folder.
    first: [H, W, C] float32, the first capture (what is denoised); [D, H, W, C]
      for a 3D run's stacks, as are second and reference.
    second: [H, W, C] float32, the second capture (the noisy target); None for
      a held-out noisy image on its own (load_eval_noisy_images).
    reference: [H, W, C] float32 or None.
    step: quantisation step of the data (1/white_level; 0 for float data).
  """
  name: str
  first: np.ndarray
  second: np.ndarray
  reference: np.ndarray
  step: float


def load_eval_scenes(path, run_config, max_scenes=0, flag_name='val_data'):
  """Loads a folder of validation scenes in the training data's units.

  Args:
    path: folder of scenes (n2n/data/scenes.py).
    run_config: the run's TrainConfig (data.dtype, data.white_level, data.channels
      resolved from its data).
    max_scenes: keep at most this many (0: all).

  Returns:
    list of EvalScene.

  Raises:
    ValueError: naming the flag, scene or file at fault.
  """
  return _as_eval_scenes(_find(scenes_lib.find_scenes, path, flag_name), run_config,
                         max_scenes, flag_name)


def _find(finder, path, flag_name):
  """finder(path) (scenes_lib.find_scenes or find_noisy_images), its error naming the flag."""
  try:
    return finder(path)
  except scenes_lib.SceneError as error:
    raise ValueError(f'--{flag_name}: {error}') from None


def _as_eval_scenes(found, run_config, max_count, flag_name):
  """Reads and checks scenes (or single noisy images) into EvalScenes: the
  first capture, the second where there is one, the reference where there is one."""
  return [_as_eval_scene(scene.name, scene.captures[0],
                         _read_scene(scene, run_config, flag_name), run_config, flag_name)
          for scene in found[:max_count or None]]


def _read_scene(scene, run_config, flag_name):
  """scenes.read_scene in the run's white level, its errors naming the flag."""
  try:
    return scenes_lib.read_scene(scene, run_config.data.white_level)
  except scenes_lib.SceneError as error:
    if isinstance(error.__cause__, volumes.UnknownAxesError):
      # train.py and validate.py take no --axes: the stacks must say them.
      raise ValueError(f'--{flag_name}: {error.__cause__.path} does not say its axes; '
                       'validation stacks must (save them as ImageJ or OME-TIFF, e.g. '
                       'from Fiji, or with tifffile imwrite(..., imagej=True, '
                       'metadata={"axes": "ZYX"}))') from None
    raise ValueError(f'--{flag_name}: {error}') from None


def _as_eval_scene(name, label, arrays, run_config, flag_name):
  """EvalScene of one scene's SceneArrays (label: its first capture, for errors)."""
  volume_run = config_lib.model_spatial_dims(run_config) == 3
  if (arrays.captures.ndim == 5) != volume_run:
    held = 'a stack' if arrays.captures.ndim == 5 else 'a 2D image'
    raise ValueError(f'--{flag_name}: {label} is {held} but the run is '
                     f'{"3D" if volume_run else "2D"}; score it on '
                     f'{"stacks" if volume_run else "images"}')
  if arrays.dtype != run_config.data.dtype:
    raise ValueError(f'--{flag_name}: {label} is {arrays.dtype} but the run '
                     f'trained on {run_config.data.dtype} data')
  # Every image of a scene on the scale of the capture that is denoised, as
  # denoise.py maps it (by its own percentiles with --normalization=percentile).
  pixel_map = normalization.image_map(arrays.captures[0], normalization.rule_of(run_config),
                                  run_config.data.white_level)
  convert = lambda array: rgb_images.convert_channels(normalization.normalize(array, pixel_map),
                                                      run_config.model.channels)
  return EvalScene(
      name, convert(arrays.captures[0]),
      convert(arrays.captures[1]) if len(arrays.captures) > 1 else None,
      convert(arrays.reference) if arrays.reference is not None else None,
      scenes_lib.quantization_step(arrays.dtype, pixel_map.scale))


def load_eval_records(path, run_config, max_scenes=0, flag_name='val_data'):
  """Loads validation scenes (or single noisy images) from a dataset folder of
  scene TFRecords (the dataset writers', e.g. n2n.train's val= arrays), as
  load_eval_scenes loads folders of files.

  Raises:
    ValueError: naming the flag: no manifest, or records the run cannot score.
  """
  files = file_lists.record_files(path, flag_name)
  manifests = input_pipeline.read_manifests(files)
  if not manifests or manifests[0].get('kind') not in ('scenes', 'noisy_images'):
    raise ValueError(f'--{flag_name}: {path!r} holds no scene records with a manifest.json '
                     '(datasets/make_tfrecords.py --scenes or --noisy_images writes them)')
  manifest = manifests[0]
  if (manifest['kind'] == 'noisy_images'
      and config_lib.model_spatial_dims(run_config) == 3):
    raise ValueError(f'--{flag_name}: {path!r} holds single noisy stacks, which a 3D run is '
                     'not scored on yet; give it scenes of two or more captures of one stack')
  dtype, channels = tf.as_dtype(manifest['dtype']), manifest['channels']
  loaded = []
  for record in tf.data.TFRecordDataset(files):
    parsed = tfrecord.parse_scene(record)
    decode = tfrecord.decode_volume if int(parsed['depth']) else tfrecord.decode_pixels
    pixels = [decode(serialized, dtype, channels).numpy()
              for serialized in list(parsed['captures']) + list(parsed['reference'])]
    count = len(parsed['captures'])
    name = parsed['name'].numpy().decode('utf-8')
    arrays = scenes_lib.SceneArrays(name, np.stack(pixels[:count]),
                                    pixels[count] if len(pixels) > count else None)
    loaded.append(_as_eval_scene(name, name, arrays, run_config, flag_name))
    if max_scenes and len(loaded) >= max_scenes:
      break
  return loaded


def load_eval_noisy_images(path, run_config, max_images=0, flag_name='val_data'):
  """Loads a folder of held-out noisy images (no reference, no second capture)
  in the training data's units, for the single-image methods' held-out loss.

  Returns:
    list of EvalScene with second and reference None.

  Raises:
    ValueError: naming the flag and the file at fault.
  """
  return _as_eval_scenes(_find(scenes_lib.find_noisy_images, path, flag_name), run_config,
                         max_images, flag_name)


def holds_references(path):
  """True when some folder below path holds a reference.* file."""
  return any(scenes_lib.is_reference(name) for name in file_lists.files_below(path))


def load_eval_data(path, run_config, noise, max_images=0, flag_name='val_data'):
  """Evaluation data for noise: clean images for synthetic noise; for 'none'
  scenes (of stacks for a 3D run), or, for a 2D single-image method and a
  folder without any reference, every image file as a held-out noisy image of
  its own."""
  if noise == config_lib.NO_NOISE:
    if file_lists.is_record_folder(path):
      return load_eval_records(path, run_config, max_images, flag_name)
    if (methods_registry.get(run_config.method.name).single_image and tf.io.gfile.isdir(path)
        and not holds_references(path)):
      if config_lib.model_spatial_dims(run_config) == 3:
        # Its files would be single noisy stacks, which only held-out losses
        # score, and those are 2D (evaluator.scoring_functions). Read as scenes,
        # a flat folder of them would be one scene of different specimens.
        raise ValueError(f'--{flag_name}: {path!r} holds no reference.*, so its stacks are '
                         f'taken as single noisy stacks, which a 3D --method='
                         f'{run_config.method.name} run is not scored on yet; give it scene '
                         'folders of acquisitions of one stack with a reference.*')
      return load_eval_noisy_images(path, run_config, max_images, flag_name)
    return load_eval_scenes(path, run_config, max_images, flag_name)
  return load_eval_images(path, run_config.model.channels, max_images, flag_name)
