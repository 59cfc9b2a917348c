"""In-graph text overlay from bitmap fonts: pure TensorFlow, no PIL, no py_function.

Strings of random printable ASCII characters, in random fonts (four X11
misc-fixed sizes, each also doubled), random colours and positions, are drawn
one after another until the fraction of covered pixels reaches the requested
coverage. Runs inside tf.data.map and on TPU input hosts alike.

The renderer is vectorised: a string is the list of its ink pixels (looked up
from per-glyph tables), and a whole chunk of strings for a whole batch of
images is rasterised at once with segment min/max over pixel indices. The
first string that touches a pixel decides when it becomes covered (for the
coverage count); the last one drawn decides its colour, as if the strings had
been painted one after another.
"""

import functools
import os

import imageio.v3 as iio
import numpy as np
import tensorflow as tf

FONT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fonts')
FONT_NAMES = ('6x13', '9x15', '10x20', '12x24')
NUM_GLYPHS = 95  # printable ASCII 32..126
MIN_STRING_LENGTH, MAX_STRING_LENGTH = 3, 12
MAX_SCALE = 2  # each font is drawn at 1x or 2x
# Guards the loop for huge coverages that overlapping strings approach slowly.
MAX_STRINGS = 4000
# Ink pixels of an average string, measured on the bundled fonts: about 500
# (121 of them show on a 64x64 canvas, 308 on 256x256). Only sizes the chunks
# of strings drawn per loop iteration, so that most images need one or two.
_INK_PER_STRING = 500


def load_glyphs(name):
  """One font's glyphs: [95, cell_height, cell_width] float32 in {0, 1}."""
  atlas = iio.imread(os.path.join(FONT_DIR, f'{name}.png'))
  height, width = atlas.shape[0], atlas.shape[1] // NUM_GLYPHS
  glyphs = atlas.reshape(height, NUM_GLYPHS, width).transpose(1, 0, 2)
  return (glyphs > 127).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _bundled_fonts():
  return tuple(load_glyphs(name) for name in FONT_NAMES)


def ink_tables(fonts):
  """Every glyph's ink pixels as flat coordinate lists.

  Args:
    fonts: list of F arrays [95, h_f, w_f] in {0, 1}.

  Returns:
    dict of numpy int32 arrays: 'y', 'x' [P] (row, column of each ink pixel
    in its cell, glyphs of all fonts one after another), 'start', 'count'
    [F * 95] (where glyph f * 95 + g begins in 'y'/'x' and how many pixels it
    has), 'cell_height', 'cell_width' [F].
  """
  ys, xs, starts, counts = [], [], [], []
  total = 0
  for glyphs in fonts:
    for glyph in glyphs:
      rows, columns = np.nonzero(glyph > 0.5)
      ys.append(rows)
      xs.append(columns)
      starts.append(total)
      counts.append(len(rows))
      total += len(rows)
  as_int = lambda values: np.asarray(values, np.int32)
  return {
      'y': as_int(np.concatenate(ys)), 'x': as_int(np.concatenate(xs)),
      'start': as_int(starts), 'count': as_int(counts),
      'cell_height': as_int([glyphs.shape[1] for glyphs in fonts]),
      'cell_width': as_int([glyphs.shape[2] for glyphs in fonts]),
  }


def make_text_overlay(fonts=None):
  """Builds add_text_overlay(images, coverage, seed) over the given fonts.

  Args:
    fonts: list of [95, h, w] glyph arrays (default: the four bundled fonts).

  Returns:
    A function, see add_text_overlay below.
  """
  tables = ink_tables(_bundled_fonts() if fonts is None else fonts)
  num_fonts = len(tables['cell_height'])

  def sample_strings(seed, batch, count, channels):
    """Font, scale, length, characters, corner and colour of [batch, count] strings."""
    seeds = tf.random.experimental.stateless_split(seed, 6)
    shape = tf.stack([batch, count])
    font = tf.random.stateless_uniform(shape, seeds[0], 0, num_fonts, tf.int32)
    scale = tf.random.stateless_uniform(shape, seeds[1], 1, MAX_SCALE + 1, tf.int32)
    length = tf.random.stateless_uniform(shape, seeds[2], MIN_STRING_LENGTH,
                                         MAX_STRING_LENGTH + 1, tf.int32)
    characters = tf.random.stateless_uniform(
        tf.concat([shape, [MAX_STRING_LENGTH]], 0), seeds[3], 0, NUM_GLYPHS, tf.int32)
    corner = tf.random.stateless_uniform(tf.concat([shape, [2]], 0), seeds[4], 0, 1)
    colour = tf.random.stateless_uniform(tf.concat([shape, [channels]], 0), seeds[5], 0, 1)
    return font, scale, length, characters, corner, colour

  def ink_points(font, scale, length, characters, corner, budget, height, width):
    """Canvas pixels of the ink of the first budget[b] strings of each image b.

    Returns:
      (image [N] int32, string [N] int32, row [N] int32, column [N] int32);
      points may lie off the canvas.
    """
    cell_height = tf.gather(tables['cell_height'], font) * scale  # [B, K]
    cell_width = tf.gather(tables['cell_width'], font) * scale
    string_width = length * cell_width
    # Anywhere the string at least partly shows; strings may run off every edge.
    top = tf.cast(corner[..., 0] * tf.cast(height + cell_height, tf.float32),
                  tf.int32) - cell_height + 1
    left = tf.cast(corner[..., 1] * tf.cast(width + string_width, tf.float32),
                   tf.int32) - string_width + 1
    position = tf.range(MAX_STRING_LENGTH)
    char_left = left[..., tf.newaxis] + position * cell_width[..., tf.newaxis]  # [B, K, L]
    # Characters wholly off the canvas cost nothing further.
    string_index = tf.range(tf.shape(font)[1])
    wanted = string_index[tf.newaxis, :] < budget[:, tf.newaxis]
    shown = ((position < length[..., tf.newaxis]) & wanted[..., tf.newaxis]
             & (char_left < width) & (char_left + cell_width[..., tf.newaxis] > 0))
    chosen = tf.cast(tf.where(tf.reshape(shown, [-1]))[:, 0], tf.int32)
    count = tf.shape(font)[1]
    string_of_char = chosen // MAX_STRING_LENGTH  # flat [B * K] index
    per_string = lambda values: tf.gather(tf.reshape(values, [-1]), string_of_char)
    char_image = string_of_char // count
    char_string = string_of_char % count
    char_scale = per_string(scale)
    char_top = per_string(top)
    char_x = tf.gather(tf.reshape(char_left, [-1]), chosen)
    glyph = per_string(font) * NUM_GLYPHS + tf.gather(tf.reshape(characters, [-1]), chosen)
    points_per_char = tf.gather(tables['count'], glyph) * char_scale * char_scale
    owner = tf.repeat(tf.range(tf.shape(chosen)[0]), points_per_char)
    offset = tf.range(tf.shape(owner)[0]) - tf.gather(tf.cumsum(points_per_char, exclusive=True), owner)
    point_scale = tf.gather(char_scale, owner)
    ink = tf.gather(tf.gather(tables['start'], glyph), owner) + offset // (point_scale**2)
    sub_pixel = offset % (point_scale**2)
    rows = (tf.gather(char_top, owner) + tf.gather(tables['y'], ink) * point_scale
            + sub_pixel // point_scale)
    columns = (tf.gather(char_x, owner) + tf.gather(tables['x'], ink) * point_scale
               + sub_pixel % point_scale)
    return tf.gather(char_image, owner), tf.gather(char_string, owner), rows, columns

  def strings_wanted(coverage, achieved, height, width):
    """A generous guess of how many more strings each image needs; [B] int32 >= 1."""
    # Visible share of a string placed anywhere it at least partly shows.
    visible_ink = _INK_PER_STRING * tf.cast(height * width, tf.float32) / tf.cast(
        (height + 32) * (width + 128), tf.float32)
    # Overlapping strings: n strings cover about 1 - exp(-n * ink / area).
    missing = tf.math.log1p(-tf.minimum(achieved, 0.999)) - tf.math.log1p(
        -tf.minimum(coverage, 0.999))
    area = tf.cast(height * width, tf.float32)
    return tf.cast(tf.math.ceil(1.2 * tf.maximum(missing, 0.0) * area / visible_ink), tf.int32) + 1

  def add_text_overlay(images, coverage, seed):
    """Draws random strings on each image until `coverage` of its pixels are covered.

    Args:
      images: [B, H, W, C] float32 in [0, 1], C = 1 or 3.
      coverage: [B] (or scalar) float32 in [0, 1), fraction of pixels to cover.
      seed: [2] int32 stateless seed.

    Returns:
      [B, H, W, C] float32. Text pixels are in [0, 1]. Per image, the achieved
      coverage is the closer to `coverage` of the values before and after its
      last string.
    """
    images = tf.convert_to_tensor(images, tf.float32)
    shape = tf.shape(images)
    batch, height, width, channels = shape[0], shape[1], shape[2], images.shape[-1]
    coverage = tf.broadcast_to(tf.cast(coverage, tf.float32), [batch])
    pixels = batch * height * width
    area = tf.cast(height * width, tf.float32)

    def keep_going(unused_chunk, unused_images, unused_covered, unused_achieved, done,
                   unused_used):
      return tf.logical_not(tf.reduce_all(done))

    def draw_chunk(chunk, images, covered, achieved, done, used):
      budget = tf.minimum(strings_wanted(coverage, achieved, height, width), MAX_STRINGS - used)
      budget = tf.where(done, 0, budget)
      per_chunk = tf.maximum(tf.reduce_max(budget), 1)
      font, scale, length, characters, corner, colour = sample_strings(
          tf.random.experimental.stateless_fold_in(seed, chunk), batch, per_chunk, channels)
      point_image, point_string, rows, columns = ink_points(
          font, scale, length, characters, corner, budget, height, width)
      on_canvas = (rows >= 0) & (rows < height) & (columns >= 0) & (columns < width)
      # Off-canvas points go to one extra pixel that counts as covered and is dropped.
      pixel = tf.where(on_canvas, (point_image * height + rows) * width + columns, pixels)
      point_key = point_image * per_chunk + point_string

      # Which string covers each pixel first decides when it counts as covered.
      first = tf.math.unsorted_segment_min(point_string, pixel, pixels + 1)
      was_covered = tf.gather(tf.concat([covered, [True]], 0), pixel)
      covers_first = (point_string == tf.gather(first, pixel)) & tf.logical_not(was_covered)
      new_counts = tf.math.unsorted_segment_sum(
          tf.cast(covers_first, tf.float32), point_key, batch * per_chunk)
      # after[b, n]: coverage once strings 0..n of this chunk are drawn.
      after = achieved[:, tf.newaxis] + tf.cumsum(
          tf.reshape(new_counts, [batch, per_chunk]), axis=1) / area
      before = tf.concat([achieved[:, tf.newaxis], after[:, :-1]], axis=1)
      reaches = after >= coverage[:, tf.newaxis]
      reached = tf.reduce_any(reaches, axis=1)
      last = tf.argmax(tf.cast(reaches, tf.int32), axis=1, output_type=tf.int32)
      after_last = tf.gather(after, last, batch_dims=1)
      before_last = tf.gather(before, last, batch_dims=1)
      # Keep the last string only if that lands closer to the target than not drawing it.
      keep_last = after_last - coverage <= coverage - before_last
      drawn = tf.where(reached, tf.where(keep_last, last + 1, last), budget)
      drawn = tf.where(done, 0, drawn)
      new_achieved = tf.where(reached, tf.where(keep_last, after_last, before_last),
                              after[:, -1])
      achieved = tf.where(done, achieved, new_achieved)
      used += drawn

      # The last drawn string that covers a pixel gives it its colour.
      painted = on_canvas & (point_string < tf.gather(drawn, point_image))
      top = tf.math.unsorted_segment_max(tf.where(painted, point_string, -1), pixel, pixels + 1)
      winners = tf.where(painted & (point_string == tf.gather(top, pixel)))
      winner_pixels = tf.gather(pixel, winners[:, 0])[:, tf.newaxis]
      winner_colours = tf.gather(tf.reshape(colour, [-1, channels]),
                                 tf.gather(point_key, winners[:, 0]))
      painted_images = tf.reshape(tf.tensor_scatter_nd_update(
          tf.reshape(images, [-1, channels]), winner_pixels, winner_colours), shape)
      painted_images.set_shape(images.shape)
      covered = tf.tensor_scatter_nd_update(
          covered, winner_pixels, tf.ones_like(winner_pixels[:, 0], tf.bool))
      done = done | reached | (used >= MAX_STRINGS)
      return chunk + 1, painted_images, covered, achieved, done, used

    done = coverage <= 0.0
    _, images, _, _, _, _ = tf.while_loop(
        keep_going, draw_chunk,
        (tf.constant(0), images, tf.zeros([pixels], tf.bool), tf.zeros([batch], tf.float32),
         done, tf.zeros([batch], tf.int32)),
        shape_invariants=(tf.TensorShape([]), images.shape, tf.TensorShape([None]),
                          tf.TensorShape([None]), tf.TensorShape([None]),
                          tf.TensorShape([None])))
    return images

  return add_text_overlay
