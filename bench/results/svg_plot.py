"""A line chart as a small standalone SVG file: no plotting library needed.

Used by bench/results/grid.py for PSNR-over-training curves.
"""

import html
import math

WIDTH, HEIGHT = 560, 300
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 56, 150, 28, 42
# Colour-blind-safe (Okabe-Ito) colours and dash patterns, one per series.
STYLES = [('#0072B2', ''), ('#D55E00', '6,4'), ('#009E73', '2,3'), ('#CC79A7', '8,3,2,3'),
          ('#999999', '4,4')]


def _nice_ticks(low, high, count=5):
  """About count round tick values spanning [low, high]."""
  span = max(high - low, 1e-9)
  raw = span / count
  magnitude = 10 ** math.floor(math.log10(raw))
  step = next(factor * magnitude for factor in (1, 2, 2.5, 5, 10) if factor * magnitude >= raw)
  first = (low // step) * step
  ticks = []
  value = first
  while value <= high + 1e-9:
    if value >= low - 1e-9:
      ticks.append(round(value, 10))
    value += step
  return ticks


def line_chart(series, title, x_label, y_label, reference=None):
  """An SVG document.

  Args:
    series: list of (label, [(x, y), ...]); drawn in order with STYLES.
    title, x_label, y_label: text.
    reference: optional (label, y): a grey horizontal line (e.g. the noisy
      input's PSNR).

  Returns:
    str, the SVG file's text.
  """
  points = [point for _, values in series for point in values]
  ys = [y for _, y in points] + ([reference[1]] if reference else [])
  x_low, x_high = 0.0, max(x for x, _ in points)
  y_low, y_high = min(ys), max(ys)
  pad = 0.05 * max(y_high - y_low, 1.0)
  y_low, y_high = y_low - pad, y_high + pad
  plot_width = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
  plot_height = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
  to_x = lambda x: MARGIN_LEFT + (x - x_low) / (x_high - x_low) * plot_width
  to_y = lambda y: MARGIN_TOP + (y_high - y) / (y_high - y_low) * plot_height
  text = lambda x, y, value, extra='': (
      f'<text x="{x:.1f}" y="{y:.1f}" {extra}>{html.escape(str(value))}</text>')
  parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           text(WIDTH / 2 - MARGIN_RIGHT / 2, 18, title, 'text-anchor="middle" font-size="14"')]
  for tick in _nice_ticks(y_low, y_high):
    parts.append(f'<line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_width}" y1="{to_y(tick):.1f}" '
                 f'y2="{to_y(tick):.1f}" stroke="#e5e5e5"/>')
    parts.append(text(MARGIN_LEFT - 6, to_y(tick) + 4, f'{tick:g}', 'text-anchor="end"'))
  for tick in _nice_ticks(x_low, x_high):
    parts.append(text(to_x(tick), HEIGHT - MARGIN_BOTTOM + 16, f'{tick:g}',
                      'text-anchor="middle"'))
  parts.append(f'<rect x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{plot_width}" '
               f'height="{plot_height}" fill="none" stroke="#333"/>')
  parts.append(text(MARGIN_LEFT + plot_width / 2, HEIGHT - 8, x_label, 'text-anchor="middle"'))
  middle = MARGIN_TOP + plot_height / 2
  parts.append(text(14, middle, y_label,
                    f'text-anchor="middle" transform="rotate(-90 14 {middle})"'))
  legend = []
  if reference:
    label, value = reference
    parts.append(f'<line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_width}" y1="{to_y(value):.1f}" '
                 f'y2="{to_y(value):.1f}" stroke="#999" stroke-dasharray="1,3"/>')
    legend.append((label, '#999', '1,3'))
  for index, (label, values) in enumerate(series):
    colour, dash = STYLES[index % len(STYLES)]
    path = ' '.join(f'{to_x(x):.1f},{to_y(y):.1f}' for x, y in values)
    dash_attribute = f' stroke-dasharray="{dash}"' if dash else ''
    parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"'
                 f'{dash_attribute}/>')
    legend.append((label, colour, dash))
  for index, (label, colour, dash) in enumerate(legend):
    y = MARGIN_TOP + 12 + 18 * index
    x = MARGIN_LEFT + plot_width + 10
    dash_attribute = f' stroke-dasharray="{dash}"' if dash else ''
    parts.append(f'<line x1="{x}" x2="{x + 22}" y1="{y - 4}" y2="{y - 4}" stroke="{colour}" '
                 f'stroke-width="2"{dash_attribute}/>')
    parts.append(text(x + 28, y, label))
  parts.append('</svg>')
  return '\n'.join(parts) + '\n'
