"""tools/results_grid.py's page and curves, from made-up results: every number
shown is the one given, and the SVG is well formed."""

import os
import sys
import xml.etree.ElementTree as ElementTree

from tests.conftest import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, 'tools'))
import results_page  # pylint: disable=g-import-not-at-top,wrong-import-position
import svg_plot  # pylint: disable=g-import-not-at-top,wrong-import-position


class Row:
  def __init__(self, name, title, ablations=()):
    self.name, self.title, self.ablations = name, title, ablations


def _run(name, loss, final, best=None, wall=300.0):
  tag = 'gaussian_25' if name.startswith('gaussian') else 'text_0.25'
  return {'run': name, 'loss': loss, 'train_steps': 1600, 'batch_size': 8, 'crop_size': 64,
          'wall_seconds': wall, 'images_per_second': 50.0, 'clipped_steps': 3,
          'date': '2026-11-23', 'commit': 'abc1234', 'machine': 'test CPU',
          'levels': {tag: {'final': final, 'best': best or final, 'best_step': 1400,
                           'input': 20.18, 'curve': [[200, 25.0], [1600, final]]}}}


def test_the_page_shows_the_runs_numbers_and_their_differences():
  rows = [Row('gaussian', 'Gaussian', ('n2n_noclip',)), Row('text', 'Text')]
  results = {'gaussian_n2n': _run('gaussian_n2n', 'l2', 29.91, best=30.02),
             'gaussian_n2c': _run('gaussian_n2c', 'l2', 30.13, wall=330.0),
             'gaussian_n2n_noclip': _run('gaussian_n2n_noclip', 'l2', 29.80),
             'gaussian': {'picture': {'image': 'chelsea.png', 'level': 25.0,
                                      'crop': [70, 145, 160]}}}
  titles = {'n2n': 'N2N', 'n2c': 'N2C', 'n2n_noclip': 'N2N, no clipping'}
  page = results_page.render(rows, titles, results)
  assert '**N2N minus N2C at equal budget: Gaussian -0.22 dB.**' in page
  assert ('| Gaussian | sigma 25 | l2 | 20.18 | **29.91** | 30.13 | -0.22 | 1600 x 8 | '
          '5.0 min / 5.5 min | 50.0 / 50.0 | 3 / 3 |') in page
  assert '| Gaussian: N2N, no clipping | sigma 25 | l2 | 29.80 | 29.91 | -0.11 | 3 |' in page
  assert '| Gaussian: N2N | sigma 25 | 29.91 | 30.02 (1400) |' in page
  assert 'Whole grid: 3 runs, 15.5 min' in page and 'commit abc1234' in page
  assert '![Gaussian: noisy, N2N, N2C, clean](results/gaussian.png)' in page
  assert 'Text |' not in page  # a row without runs is left out, not shown empty


def test_the_curves_are_well_formed_svg_with_one_line_per_series():
  svg = svg_plot.line_chart([('N2N', [(200, 25.0), (1600, 30.0)]),
                             ('N2C', [(200, 26.0), (1600, 30.5)])],
                            'Gaussian', 'step', 'PSNR (dB)', ('noisy input', 20.2))
  root = ElementTree.fromstring(svg)
  lines = root.findall('{http://www.w3.org/2000/svg}polyline')
  assert len(lines) == 2
  first = [tuple(map(float, point.split(','))) for point in lines[0].get('points').split()]
  # Later steps are further right; a higher PSNR is higher up (smaller y).
  assert first[1][0] > first[0][0] and first[1][1] < first[0][1]
  assert svg_plot._nice_ticks(17.3, 31.2) == [20.0, 25.0, 30.0]
