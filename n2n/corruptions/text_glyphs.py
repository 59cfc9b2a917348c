"""The bitmap fonts of the text corruption as ink-pixel tables (NumPy only).

Four X11 misc-fixed fonts (public domain, n2n/corruptions/fonts/README.md),
each stored as one PNG atlas of the 95 printable ASCII glyphs.
"""

import functools
import os

import imageio.v3 as iio
import numpy as np

FONT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fonts')
FONT_NAMES = ('6x13', '9x15', '10x20', '12x24')
NUM_GLYPHS = 95  # printable ASCII 32..126


def load_glyphs(name):
  """One font's glyphs: [95, cell_height, cell_width] float32 in {0, 1}."""
  atlas = iio.imread(os.path.join(FONT_DIR, f'{name}.png'))
  height, width = atlas.shape[0], atlas.shape[1] // NUM_GLYPHS
  glyphs = atlas.reshape(height, NUM_GLYPHS, width).transpose(1, 0, 2)
  return (glyphs > 127).astype(np.float32)


@functools.lru_cache(maxsize=None)
def bundled_fonts():
  """The four bundled fonts, loaded once: tuple of [95, h, w] float32 arrays."""
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
