"""The serving signature as ONNX (export.py --onnx): model.onnx beside the
SavedModel, padding (and the percentile map) inside the graph; needs the
optional export extras (requirements-export.txt)."""

import importlib.util
import logging
import os

import tensorflow as tf

from n2n.exports import saved_model

ONNX_NAME = 'model.onnx'
# Opset 17: onnxruntime 1.14 and later, and every current ONNX consumer, run it.
ONNX_OPSET = 17
# The optional packages --onnx needs (requirements-export.txt), and the message
# naming them.
ONNX_EXTRAS_MESSAGE = ('--onnx needs the optional export extras (tf2onnx, onnxruntime): '
                       'pip install -r requirements-export.txt')


def onnx_extras_installed():
  """True when tf2onnx (the converter) and onnxruntime (its check) can be imported."""
  return all(importlib.util.find_spec(name) for name in ('tf2onnx', 'onnxruntime'))


def write_onnx(model, export_dir, rule=None, multiples=None):
  """Writes export_dir/model.onnx: the serving signature (padding and crop
  inside the graph, any H and W; the percentile map for a per-image rule) as
  ONNX; returns its path.

  Args:
    model: float32 keras.Model from build_unet(upsampling='resize').
    rule: normalization.Rule of the run, or None (white level: values in [0, 1]).
    multiples: saved_model.spatial_multiples of the run (None: a 2D network's).

  Raises:
    ValueError: the optional export extras are not installed.
  """
  if not onnx_extras_installed():
    raise ValueError(ONNX_EXTRAS_MESSAGE)
  import tf2onnx  # pylint: disable=g-import-not-at-top  (optional: requirements-export.txt)
  serve = tf.function(saved_model.serving_function(model, rule, multiples),
                      input_signature=saved_model.input_signature(model))
  path = os.path.join(export_dir, ONNX_NAME)
  # tf2onnx's transpose optimiser gives up on the scalar Add of the input's
  # centring and logs a traceback as a warning; the graph it leaves is the
  # correct one (tested against denoise.py), just not transpose-optimised.
  optimizer_log = logging.getLogger('tf2onnx.optimizer')
  level = optimizer_log.level
  optimizer_log.setLevel(logging.ERROR)
  try:
    tf2onnx.convert.from_function(serve, input_signature=saved_model.input_signature(model),
                                  opset=ONNX_OPSET, output_path=path)
  finally:
    optimizer_log.setLevel(level)
  return path
