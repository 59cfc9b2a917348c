"""In-graph text overlay from bitmap fonts: pure TensorFlow, no PIL, no py_function.

Strings of random printable ASCII characters, in random fonts (four X11
misc-fixed sizes, each also doubled), random colours and positions, are drawn
one after another until the fraction of covered pixels reaches the requested
coverage. Runs inside tf.data.map and on TPU input hosts alike.
"""

import os

import imageio.v3 as iio
import numpy as np
import tensorflow as tf

FONT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fonts')
FONT_NAMES = ('6x13', '9x15', '10x20', '12x24')
NUM_GLYPHS = 95  # printable ASCII 32..126
MIN_STRING_LENGTH, MAX_STRING_LENGTH = 3, 12
SCALES = (1, 2)
# Guards the loop for huge coverages that overlapping strings approach slowly.
MAX_STRINGS = 4000


def load_glyphs(name):
  """One font's glyphs: [95, cell_height, cell_width] float32 in {0, 1}."""
  atlas = iio.imread(os.path.join(FONT_DIR, f'{name}.png'))
  height, width = atlas.shape[0], atlas.shape[1] // NUM_GLYPHS
  glyphs = atlas.reshape(height, NUM_GLYPHS, width).transpose(1, 0, 2)
  return (glyphs > 127).astype(np.float32)


def _string_mask(glyphs, characters, scale):
  """[95, h, w] glyphs, [L] int32 characters, scalar scale -> [h*s, L*w*s] float32."""
  string = tf.gather(glyphs, characters)  # [L, h, w]
  string = tf.transpose(string, [1, 0, 2])
  string = tf.reshape(string, [tf.shape(string)[0], -1])
  return tf.repeat(tf.repeat(string, scale, axis=0), scale, axis=1)


def _visible_window(mask, top, left, height, width):
  """Crops a [h, w] mask placed at (top, left) to the canvas.

  Returns:
    (cropped mask [h', w'], indices [h', w', 2] int32 of its canvas pixels).
  """
  mask_height, mask_width = tf.shape(mask)[0], tf.shape(mask)[1]
  crop_top, crop_left = tf.maximum(-top, 0), tf.maximum(-left, 0)
  bottom = tf.minimum(mask_height, height - top)
  right = tf.minimum(mask_width, width - left)
  cropped = mask[crop_top:bottom, crop_left:right]
  rows = tf.range(tf.maximum(top, 0), tf.maximum(top, 0) + tf.shape(cropped)[0])
  columns = tf.range(tf.maximum(left, 0), tf.maximum(left, 0) + tf.shape(cropped)[1])
  indices = tf.stack(tf.meshgrid(rows, columns, indexing='ij'), axis=-1)
  return cropped, indices


def make_text_overlay(fonts=None):
  """Builds add_text_overlay(image, coverage, seed) over the given fonts.

  Args:
    fonts: list of [95, h, w] glyph arrays (default: the four bundled fonts).

  Returns:
    A function, see add_text_overlay below.
  """
  fonts = [load_glyphs(name) for name in FONT_NAMES] if fonts is None else fonts
  font_constants = [tf.constant(glyphs) for glyphs in fonts]

  def add_text_overlay(image, coverage, seed):
    """Draws random strings until `coverage` of the pixels are covered.

    Args:
      image: [H, W, C] float32 in [0, 1], C = 1 or 3.
      coverage: scalar float32 in [0, 1), the fraction of pixels to cover.
      seed: [2] int32 stateless seed.

    Returns:
      [H, W, C] float32 in [0, 1]. The achieved coverage is the closer to
      `coverage` of the values before and after the last string.
    """
    image = tf.convert_to_tensor(image, tf.float32)
    coverage = tf.cast(coverage, tf.float32)
    height, width = tf.shape(image)[0], tf.shape(image)[1]
    channels = image.shape[-1]

    def draw_string(index):
      seeds = tf.random.experimental.stateless_split(
          tf.random.experimental.stateless_fold_in(seed, index), 6)
      font = tf.random.stateless_uniform([], seeds[0], 0, len(font_constants), tf.int32)
      scale = tf.gather(SCALES, tf.random.stateless_uniform([], seeds[1], 0, len(SCALES),
                                                            tf.int32))
      length = tf.random.stateless_uniform([], seeds[2], MIN_STRING_LENGTH,
                                           MAX_STRING_LENGTH + 1, tf.int32)
      characters = tf.random.stateless_uniform([length], seeds[3], 0, NUM_GLYPHS, tf.int32)
      branches = [lambda glyphs=glyphs: _string_mask(glyphs, characters, scale)
                  for glyphs in font_constants]
      mask = tf.switch_case(font, branches)
      # Anywhere the string at least partly shows; strings may run off every edge.
      corner = tf.random.stateless_uniform([2], seeds[4], 0, 1)
      top = tf.cast(corner[0] * tf.cast(height + tf.shape(mask)[0], tf.float32),
                    tf.int32) - tf.shape(mask)[0] + 1
      left = tf.cast(corner[1] * tf.cast(width + tf.shape(mask)[1], tf.float32),
                     tf.int32) - tf.shape(mask)[1] + 1
      colour = tf.random.stateless_uniform([channels], seeds[5], 0, 1)
      mask, indices = _visible_window(mask, top, left, height, width)
      return mask[:, :, tf.newaxis], indices, colour

    def keep_going(index, unused_image, unused_covered, achieved, done):
      return tf.logical_and(tf.logical_not(done),
                            tf.logical_and(achieved < coverage, index < MAX_STRINGS))

    def add_one(index, current, covered, achieved, unused_done):
      # Work on the string's window only: the cost is its area, not the image's.
      mask, indices, colour = draw_string(index)
      window = tf.gather_nd(current, indices)
      covered_window = tf.gather_nd(covered, indices)
      new_window = window * (1.0 - mask) + colour * mask
      new_covered_window = tf.maximum(covered_window, mask)
      newly_covered = tf.reduce_sum(new_covered_window - covered_window)
      new_achieved = achieved + newly_covered / tf.cast(height * width, tf.float32)
      overshoot = new_achieved >= coverage
      # Keep the last string only if that lands closer to the target than not drawing it.
      keep = tf.logical_or(tf.logical_not(overshoot),
                           new_achieved - coverage <= coverage - achieved)
      return (index + 1,
              tf.tensor_scatter_nd_update(current, indices,
                                          tf.where(keep, new_window, window)),
              tf.tensor_scatter_nd_update(covered, indices,
                                          tf.where(keep, new_covered_window, covered_window)),
              tf.where(keep, new_achieved, achieved),
              overshoot)

    covered = tf.zeros([height, width, 1], tf.float32)
    _, image, _, _, _ = tf.while_loop(
        keep_going, add_one,
        (tf.constant(0), image, covered, tf.constant(0.0), tf.constant(False)))
    return image

  return add_text_overlay
