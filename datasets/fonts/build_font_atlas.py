"""Converts a BDF bitmap font into the glyph atlas PNG the text corruption reads.

  pcf2bdf -o 9x15.bdf 9x15-ISO8859-1.pcf      # from Debian's xfonts-base + pcf2bdf
  python datasets/fonts/build_font_atlas.py --bdf=9x15.bdf --output=n2n/corruptions/fonts/9x15.png

The atlas is one row of cells, one cell per printable ASCII character (32..126),
each cell the font's bounding box: [H, 95 * W] uint8, 255 = ink. Run offline
once; the PNGs are committed (see n2n/corruptions/fonts/README.md for their licence).
"""

import sys

from absl import app
from absl import flags
import imageio.v3 as iio
import numpy as np

FIRST_CHAR, LAST_CHAR = 32, 126

flags.DEFINE_string('bdf', None, 'Input BDF font file.')
flags.DEFINE_string('output', None, 'Output atlas PNG.')
FLAGS = flags.FLAGS


def parse_bdf(text):
  """Returns (cell_height, cell_width, {code: [cell_height, cell_width] uint8})."""
  lines = iter(text.splitlines())
  cell_width = cell_height = x_origin = y_origin = None
  glyphs = {}
  for line in lines:
    fields = line.split()
    if not fields:
      continue
    if fields[0] == 'FONTBOUNDINGBOX':
      cell_width, cell_height, x_origin, y_origin = map(int, fields[1:5])
    elif fields[0] == 'STARTCHAR':
      code = width = height = x_offset = y_offset = None
      for line in lines:  # pylint: disable=redefined-outer-name
        fields = line.split()
        if fields[0] == 'ENCODING':
          code = int(fields[1])
        elif fields[0] == 'BBX':
          width, height, x_offset, y_offset = map(int, fields[1:5])
        elif fields[0] == 'BITMAP':
          rows = [next(lines).strip() for _ in range(height)]
          break
      cell = np.zeros((cell_height, cell_width), np.uint8)
      ascent = cell_height + y_origin
      top = ascent - (y_offset + height)
      left = x_offset - x_origin
      for row_index, hex_row in enumerate(rows):
        bits = bin(int(hex_row, 16))[2:].zfill(len(hex_row) * 4)[:width]
        for column, bit in enumerate(bits):
          y, x = top + row_index, left + column
          if bit == '1' and 0 <= y < cell_height and 0 <= x < cell_width:
            cell[y, x] = 255
      glyphs[code] = cell
  return cell_height, cell_width, glyphs


def main(argv):
  del argv
  with open(FLAGS.bdf) as bdf_file:
    cell_height, cell_width, glyphs = parse_bdf(bdf_file.read())
  missing = [code for code in range(FIRST_CHAR, LAST_CHAR + 1) if code not in glyphs]
  if missing:
    sys.exit(f'build_font_atlas.py: error: {FLAGS.bdf} lacks characters {missing}')
  atlas = np.concatenate([glyphs[code] for code in range(FIRST_CHAR, LAST_CHAR + 1)], axis=1)
  iio.imwrite(FLAGS.output, atlas)
  print(f'{FLAGS.output}: {LAST_CHAR - FIRST_CHAR + 1} glyphs of {cell_width}x{cell_height}')


if __name__ == '__main__':
  flags.mark_flags_as_required(['bdf', 'output'])
  app.run(main)
