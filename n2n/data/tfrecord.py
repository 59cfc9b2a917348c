"""The TFRecord schema for clean training images, shared by writer and reader.

One tf.train.Example per image:
  image/encoded  bytes   PNG, 8-bit RGB
  image/height   int64
  image/width    int64
  image/name     bytes   path relative to the dataset tool's input folder
"""

import tensorflow as tf

ENCODED_KEY = 'image/encoded'
HEIGHT_KEY = 'image/height'
WIDTH_KEY = 'image/width'
NAME_KEY = 'image/name'
# Written beside the shards by the dataset tool; read by the pipeline.
MANIFEST_NAME = 'manifest.json'
SHARD_SUFFIX = '.tfrecord'

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
