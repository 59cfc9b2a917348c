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

import tensorflow as tf

from n2n.corruptions import text_glyphs

MIN_STRING_LENGTH, MAX_STRING_LENGTH = 3, 12
MAX_SCALE = 2  # each font is drawn at 1x or 2x
# Guards the loop for huge coverages that overlapping strings approach slowly.
MAX_STRINGS = 4000
# Ink pixels of an average string, measured on the bundled fonts: about 500
# (121 of them show on a 64x64 canvas, 308 on 256x256). Only sizes the chunks
# of strings drawn per loop iteration, so that most images need one or two.
_INK_PER_STRING = 500


def sample_strings(seed, batch, count, channels, num_fonts):
  """Font, scale, length, characters, corner and colour of [batch, count] strings.

  Returns:
    (font, scale, length [B, K] int32; characters [B, K, MAX_STRING_LENGTH]
    int32 glyph indices; corner [B, K, 2] float32 in [0, 1), where the string
    sits; colour [B, K, channels] float32 in [0, 1)).
  """
  seeds = tf.random.experimental.stateless_split(seed, 6)
  shape = tf.stack([batch, count])
  font = tf.random.stateless_uniform(shape, seeds[0], 0, num_fonts, tf.int32)
  scale = tf.random.stateless_uniform(shape, seeds[1], 1, MAX_SCALE + 1, tf.int32)
  length = tf.random.stateless_uniform(shape, seeds[2], MIN_STRING_LENGTH,
                                       MAX_STRING_LENGTH + 1, tf.int32)
  characters = tf.random.stateless_uniform(
      tf.concat([shape, [MAX_STRING_LENGTH]], 0), seeds[3], 0, text_glyphs.NUM_GLYPHS, tf.int32)
  corner = tf.random.stateless_uniform(tf.concat([shape, [2]], 0), seeds[4], 0, 1)
  colour = tf.random.stateless_uniform(tf.concat([shape, [channels]], 0), seeds[5], 0, 1)
  return font, scale, length, characters, corner, colour


def ink_points(tables, strings, budget, height, width):
  """Canvas pixels of the ink of the first budget[b] strings of each image b.

  Args:
    tables: text_glyphs.ink_tables output.
    strings: (font, scale, length, characters, corner), see sample_strings.
    budget: [B] int32, strings drawn per image.
    height, width: scalar int32, the canvas.

  Returns:
    (image [N] int32, string [N] int32, row [N] int32, column [N] int32);
    points may lie off the canvas.
  """
  font, scale, length, characters, corner = strings
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
  glyph = (per_string(font) * text_glyphs.NUM_GLYPHS
           + tf.gather(tf.reshape(characters, [-1]), chosen))
  points_per_char = tf.gather(tables['count'], glyph) * char_scale * char_scale
  owner = tf.repeat(tf.range(tf.shape(chosen)[0]), points_per_char)
  offset = tf.range(tf.shape(owner)[0]) - tf.gather(tf.cumsum(points_per_char, exclusive=True),
                                                    owner)
  point_scale = tf.gather(char_scale, owner)
  ink = tf.gather(tf.gather(tables['start'], glyph), owner) + offset // (point_scale**2)
  sub_pixel = offset % (point_scale**2)
  rows = (tf.gather(char_top, owner) + tf.gather(tables['y'], ink) * point_scale
          + sub_pixel // point_scale)
  columns = (tf.gather(char_x, owner) + tf.gather(tables['x'], ink) * point_scale
             + sub_pixel % point_scale)
  return tf.gather(char_image, owner), tf.gather(char_string, owner), rows, columns


def strings_wanted(coverage, achieved, height, width):
  """A generous guess of how many more strings each image needs; [B] int32 >= 1.

  Args:
    coverage, achieved: [B] float32 in [0, 1), the target and what is covered.
    height, width: scalar int32, the canvas.
  """
  # Visible share of a string placed anywhere it at least partly shows.
  visible_ink = _INK_PER_STRING * tf.cast(height * width, tf.float32) / tf.cast(
      (height + 32) * (width + 128), tf.float32)
  # Overlapping strings: n strings cover about 1 - exp(-n * ink / area).
  missing = tf.math.log1p(-tf.minimum(achieved, 0.999)) - tf.math.log1p(
      -tf.minimum(coverage, 0.999))
  area = tf.cast(height * width, tf.float32)
  return tf.cast(tf.math.ceil(1.2 * tf.maximum(missing, 0.0) * area / visible_ink), tf.int32) + 1


def strings_to_draw(coverage, achieved, new_counts, area, budget):
  """How many of this chunk's strings each image keeps, and the coverage after them.

  Args:
    coverage, achieved: [B] float32, target and coverage before the chunk.
    new_counts: [B, K] float32, pixels each string covers first.
    area: scalar float32, pixels per image.
    budget: [B] int32, strings sampled for each image in this chunk.

  Returns:
    (drawn [B] int32, achieved after them [B] float32, reached [B] bool). The
    last string is kept only if that lands closer to the target than not.
  """
  after = achieved[:, tf.newaxis] + tf.cumsum(new_counts, axis=1) / area
  before = tf.concat([achieved[:, tf.newaxis], after[:, :-1]], axis=1)
  reaches = after >= coverage[:, tf.newaxis]
  reached = tf.reduce_any(reaches, axis=1)
  last = tf.argmax(tf.cast(reaches, tf.int32), axis=1, output_type=tf.int32)
  after_last = tf.gather(after, last, batch_dims=1)
  before_last = tf.gather(before, last, batch_dims=1)
  keep_last = after_last - coverage <= coverage - before_last
  drawn = tf.where(reached, tf.where(keep_last, last + 1, last), budget)
  new_achieved = tf.where(reached, tf.where(keep_last, after_last, before_last), after[:, -1])
  return drawn, new_achieved, reached


def paint(images, covered, pixel, point_string, point_key, on_canvas, drawn_per_point, colours):
  """Paints the drawn strings' ink: the last string drawn over a pixel gives its colour.

  Args:
    images: [B, H, W, C] float32.
    covered: [B * H * W] bool.
    pixel: [N] int32 flat pixel of each ink point (B * H * W when off canvas).
    point_string, point_key: [N] int32, string index in its image and in the chunk.
    on_canvas: [N] bool.
    drawn_per_point: [N] int32, strings drawn in the point's image.
    colours: [B * K, C] float32, each string's colour.

  Returns:
    (painted images, updated covered).
  """
  shape = tf.shape(images)
  channels = images.shape[-1]
  pixels = tf.shape(covered)[0]
  painted = on_canvas & (point_string < drawn_per_point)
  top = tf.math.unsorted_segment_max(tf.where(painted, point_string, -1), pixel, pixels + 1)
  winners = tf.where(painted & (point_string == tf.gather(top, pixel)))
  winner_pixels = tf.gather(pixel, winners[:, 0])[:, tf.newaxis]
  winner_colours = tf.gather(colours, tf.gather(point_key, winners[:, 0]))
  painted_images = tf.reshape(tf.tensor_scatter_nd_update(
      tf.reshape(images, [-1, channels]), winner_pixels, winner_colours), shape)
  painted_images.set_shape(images.shape)
  covered = tf.tensor_scatter_nd_update(
      covered, winner_pixels, tf.ones_like(winner_pixels[:, 0], tf.bool))
  return painted_images, covered


def add_text_overlay(images, coverage, seed, tables=None):
  """Draws random strings on each image until `coverage` of its pixels are covered.

  Args:
    images: [B, H, W, C] float32 in [0, 1], C = 1 or 3.
    coverage: [B] (or scalar) float32 in [0, 1), fraction of pixels to cover.
    seed: [2] int32 stateless seed.
    tables: text_glyphs.ink_tables of the fonts (default: the bundled four).

  Returns:
    [B, H, W, C] float32. Text pixels are in [0, 1]. Per image, the achieved
    coverage is the closer to `coverage` of the values before and after its
    last string.
  """
  tables = tables or _bundled_tables()
  num_fonts = len(tables['cell_height'])
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
    *strings, colour = sample_strings(tf.random.experimental.stateless_fold_in(seed, chunk),
                                      batch, per_chunk, channels, num_fonts)
    point_image, point_string, rows, columns = ink_points(tables, strings, budget, height, width)
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
    drawn, new_achieved, reached = strings_to_draw(
        coverage, achieved, tf.reshape(new_counts, [batch, per_chunk]), area, budget)
    drawn = tf.where(done, 0, drawn)
    achieved = tf.where(done, achieved, new_achieved)
    used += drawn
    images, covered = paint(images, covered, pixel, point_string, point_key, on_canvas,
                            tf.gather(drawn, point_image), tf.reshape(colour, [-1, channels]))
    done = done | reached | (used >= MAX_STRINGS)
    return chunk + 1, images, covered, achieved, done, used

  done = coverage <= 0.0
  _, images, _, _, _, _ = tf.while_loop(
      keep_going, draw_chunk,
      (tf.constant(0), images, tf.zeros([pixels], tf.bool), tf.zeros([batch], tf.float32),
       done, tf.zeros([batch], tf.int32)),
      shape_invariants=(tf.TensorShape([]), images.shape, tf.TensorShape([None]),
                        tf.TensorShape([None]), tf.TensorShape([None]),
                        tf.TensorShape([None])))
  return images


@functools.lru_cache(maxsize=None)
def _bundled_tables():
  return text_glyphs.ink_tables(text_glyphs.bundled_fonts())


def make_text_overlay(fonts=None):
  """add_text_overlay over the given fonts (list of [95, h, w] glyph arrays;
  default: the four bundled fonts), as fn(images, coverage, seed)."""
  tables = _bundled_tables() if fonts is None else text_glyphs.ink_tables(fonts)
  return functools.partial(add_text_overlay, tables=tables)
