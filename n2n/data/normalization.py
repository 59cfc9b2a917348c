"""How raw pixels become the network's values, and back (--normalization).

Two rules, recorded in the run's config.json, so training, validation,
denoise.py and every export apply the same one:
  white_level: x / white_level (the default; the run's white level is 1.0);
  percentile:  (x - low) / (high - low), low and high the image's own
               percentiles (--percentile_low, --percentile_high; CSBDeep's 1
               and 99.8), over all its pixels and colour channels together
               (one map per image keeps its colours). The output is mapped
               back with the same low and high, to the image's own scale.
Percentile normalisation serves data that fill a small part of their range
(16-bit microscopy frames using a few hundred levels): divided by the white
level they reach the network nearly black.

The numpy functions serve denoise.py and evaluation; the TensorFlow ones the
training pipelines and the exported graphs. Both use numpy's default
('linear') interpolation between order statistics.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from n2n import config as config_lib

WHITE_LEVEL, PERCENTILE = config_lib.NORMALIZATIONS


@dataclasses.dataclass(frozen=True)
class Rule:
  """One run's normalisation: its kind and, for PERCENTILE, the two percentiles."""
  kind: str
  low_percentile: float
  high_percentile: float

  @property
  def per_image(self):
    """True when each image carries its own map (PERCENTILE)."""
    return self.kind == PERCENTILE


def rule_of(run_config):
  """The Rule of a run's TrainConfig; None (no run, e.g. denoising pixels of
  no known training data) is the default rule, as are runs from before
  --normalization existed (config.json without it loads with the default)."""
  if run_config is None:
    return DEFAULT_RULE
  return _rule_of_data(run_config.data)


def _rule_of_data(data):
  return Rule(data.normalization, float(data.percentile_low), float(data.percentile_high))


# The rule of no run: the declared defaults.
DEFAULT_RULE = _rule_of_data(config_lib.DataConfig())


@dataclasses.dataclass(frozen=True)
class PixelMap:
  """values = (pixels - offset) / scale, and pixels = values * scale + offset."""
  offset: float
  scale: float


def _usable_scale(spread):
  # A flat image (every pixel alike) has no spread: shift it to 0 and keep its scale.
  return spread if spread > 0 else 1.0


def map_between(low, high):
  """The PixelMap that takes low to 0 and high to 1 (a flat range: low to 0, scale 1)."""
  return PixelMap(float(low), _usable_scale(float(high - low)))


def percentile_map(pixels, rule):
  """The PixelMap of one image by rule.percentile.

  Args:
    pixels: [H, W, C] (or any shape) array of any numeric dtype; NaN and
      infinity (missing voxels of float stacks) do not count.
    rule: Rule with kind PERCENTILE.

  Returns:
    PixelMap in pixels' own units.

  Raises:
    ValueError: no finite value at all.
  """
  if pixels.dtype.kind == 'f' and not np.isfinite(pixels).all():
    pixels = pixels[np.isfinite(pixels)]
    if not pixels.size:
      raise ValueError('holds no finite value (every pixel is NaN or infinite)')
  low, high = np.percentile(pixels, [rule.low_percentile, rule.high_percentile])
  return map_between(low, high)


def image_map(pixels, rule, white_level):
  """The PixelMap of one image: by its percentiles, or (0, white_level)."""
  if rule.per_image:
    return percentile_map(pixels, rule)
  return PixelMap(0.0, float(white_level))


def normalize(pixels, pixel_map):
  """[...] pixels of any dtype -> float32 network values."""
  values = pixels.astype(np.float32)
  values -= np.float32(pixel_map.offset)
  values /= np.float32(pixel_map.scale)
  return values


def denormalize(values, pixel_map):
  """float32 network values -> float32 in the image's own units."""
  pixels = values * np.float32(pixel_map.scale)
  pixels += np.float32(pixel_map.offset)
  return pixels


def percentile_maps_tf(images, rule):
  """(offset, scale) per image, in TensorFlow: the PixelMap of each image of a batch.

  Args:
    images: [N, H, W, C] float32 (or [N, ...]).
    rule: Rule with kind PERCENTILE.

  Returns:
    offset, scale: [N, 1, 1, 1] float32 (broadcasting against images' rank 4).
  """
  count = tf.shape(images)[0]
  ordered = tf.sort(tf.reshape(images, [count, -1]), axis=-1)
  last = tf.shape(ordered)[1] - 1

  def at(percentile):
    # numpy's 'linear': between the order statistics around percentile/100 * (n - 1).
    position = tf.cast(last, tf.float32) * (percentile / 100.0)
    below = tf.minimum(tf.cast(tf.floor(position), tf.int32), last)
    above = tf.minimum(below + 1, last)
    fraction = position - tf.cast(below, tf.float32)
    low_value = tf.gather(ordered, below, axis=1)
    return low_value + fraction * (tf.gather(ordered, above, axis=1) - low_value)

  low = at(rule.low_percentile)
  spread = at(rule.high_percentile) - low
  scale = tf.where(spread > 0, spread, tf.ones_like(spread))
  shape = tf.concat([[count], tf.ones([tf.rank(images) - 1], tf.int32)], axis=0)
  return tf.reshape(low, shape), tf.reshape(scale, shape)


def normalize_tf(images, rule):
  """[N, H, W, C] float32 raw pixels -> (network values, offset, scale), each
  image by its own percentiles (denormalize with values * scale + offset)."""
  offset, scale = percentile_maps_tf(images, rule)
  return (images - offset) / scale, offset, scale
