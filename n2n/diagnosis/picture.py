"""A NoiseProfile as one SVG picture: the correlation map and the level against
the signal. Plain SVG text, no plotting library."""

import html

import numpy as np

from n2n.diagnosis import noise_statistics

CELL = 36
COLOURS = {1: ('#444444',), 3: ('#d62728', '#2ca02c', '#1f77b4')}


def _colour(value):
  """Blue for negative, white for 0, red for 1."""
  value = float(np.clip(value, -1.0, 1.0))
  if value >= 0:
    other = int(round(255 * (1 - value)))
    return f'rgb(255,{other},{other})'
  other = int(round(255 * (1 + value)))
  return f'rgb({other},{other},255)'


def _correlation_map(profile, left, top):
  size = 2 * noise_statistics.MAX_LAG + 1
  parts = [f'<text x="{left}" y="{top - 10}" font-size="14">Noise correlation at lag (dy, dx), '
           f'-{noise_statistics.MAX_LAG}..{noise_statistics.MAX_LAG}</text>']
  for row in range(size):
    for column in range(size):
      value = profile.correlation[row, column]
      x, y = left + column * CELL, top + row * CELL
      parts.append(f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" '
                   f'fill="{_colour(value)}" stroke="#999"/>')
      parts.append(f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 4}" font-size="10" '
                   f'text-anchor="middle">{value:.2f}</text>')
  return parts


def _level_plot(profile, left, top, width, height):
  parts = [f'<text x="{left}" y="{top - 10}" font-size="14">Noise sigma against signal '
           '(0-1 scale)</text>',
           f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" '
           'stroke="#333"/>']
  sigma = profile.sigma
  top_sigma = float(np.nanmax(sigma)) * 1.1 if np.any(~np.isnan(sigma)) else 1.0
  top_sigma = top_sigma or 1.0
  for fraction in (0.0, 0.5, 1.0):
    parts.append(f'<text x="{left + fraction * width}" y="{top + height + 16}" font-size="11" '
                 f'text-anchor="middle">{fraction:g}</text>')
    parts.append(f'<text x="{left - 6}" y="{top + height - fraction * height + 4}" '
                 f'font-size="11" text-anchor="end">{fraction * top_sigma:.3g}</text>')
  colours = COLOURS.get(profile.channels, ('#444444',) * profile.channels)
  for channel in range(profile.channels):
    points = [(left + signal * width, top + height - value / top_sigma * height)
              for signal, value in zip(profile.signal, sigma[:, channel]) if not np.isnan(value)]
    if not points:
      continue
    path = ' '.join(f'{x:.1f},{y:.1f}' for x, y in points)
    parts.append(f'<polyline points="{path}" fill="none" stroke="{colours[channel]}" '
                 'stroke-width="2"/>')
    parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colours[channel]}"/>'
              for x, y in points]
  return parts


def svg(profile, title):
  """The whole picture as SVG text."""
  size = (2 * noise_statistics.MAX_LAG + 1) * CELL
  width, height = size * 2 + 140, size + 90
  parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="20" y="24" font-size="16">{html.escape(title)}</text>']
  parts += _correlation_map(profile, 20, 60)
  parts += _level_plot(profile, size + 90, 60, size, size)
  parts.append('</svg>')
  return '\n'.join(parts) + '\n'
