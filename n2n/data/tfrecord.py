"""The TFRecord schemas, shared by writer and reader.

Clean-image datasets, one tf.train.Example per image:
  image/encoded  bytes   PNG, 8-bit RGB
  image/height   int64
  image/width    int64
  image/name     bytes   path relative to the dataset tool's input folder

Scene datasets (real noisy captures, datasets/make_tfrecords.py --scenes), one
tf.train.Example per scene; pixels keep their dtype, the manifest says which:
  scene/captures   bytes[N]     tf.io.serialize_tensor of [H, W, C] each, N >= 2
                                (of [D, H, W, C] for volumes and movies)
  scene/reference  bytes[0..1]  the same, for reference.*
  scene/height, scene/width, scene/channels  int64
  scene/depth      int64        planes of a volume; 0 (or absent) for images
  scene/name       bytes        the scene folder below the input folder
"""

import tensorflow as tf

ENCODED_KEY = 'image/encoded'
HEIGHT_KEY = 'image/height'
WIDTH_KEY = 'image/width'
NAME_KEY = 'image/name'
# Written beside the shards by the dataset tool; read by the pipeline.
MANIFEST_NAME = 'manifest.json'
SHARD_SUFFIX = '.tfrecord'
CAPTURES_KEY = 'scene/captures'
REFERENCE_KEY = 'scene/reference'
SCENE_NAME_KEY = 'scene/name'
SCENE_SHAPE_KEYS = ('scene/height', 'scene/width', 'scene/channels')
SCENE_DEPTH_KEY = 'scene/depth'

_FEATURES = {
    ENCODED_KEY: tf.io.FixedLenFeature([], tf.string),
    HEIGHT_KEY: tf.io.FixedLenFeature([], tf.int64),
    WIDTH_KEY: tf.io.FixedLenFeature([], tf.int64),
    NAME_KEY: tf.io.FixedLenFeature([], tf.string, default_value=''),
}


def serialize_image(png_bytes, height, width, name):
  """Builds one serialized record.

  Args:
    png_bytes: bytes of an 8-bit RGB PNG.
    height, width: the image's size in pixels.
    name: str, the image's name (kept for reports).

  Returns:
    bytes, a serialized tf.train.Example.
  """
  feature = {
      ENCODED_KEY: tf.train.Feature(bytes_list=tf.train.BytesList(value=[png_bytes])),
      HEIGHT_KEY: tf.train.Feature(int64_list=tf.train.Int64List(value=[height])),
      WIDTH_KEY: tf.train.Feature(int64_list=tf.train.Int64List(value=[width])),
      NAME_KEY: tf.train.Feature(bytes_list=tf.train.BytesList(value=[name.encode('utf-8')])),
  }
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def parse_image(serialized):
  """Parses and decodes one record; usable inside tf.data.map.

  Args:
    serialized: scalar tf.string, a record written by serialize_image.

  Returns:
    dict with 'image' [H, W, 3] uint8 and 'name' scalar tf.string.
  """
  parsed = tf.io.parse_single_example(serialized, _FEATURES)
  image = tf.io.decode_png(parsed[ENCODED_KEY], channels=3)
  height = tf.cast(parsed[HEIGHT_KEY], tf.int32)
  width = tf.cast(parsed[WIDTH_KEY], tf.int32)
  image = tf.ensure_shape(tf.reshape(image, tf.stack([height, width, 3])), [None, None, 3])
  return {'image': image, 'name': parsed[NAME_KEY]}


_SCENE_FEATURES = {
    CAPTURES_KEY: tf.io.RaggedFeature(tf.string),
    REFERENCE_KEY: tf.io.RaggedFeature(tf.string),
    SCENE_NAME_KEY: tf.io.FixedLenFeature([], tf.string, default_value=''),
    SCENE_DEPTH_KEY: tf.io.FixedLenFeature([], tf.int64, default_value=0),
    **{key: tf.io.FixedLenFeature([], tf.int64) for key in SCENE_SHAPE_KEYS},
}


def _int64(value):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def serialize_scene(captures, reference, name):
  """Builds one serialized scene record.

  Args:
    captures: [N, H, W, C] numpy array, uint8, uint16 or float32; or
      [N, D, H, W, C] for volumes.
    reference: [H, W, C] (or [D, H, W, C]) of the same dtype, or None.
    name: str, the scene's name.

  Returns:
    bytes, a serialized tf.train.Example.
  """
  encode = lambda array: tf.io.serialize_tensor(tf.constant(array)).numpy()
  height, width, channels = captures.shape[-3:]
  depth = captures.shape[1] if captures.ndim == 5 else 0
  feature = {
      CAPTURES_KEY: tf.train.Feature(bytes_list=tf.train.BytesList(
          value=[encode(capture) for capture in captures])),
      REFERENCE_KEY: tf.train.Feature(bytes_list=tf.train.BytesList(
          value=[encode(reference)] if reference is not None else [])),
      SCENE_NAME_KEY: tf.train.Feature(bytes_list=tf.train.BytesList(
          value=[name.encode('utf-8')])),
      **{key: _int64(value) for key, value in zip(SCENE_SHAPE_KEYS, (height, width, channels))},
  }
  if depth:
    feature[SCENE_DEPTH_KEY] = _int64(depth)
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def parse_scene(serialized):
  """Parses one scene record without decoding its pixels; usable in tf.data.map.

  Returns:
    dict: 'captures' [N] tf.string and 'reference' [0 or 1] tf.string (each a
    serialized tensor, see decode_pixels), 'name' scalar tf.string, 'shape'
    [3] int32 (H, W, C), 'depth' scalar int32 (0 for images).
  """
  parsed = tf.io.parse_single_example(serialized, _SCENE_FEATURES)
  shape = tf.cast(tf.stack([parsed[key] for key in SCENE_SHAPE_KEYS]), tf.int32)
  return {'captures': parsed[CAPTURES_KEY], 'reference': parsed[REFERENCE_KEY],
          'name': parsed[SCENE_NAME_KEY], 'shape': shape,
          'depth': tf.cast(parsed[SCENE_DEPTH_KEY], tf.int32)}


def decode_pixels(serialized, dtype, channels):
  """One serialized capture -> [H, W, channels] of dtype (static channels)."""
  pixels = tf.io.parse_tensor(serialized, out_type=dtype)
  return tf.ensure_shape(pixels, [None, None, channels])


def decode_volume(serialized, dtype, channels):
  """One serialized volume capture -> [D, H, W, channels] of dtype (static channels)."""
  pixels = tf.io.parse_tensor(serialized, out_type=dtype)
  return tf.ensure_shape(pixels, [None, None, None, channels])
