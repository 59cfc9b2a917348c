"""The SavedModel as TensorFlow Lite (export.py --tflite): model.tflite beside it,
the same signature, builtin ops only."""

import os

import tensorflow as tf

from n2n.inference import exported_model

TFLITE_NAME = 'model.tflite'


def write_tflite(export_dir):
  """Converts the SavedModel in export_dir to export_dir/model.tflite; returns its path.

  Builtin TFLite ops only (no Flex delegate needed). The network must have
  been built with upsampling='resize': Keras' repeat-based upsampling loses
  the channel dimension in the converter.
  """
  converter = tf.lite.TFLiteConverter.from_saved_model(export_dir, signature_keys=[exported_model.SIGNATURE])
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  path = os.path.join(export_dir, TFLITE_NAME)
  with tf.io.gfile.GFile(path, 'wb') as tflite_file:
    tflite_file.write(converter.convert())
  return path
