"""Writing checked arrays (training_arrays.ArrayData) through the dataset
writers: scenes through scene_writer, clean images through dataset_writer,
then a fingerprint of what was written beside the records."""

import json
import os

import numpy as np
import tensorflow as tf

from n2n.data import dataset_writer
from n2n.data import native_images
from n2n.data import rgb_images
from n2n.data import scene_writer
from n2n.data import scenes as scenes_lib

# The manifest kind each argument's scenes are written as (clean images: dataset_writer).
SCENE_KINDS = {'noisy': 'noisy_images', 'captures': 'scenes', 'clean': 'clean_stacks'}
# Written beside the records once they are complete: what they were written from.
FINGERPRINT_NAME = 'arrays.json'


def scene_reader(data):
  """fn(scenes.Scene) -> scenes.SceneArrays of data's scenes, checked as files
  are (one shape and dtype per scene, values at most the white level)."""
  by_name = {scene.name: scene for scene in data.scenes}

  def read(found):
    scene = by_name[found.name]
    # Scenes take float32 where files hold float64; each capture is converted as it is read.
    captures = (capture.astype(np.float32) if capture.dtype == np.float64 else capture
                for capture in scene.captures)
    return scenes_lib.scene_arrays(scene.name, zip(scene.labels, captures), data.white_level,
                                   white_level_flag='white_level')

  return read


def _image_sources(data):
  """dataset_writer.ImageSources of clean images (or planes): 8-bit RGB of
  their values over the white level, as clean image files are written."""
  read = scene_reader(data)

  def source(scene):
    def convert():
      pixels = read(scenes_lib.Scene(scene.name, scene.labels)).captures[0]
      return rgb_images.to_rgb_uint8(native_images.to_unit_range(pixels, data.white_level or None))
    return dataset_writer.ImageSource(scene.name, convert, lambda: scene.captures[0].nbytes)

  return [source(scene) for scene in data.scenes]


def write_records(data, output_dir, seed=0, min_size=0):
  """Writes data as TFRecords and manifest.json into output_dir (replacing
  what is there), then its fingerprint (FINGERPRINT_NAME), last: a folder
  without one was not completely written.

  Returns:
    The manifest dict.
  """
  if tf.io.gfile.exists(os.path.join(output_dir, FINGERPRINT_NAME)):
    tf.io.gfile.remove(os.path.join(output_dir, FINGERPRINT_NAME))
  if data.kind == 'clean' and not (data.stacks and not data.planes):
    manifest = dataset_writer.write_images(_image_sources(data), output_dir, min_size=min_size,
                                           seed=seed, overwrite=True)
  else:
    found = [scenes_lib.Scene(scene.name, scene.labels) for scene in data.scenes]
    manifest = scene_writer.write_scenes(found, scene_reader(data), output_dir,
                                         SCENE_KINDS[data.kind], data.white_level,
                                         f'{data.argument}=', seed=seed, overwrite=True,
                                         max_record_bytes=data.max_record_bytes,
                                         planes=data.planes)
  with tf.io.gfile.GFile(os.path.join(output_dir, FINGERPRINT_NAME), 'w') as out:
    json.dump(fingerprint_record(data), out, indent=2)
  return manifest


def fingerprint_record(data):
  """What FINGERPRINT_NAME holds: the fingerprint and what it was taken of."""
  return {'fingerprint': data.fingerprint, 'argument': data.argument, 'kind': data.kind,
          'scenes': len(data.scenes), 'spatial_dims': data.spatial_dims,
          'white_level': data.white_level}


def read_fingerprint(output_dir):
  """FINGERPRINT_NAME's dict in output_dir, or None where there is none."""
  path = os.path.join(output_dir, FINGERPRINT_NAME)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as saved:
    return json.load(saved)


def describe(record):
  """A fingerprint record in words, for messages."""
  return (f'{record["scenes"]} scene(s) of {record["argument"]}= arrays, fingerprint '
          f'{record["fingerprint"][:12]}')
