"""bench/results/grid.py's page and curves, from made-up results: every number
shown is the one given, the SVG is well formed, runs made from a changed
checkout are marked on the page, and the grid refuses to make them."""

import glob
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from bench import provenance
from bench.results import page as results_page
from bench.results import svg_plot

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def test_the_single_image_section_compares_at_equal_time_and_steps_and_states_the_goal():
  from bench.results import single_image as results_single_image  # pylint: disable=g-import-not-at-top
  results = {}
  finals = {'n2nb': 29.40, 'blind_spot': 27.10, 'n2n2': 29.90, 'n2c': 30.20,
            'n2nb_time': 29.70, 'blind_spot_time': 26.50, 'n2nb_f32': 29.30, 'n2n2_f32': 29.85}
  rates = {'n2nb': 240.0, 'blind_spot': 100.0, 'n2n2': 160.0, 'n2c': 160.0}
  for variant, final in finals.items():
    run = _run(f'gaussian_{variant}', 'l2', final)
    run['images_per_second'] = rates.get(variant, 160.0)
    if variant.endswith('_time'):
      run['train_steps'] = results_single_image.equal_time_steps(
          {'train_steps': 1600, 'images_per_second': 160.0},
          {'images_per_second': rates[variant[:-len('_time')]]})
    level = run['levels']['gaussian_25']
    if variant.startswith(results_single_image.SINGLE_IMAGE_VARIANTS):
      level['correlation'] = {'pearson': 0.95, 'spearman': 0.9, 'offset': 0.0101,
                              'evaluations': 8}
    results[f'single_gaussian_{variant}'] = run
  page = '\n'.join(results_page.single_image_section(results_single_image, results))
  # N2Nb is cheaper per step here: equal time gives it more steps, blind-spot fewer.
  assert results['single_gaussian_n2nb_time']['train_steps'] == 2400
  assert results['single_gaussian_blind_spot_time']['train_steps'] == 1000
  assert ('| equal training time (that of 1600 steps of N2N) | auto | 20.18 | 29.70 (2400 steps) '
          '| 26.50 (1000 steps) | 29.90 | 30.20 | -0.20 |') in page
  assert '| equal steps (1600 x 8) | auto | 20.18 | 29.40 | 27.10 | 29.90 | 30.20 | -0.50 |' in page
  assert '| equal steps (1600 x 8) | float32 | 20.18 | 29.30 | - | 29.85 | - | -0.55 |' in page
  assert ('**Goal: Neighbor2Neighbor within 1 dB of N2N with two captures: met** (-0.20 dB at '
          'equal training time, -0.50 dB at equal steps).') in page
  assert '| Neighbor2Neighbor (1 capture) | 240.0 | 0.67x |' in page
  assert '| blind-spot (1 capture), equal steps | 8 | 0.950 | 0.900 | 0.01010 |' in page
  assert 'Simulated 16-bit' not in page  # a section without runs is left out


def test_the_tta_section_shows_each_runs_gain_and_cost():
  results = {'tta': {
      'gaussian_n2n': {'levels': {'gaussian_25': {'input': 20.18, 'plain': 29.70, 'tta': 29.95}},
                       'cost': 8.1, 'machine': 'test CPU', 'commit': 'abc1234'},
      'impulse_n2n': {'levels': {'impulse_0.5': {'input': 11.4, 'plain': 21.1, 'tta': 21.5},
                                 'impulse_0.7': {'input': 10.0, 'plain': 18.7, 'tta': 18.8}},
                      'cost': 7.9, 'machine': 'test CPU', 'commit': 'abc1234'}}}
  page = '\n'.join(results_page.tta_section(results))
  assert '| gaussian_n2n | sigma 25 | 20.18 | 29.70 | 29.95 | +0.25 | 8.10x |' in page
  assert '| impulse_n2n | p 0.7 | 10.00 | 18.70 | 18.80 | +0.10 | 7.90x |' in page
  assert 'Gain from +0.10 to +0.40 dB, median +0.25 dB' in page
  assert results_page.tta_section({}) == []


def _figures_of(page, row_label):
  return next(line for line in page.splitlines() if line.startswith(f'| {row_label} |'))


def test_every_figure_of_a_run_from_a_changed_checkout_is_marked_and_counted():
  rows = [Row('gaussian', 'Gaussian', ('n2n_noclip',)), Row('text', 'Text')]
  results = {'gaussian_n2n': _run('gaussian_n2n', 'l2', 29.91),
             'gaussian_n2c': _run('gaussian_n2c', 'l2', 30.13),
             'gaussian_n2n_noclip': _run('gaussian_n2n_noclip', 'l2', 29.80),
             'text_n2n': _run('text_n2n', 'l1', 23.56),
             'text_n2c': _run('text_n2c', 'l1', 23.65),
             'gaussian': {'picture': {'image': 'chelsea.png', 'level': 25.0,
                                      'crop': [70, 145, 160]}},
             'text': {'picture': {'image': 'chelsea.png', 'level': 0.25,
                                  'crop': [70, 145, 160]}}}
  results['gaussian_n2c']['commit'] = 'abc1234+changes'
  results['gaussian_n2n_noclip']['commit'] = 'unknown'
  titles = {'n2n': 'N2N', 'n2c': 'N2C', 'n2n_noclip': 'N2N, no clipping'}
  page = results_page.render(rows, titles, results)
  mark = results_page.MARK
  assert ('**Not reproducible from a commit: 2 of the 5 runs and 0 of the 0 test-time '
          'augmentation measurements') in page
  assert '`python -m bench.results.grid --retrain --rows=gaussian`.' in page
  assert f'Gaussian -0.22 dB {mark}, Text -0.09 dB.' in page  # the headline
  assert f'| **29.91** | 30.13 {mark} | -0.22 |' in _figures_of(page, 'Gaussian')
  assert mark not in _figures_of(page, 'Text')
  assert f'| Gaussian: N2N, no clipping {mark} |' in page  # ablation and best tables
  assert f'| Gaussian: N2C {mark} | sigma 25 | 30.13 |' in page
  assert '| Gaussian: N2N | sigma 25 | 29.91 |' in page
  assert f': noisy | N2N | N2C | clean.* {mark}' in page  # the picture shows gaussian_n2c
  assert f'(results/gaussian_psnr.svg) {mark}' in page
  assert '(results/text_psnr.svg)\n' in page


def test_a_page_of_committed_runs_has_no_banner_and_no_mark():
  results = {'gaussian_n2n': _run('gaussian_n2n', 'l2', 29.91),
             'gaussian_n2c': _run('gaussian_n2c', 'l2', 30.13)}
  page = results_page.render([Row('gaussian', 'Gaussian')], {'n2n': 'N2N', 'n2c': 'N2C'},
                             results)
  assert 'Not reproducible' not in page and results_page.MARK not in page


def test_single_image_and_tta_figures_of_a_changed_checkout_are_marked():
  from bench.results import single_image as results_single_image  # pylint: disable=g-import-not-at-top
  results = {f'single_gaussian_{variant}': _run(f'single_gaussian_{variant}', 'l2', 29.0)
             for variant in results_single_image.VARIANTS}
  results['single_gaussian_n2nb']['commit'] = '53c2243+changes'
  results['tta'] = {'gaussian_n2n': {
      'levels': {'gaussian_25': {'input': 20.18, 'plain': 29.70, 'tta': 29.95}},
      'cost': 8.1, 'machine': 'test CPU', 'commit': '8ed2afc+changes'}}
  mark = results_page.MARK
  page = '\n'.join(results_page.single_image_section(results_single_image, results)
                    + results_page.tta_section(results))
  assert f'| equal steps (1600 x 8) | auto | 20.18 | 29.00 {mark} | 29.00 | 29.00 |' in page
  assert f'| Neighbor2Neighbor (1 capture) {mark} | 50.0 |' in page
  assert f'+0.00 dB at equal steps {mark})' in page  # the goal line
  assert f'| gaussian_n2n {mark} | sigma 25 |' in page
  banner = '\n'.join(results_page.provenance_banner([], results, results_single_image))
  assert 'runs and 1 of the 1 test-time augmentation measurements' in banner
  assert ('`python -m bench.results.grid --retrain --rows=single_gaussian`, then '
          '`python -m bench.results.grid --tta`.') in banner


def _git_checkout(directory):
  for command in (['init', '-q'], ['add', 'tracked.txt'],
                  ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first']):
    if command[0] == 'add':
      with open(os.path.join(directory, 'tracked.txt'), 'w') as tracked:
        tracked.write('committed\n')
    subprocess.run(['git', *command], cwd=directory, check=True)


def test_a_changed_or_untracked_file_makes_the_commit_label_unreproducible(tmp_path):
  _git_checkout(tmp_path)
  clean = provenance.require_clean_tree(tmp_path, allow_dirty=False)
  assert provenance.is_reproducible(clean) and '+' not in clean
  (tmp_path / 'new_module.py').write_text('')
  assert provenance.commit(tmp_path) == clean + provenance.DIRTY_SUFFIX
  assert not provenance.is_reproducible(provenance.commit(tmp_path))
  assert not provenance.is_reproducible('unknown')


def test_a_stamp_is_the_commit_label_host_and_day_of_the_measurement(tmp_path):
  import datetime  # pylint: disable=g-import-not-at-top
  _git_checkout(tmp_path)
  stamp = provenance.stamp(tmp_path)
  assert stamp['commit'] == provenance.commit(tmp_path)
  assert stamp['machine'] == provenance.machine_description()
  assert stamp['date'] == datetime.date.today().isoformat()
  (tmp_path / 'tracked.txt').write_text('changed\n')
  assert provenance.stamp(tmp_path)['commit'] == stamp['commit'] + provenance.DIRTY_SUFFIX


def test_figures_no_commit_reproduces_get_a_note_with_the_command_that_remakes_them():
  command = 'python -m bench.x --output=docs/bench/x.json'
  assert provenance.remake_note('abc1234', command) == ''
  assert provenance.remake_note('abc1234+changes', command) == (
      'Not reproducible from a commit: they were measured on a checkout with uncommitted '
      'changes (abc1234+changes); `python -m bench.x --output=docs/bench/x.json` remakes them '
      'from a clean checkout.')
  for unknown in (None, '', 'unknown'):
    assert provenance.remake_note(unknown, command).startswith(
        'Not reproducible from a commit: no commit was recorded when they were measured; `')


def test_a_grid_run_is_read_back_with_the_stamp_of_its_training_not_of_the_reading(tmp_path):
  from bench.results import grid as results_grid  # pylint: disable=g-import-not-at-top
  trained = {'commit': 'abc1234', 'machine': 'the training host', 'date': '2026-11-01'}
  (tmp_path / 'new').mkdir()
  (tmp_path / 'new' / results_grid.STAMP_FILE).write_text(json.dumps(trained))
  assert results_grid.training_stamp(str(tmp_path / 'new')) == trained
  # A run trained before the grid kept the whole stamp: its commit, and nothing made up.
  (tmp_path / 'old').mkdir()
  (tmp_path / 'old' / results_grid.OLD_COMMIT_FILE).write_text('def5678+changes\n')
  assert results_grid.training_stamp(str(tmp_path / 'old')) == {
      'commit': 'def5678+changes', 'machine': 'unknown', 'date': 'unknown'}
  assert results_grid.training_stamp(str(tmp_path)) == {
      'commit': 'unknown', 'machine': 'unknown', 'date': 'unknown'}


def test_the_grids_own_outputs_do_not_make_the_label_unreproducible(tmp_path):
  """The grid writes docs/results/ after each row; the rows after it were
  labelled "+changes" while no code had changed."""
  _git_checkout(tmp_path)
  clean = provenance.commit(tmp_path)
  (tmp_path / 'docs' / 'results').mkdir(parents=True)
  (tmp_path / 'docs' / 'results' / 'results.json').write_text('{}')
  (tmp_path / 'docs' / 'results.md').write_text('page')
  (tmp_path / 'docs' / 'bench').mkdir()
  (tmp_path / 'docs' / 'bench' / 'correlated_peers.json').write_text('{}')
  assert provenance.commit(tmp_path) == clean
  (tmp_path / 'docs' / 'bench' / 'other.json').write_text('{}')
  assert provenance.commit(tmp_path) == clean + provenance.DIRTY_SUFFIX
  (tmp_path / 'docs' / 'bench' / 'other.json').unlink()
  (tmp_path / 'docs' / 'results_helper.py').write_text('')
  assert provenance.commit(tmp_path) == clean + provenance.DIRTY_SUFFIX


@pytest.mark.slow
def test_the_grid_refuses_to_train_from_a_changed_checkout_unless_allowed(tmp_path):
  """results_grid.main in a subprocess (its flags are absl's globals), pointed at a
  changed checkout, with train() replaced by one that says it would train."""
  _git_checkout(tmp_path)
  (tmp_path / 'tracked.txt').write_text('changed\n')
  driver = (
      'import sys\n'
      'from absl import app\n'
      'from bench.results import grid as results_grid\n'
      f'results_grid.REPO_ROOT = {str(tmp_path)!r}\n'
      'def train(*args, **kwargs):\n'
      '  raise SystemExit("would train")\n'
      'results_grid.train = train\n'
      'app.run(results_grid.main)\n')

  def grid(*flags):
    return subprocess.run([sys.executable, '-c', driver, '--rows=poisson',
                           f'--runs_dir={tmp_path / "runs"}', *flags], cwd=REPO_ROOT,
                          capture_output=True, text=True)

  refused = grid()
  assert refused.returncode != 0
  assert 'uncommitted changes (tracked.txt)' in refused.stderr
  assert 'would train' not in refused.stdout + refused.stderr
  allowed = grid('--allow_dirty')
  assert 'would train' in allowed.stdout + allowed.stderr


def _correlated_run(name, own, own_input, val, scheme, colour=(0.001, -0.002, 0.0005),
                    spearman=None):
  run = _run(name, 'l2', val)
  run['levels'] = {'captures': {'final': val, 'best': val, 'best_step': 1200, 'input': 24.40,
                                'curve': [[200, 25.0], [1200, val]]}}
  if spearman is not None:
    run['levels']['captures']['correlation'] = {'pearson': 0.97, 'spearman': spearman,
                                                'offset': 0.01, 'evaluations': 6}
  run.update(train_steps=1200, batch_size=4, crop_size=128, scheme=scheme,
             own_captures={'psnr': own, 'input': own_input,
                           'images': [{'name': 'a', 'psnr': own, 'input_psnr': own_input,
                                       'colour_error': list(colour)}]})
  return run


def _correlated_results(own):
  from bench.results import correlated as results_correlated  # pylint: disable=g-import-not-at-top
  schemes = {'n2nb_scheme': 'pixel-shuffle 2/2', 'blind_spot_scheme': 'pixel-shuffle 4/1'}
  spearman = {'n2nb': 0.9, 'n2nb_scheme': 0.8, 'blind_spot': 0.95, 'blind_spot_scheme': 0.6}
  results = {f'correlated_camera_{variant}': _correlated_run(
      f'correlated_camera_{variant}', psnr, 24.46, psnr - 0.5, schemes.get(variant, 'none'),
      spearman=spearman.get(variant))
             for variant, psnr in own.items()}
  results['correlated_camera'] = {'scenes': {'own_captures': 9, 'validation': 2}, 'diagnosis': {
      'single': {'kind': 'correlated', 'correlation_x': [0.59, 0.15], 'correlation_y': [0.58, 0.14],
                 'recommended': ['--noise=none', '--method=neighbor2neighbor', '--crop_size=128']},
      'pairs': {'kind': 'correlated', 'correlation_x': [0.58, 0.13], 'correlation_y': [0.58, 0.13]}}}
  return results_correlated, results


def test_the_correlated_section_scores_each_scheme_and_states_the_camera_goal():
  own = {'n2nb': 25.50, 'n2nb_scheme': 27.60, 'blind_spot': 25.40, 'blind_spot_scheme': 24.90,
         'n2n2': 27.70, 'n2c': 28.40}
  correlated, results = _correlated_results(own)
  peers = {'peers': {'bm3d': {'title': 'BM3D 4.0.3', 'commit': 'abc1234', 'host': 'test CPU',
                             'datasets': {
      'correlated_camera': {'own_captures': {'psnr': 26.00,
                                             'images': [{'colour_error': [0.01, 0.0, 0.0]}]},
                            'validation': {'psnr': 25.00}, 'setting': 'true sigma',
                            'cost': '12.3 s per megapixel'}}}}}
  page = '\n'.join(results_page.correlated_section(correlated, results, peers))
  # Best single-image: Neighbor2Neighbor with its scheme, +3.14 over the input, -0.10 from N2N.
  assert ('**Goal on the camera pipeline: the best single-image method at least 3 dB over the '
          'input: met (+3.14 dB); within 1.5 dB of N2N on two captures: met (-0.10 dB).** The '
          'best is Neighbor2Neighbor, with scheme') in page
  assert ('| method | scheme | own captures (9) | gain | validation scenes (2) | gain |') in page
  assert '| input (noisy) | - | 24.46 | - | 24.40 | - | - | - | - |' in page
  # Every run's row: own-capture PSNR and gain, validation PSNR and gain, colour, speed, time.
  for variant, scheme in (('Neighbor2Neighbor, no scheme', 'none'),
                          ('Neighbor2Neighbor, with scheme', 'pixel-shuffle 2/2'),
                          ('blind-spot, no scheme', 'none'),
                          ('blind-spot, with scheme', 'pixel-shuffle 4/1'),
                          ('N2N (2 captures)', 'none'), ('N2C (clean target)', 'none')):
    psnr = own[next(key for key, title in correlated.VARIANT_TITLES.items() if title == variant)]
    assert (f'| {variant} | {scheme} | {psnr:.2f} | {psnr - 24.46:+.2f} | {psnr - 0.5:.2f} | '
            f'{psnr - 0.5 - 24.40:+.2f} | 0.5 | 50.0 | 5.0 min of training |') in page, variant
  assert ('| BM3D 4.0.3 | true sigma | 26.00 | +1.54 | 25.00 | +0.60 | 2.6 | - | '
          '12.3 s per megapixel |') in page
  assert 'Measured on test CPU at commit abc1234.' in page
  # The ranking lists the single-image runs only, and says where it stops ranking.
  assert '| blind-spot, with scheme | 6 | 0.970 | 0.600 |' in page
  assert '| N2N (2 captures) | 6 |' not in page
  assert ('ranks the evaluations as the true error does (Spearman rho at least 0.8) in 3 of 4 '
          'runs; it stops doing so for blind-spot, with scheme.') in page
  assert ('| Camera pipeline (demosaiced raw noise) | correlated; correlation x/y at lags 1, 2: '
          '0.59/0.58, 0.15/0.14 | `--method=neighbor2neighbor` `--crop_size=128` | correlated; '
          'correlation x/y at lags 1, 2: 0.58/0.58, 0.13/0.13 |') in page
  assert '### sCMOS' not in page  # a dataset without runs is left out


def test_the_camera_goal_is_met_at_its_bounds_and_missed_beyond_them():
  # Gain exactly 3 dB and gap exactly -1.5 dB meet the goal; a hundredth less misses it.
  correlated, results = _correlated_results({'n2nb_scheme': 27.46, 'n2n2': 28.96})
  measured = correlated.goal(results)
  assert measured['variant'] == 'n2nb_scheme'
  assert measured['gain_met'] and measured['gap_met']
  correlated, results = _correlated_results({'n2nb_scheme': 27.45, 'n2n2': 28.96})
  measured = correlated.goal(results)
  assert not measured['gain_met'] and not measured['gap_met']
  page = '\n'.join(results_page.correlated_section(correlated, results))
  assert 'input: missed (+2.99 dB); within 1.5 dB of N2N on two captures: missed (-1.51 dB)' in page
  # Each verdict on its own: the gain met, the gap missed.
  correlated, results = _correlated_results({'n2nb_scheme': 27.46, 'n2n2': 29.00})
  measured = correlated.goal(results)
  assert measured['gain_met'] and not measured['gap_met']
  # The best single-image run is chosen, whichever variant it is.
  correlated, results = _correlated_results({'n2nb_scheme': 25.0, 'blind_spot': 26.0,
                                             'n2n2': 27.0})
  assert correlated.goal(results)['variant'] == 'blind_spot'


def test_the_scheme_column_names_the_strides_and_line_each_run_trained_with():
  from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
  from n2n import settings as settings_lib  # pylint: disable=g-import-not-at-top
  from bench.results import correlated as results_correlated  # pylint: disable=g-import-not-at-top

  def scheme(**flags):
    return results_correlated.scheme_of(settings_lib.with_flag_values(config_lib.TrainConfig(),
                                                                      flags))

  assert scheme(method='pairs') == '-'
  # 0 (left to train.py, which never ran here) trains as stride 1.
  assert scheme(method='neighbor2neighbor') == 'none'
  assert scheme(method='neighbor2neighbor', neighbor2neighbor_stride=2,
                neighbor2neighbor_inference_stride=2) == 'pixel-shuffle 2/2'
  assert scheme(method='blind_spot', blind_spot_stride=4, blind_spot_inference_stride=1,
                blind_spot_refinement_passes=3) == 'pixel-shuffle 4/1, 3 refinement passes'
  assert scheme(method='neighbor2neighbor', neighbor2neighbor_stride=2,
                neighbor2neighbor_inference_stride=2, neighbor2neighbor_refinement_passes=2,
                neighbor2neighbor_inference_orientations=8) == (
                    'pixel-shuffle 2/2, 2 refinement passes, 8 orientations')
  assert scheme(method='blind_spot', blind_spot_line='rows',
                blind_spot_line_span=63) == 'structN2V rows, span 63'
  assert scheme(method='blind_spot', blind_spot_line='none') == 'none'
  # 'auto' (left to train.py, which never ran here) trains without a line.
  assert scheme(method='blind_spot', blind_spot_line='auto') == 'none'


def test_each_scenes_first_capture_is_copied_whatever_its_format(tmp_path):
  from bench.results import single_image as results_single_image  # pylint: disable=g-import-not-at-top
  for scene, extension in (('a', '.png'), ('b', '.tif')):
    folder = tmp_path / 'scenes' / scene
    folder.mkdir(parents=True)
    for name in ('capture_00', 'capture_01', 'reference'):
      (folder / f'{name}{extension}').write_bytes(f'{scene}/{name}'.encode())
  results_single_image.copy_first_captures(tmp_path / 'scenes', tmp_path / 'first')
  assert sorted(os.listdir(tmp_path / 'first')) == ['a.png', 'b.tif']
  assert (tmp_path / 'first' / 'a.png').read_bytes() == b'a/capture_00'
  assert (tmp_path / 'first' / 'b.tif').read_bytes() == b'b/capture_00'


def test_a_strip_of_grayscale_panels_is_written_as_gray_rgb(tmp_path):
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from bench.results import grid as results_grid  # pylint: disable=g-import-not-at-top
  size = results_grid.PICTURE_CROP
  panels = [np.full([size + 10, size + 20, 1], value, np.float32) for value in (0.2, 0.6)]
  crop = results_grid.write_strip(panels, str(tmp_path / 'strip.png'))
  pixels = tf.io.decode_png(tf.io.read_file(str(tmp_path / 'strip.png'))).numpy()
  assert crop == [5, 10, size]
  assert pixels.shape == (size, 2 * size + 4, 3)
  assert (pixels[:, :size] == 51).all() and (pixels[:, size + 4:] == 153).all()
  assert (pixels[:, size:size + 4] == 255).all()  # the white gap between panels


def test_the_longer_volume_training_section_shows_each_points_difference_and_the_goal():
  from bench.results import volumes_curve as results_volumes_curve  # pylint: disable=g-import-not-at-top

  def run(points):
    return {'points': [{'step': step, 'training_minutes': minutes, 'psnr': psnr}
                       for step, minutes, psnr in points]}

  results = {'commit': 'abc1234', 'machine': 'test CPU', 'date': '2026-11-26', 'minutes': 20.0,
             'runs': {'pairs_2d': run([(1000, 4.0, [36.0, 37.0]), (5000, 20.0, [38.0, 38.5])]),
                      'pairs_3d': run([(180, 4.1, [35.0, 35.5]), (900, 19.9, [39.5, 39.75])])}}
  page = '\n'.join(results_volumes_curve.section(results, 1.0))
  assert '| 1 | 4.0 | 1000 | 36.50 | 4.1 | 180 | 35.25 | -1.25 |' in page
  assert '| 2 | 20.0 | 5000 | 38.25 | 19.9 | 900 | 39.62 | +1.38 |' in page
  assert ('At the last point, the only finished run, 3D - 2D is +1.38 dB: the 1 dB goal is met '
          'at this training time (first point: -1.25 dB). 3D was ahead by 1 dB or more at '
          'point 2.') in page
  results['runs']['pairs_3d']['points'][0]['psnr'] = [37.5, 37.5]  # +1.00: the goal exactly
  page = '\n'.join(results_volumes_curve.section(results, 1.0))
  assert '3D was ahead by 1 dB or more at points 1, 2.' in page
  for point in results['runs']['pairs_3d']['points']:
    point['psnr'] = [36.99, 36.99]  # -0.01 and -1.26: short of 1 dB
  page = '\n'.join(results_volumes_curve.section(results, 1.0))
  assert 'is -1.26 dB: the 1 dB goal is not met at this training time' in page
  assert '3D was ahead by 1 dB or more at no point.' in page
  # Ahead at point 2 only because the 2D run dropped there (36.50 -> 30.00): a dip.
  results['runs']['pairs_2d']['points'][1]['psnr'] = [30.0, 30.0]
  page = '\n'.join(results_volumes_curve.section(results, 1.0))
  assert ('3D was ahead by 1 dB or more at point 2; at point 2 a run had scored below its '
          'previous point.') in page
  assert results_volumes_curve.section(None, 1.0) == []


def test_the_volume_section_counts_only_volume_methods_toward_the_goal_and_names_each_rows_commit():
  from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top

  def run(method, dims, psnr, commit, date):
    return {'dims': dims, 'method': method, 'steps': 100 * dims, 'batch_size': 2,
            'wall_seconds': 60.0, 'training_seconds': 50.0 + dims, 'psnr': psnr,
            'commit': commit, 'machine': 'test CPU', 'date': date}

  # 3D - 2D: pairs +1.00 (met exactly), NB2 -0.50, blind-spot +0.99 (short by a rounding
  # step), neighbouring frames +3.00 and N2C +2.00 (both outside the count).
  scores = {'pairs': ([30.0, 31.0], [31.5, 31.5]),
            'neighbor2neighbor': ([30.0, 30.0], [29.5, 29.5]),
            'blind_spot': ([29.0, 29.0], [29.99, 29.99]),
            'neighbouring_frames': ([25.0, 25.0], [28.0, 28.0]),
            'clean_targets': ([32.0, 32.0], [34.0, 34.0])}
  runs = {}
  # As main writes a --methods run: the newest commit on top, every row stamped with its own.
  for method, (flat, deep) in scores.items():
    commit, date = (('new5678', '2026-11-27') if method in ('neighbouring_frames', 'clean_targets')
                    else ('old1234', '2026-11-26'))
    runs[f'{method}_3d'] = run(method, 3, deep, commit, date)
    runs[f'{method}_2d'] = run(method, 2, flat, commit, date)
  results = {'commit': 'new5678', 'machine': 'test CPU', 'date': '2026-11-27',
             'spec': {'shape': [32, 128, 128], 'z_spacing': 4.0, 'peak_photons': 30.0,
                      'read_noise': 1.5, 'train_volumes': 6, 'test_volumes': 2},
             'movie_spec': {'frames': {'train': 64, 'test': 32}, 'drift_per_frame': [0, 0.1, 0.05],
                            'train_movies': 6, 'test_movies': 2},
             'input_psnr': [22.0, 22.5], 'movie_input_psnr': [18.0, 19.0], 'runs': runs,
             'seams': {'tile': [16, 64, 64], 'overlap': [8, 16, 16], 'max': 0.004,
                       'mean': 0.0002, 'commit': 'old1234'},
             'pictures': {'xy': 'results/xy.png', 'xz': 'results/xz.png'},
             'pictured': ['noisy', 'reference']}
  page = '\n'.join(results_volumes.section(results))
  assert ('Made by `bench/results/volumes.py` (Noise2Noise pairs, Neighbor2Neighbor, blind-spot: '
          'at old1234 on test CPU, 2026-11-26; neighbouring frames, clean targets: at new5678 on '
          'test CPU, 2026-11-27).') in page
  assert '| noisy input (volumes) | 22.25 | | | | |' in page
  assert '| noisy input (movies) | 18.50 | | | | |' in page
  assert '| Noise2Noise, two acquisitions | 30.50 | 31.50 | +1.00 | 200 / 300 | 52 / 53 |' in page
  assert ('met for 1 of 3 methods** (Noise2Noise pairs: +1.00 dB, met; Neighbor2Neighbor: '
          '-0.50 dB, not met; blind-spot: +0.99 dB, not met). Outside the count: neighbouring '
          'frames +3.00 dB (movies, not anisotropic volumes); clean targets +2.00 dB (needs clean '
          'data).') in page
  assert 'network in float32 (at old1234).' in page
  # Measured all at once: one provenance, no row names.
  for found in runs.values():
    found.update(commit='old1234', date='2026-11-26')
  results.update(commit='old1234', date='2026-11-26')
  page = '\n'.join(results_volumes.section(results))
  assert 'Made by `bench/results/volumes.py` at old1234 on test CPU, 2026-11-26.' in page
  # A row not measured leaves the count and is named as not measured.
  del runs['blind_spot_2d'], runs['neighbouring_frames_3d']
  page = '\n'.join(results_volumes.section(results))
  assert 'met for 1 of 2 methods** (Noise2Noise pairs' in page
  assert '| noisy input (movies)' not in page and 'neighbouring frames +3.00' not in page
  assert ('Not measured here yet: Neighbor2Neighbor in 2x2x2 cells, blind-spot, neighbouring '
          'frames.') in page


def test_z_context_blur_finds_z_worth_blurring_only_where_planes_share_signal():
  import numpy as np  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  noise = rng.normal(scale=0.2, size=(16, 32, 32))
  # Each plane its own smooth picture (nothing shared along z), and one smooth
  # picture repeated in every plane (everything shared).
  own = np.stack([np.sin(np.arange(32) / 3.0 + phase)[:, None] * np.ones([1, 32])
                  for phase in rng.uniform(0, 2 * np.pi, 16)])
  shared = np.repeat(own[:1], 16, axis=0)
  for reference, along_z in ((own, False), (shared, True)):
    flat = results_volumes_z_context.best_blur([(reference + noise, reference)], (0.0,))
    deep = results_volumes_z_context.best_blur([(reference + noise, reference)],
                                               results_volumes_z_context.SIGMAS_Z)
    if along_z:
      assert deep[1] >= 2.0 and deep[0] - flat[0] > 3.0, (flat, deep)
    else:
      assert deep[1] <= 0.5 and deep[0] - flat[0] < 0.5, (flat, deep)


def test_z_context_samples_the_same_objects_in_the_same_depth_at_every_z_step():
  import dataclasses  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from n2n.data import phantom  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top

  def side_view(spec):
    """[32, X]: the fluorescence summed over y, in 32 slabs of 4 xy pixels of depth."""
    fluorescence = phantom.render(spec, phantom._objects(spec, np.random.default_rng(7)))
    return fluorescence.sum(axis=1).reshape(32, -1, spec.shape[2]).mean(axis=1)

  views = {}
  for z_step, planes in ((4.0, 32), (2.0, 64), (1.0, 128)):
    spec = results_volumes_z_context.spec_at(z_step)
    assert spec.shape == (planes, 128, 128) and spec.z_spacing == z_step
    views[z_step] = side_view(spec)
  for z_step in (2.0, 1.0):
    correlation = np.corrcoef(views[4.0].ravel(), views[z_step].ravel())[0, 1]
    assert correlation > 0.95, (z_step, correlation)
  # 32 planes at z step 1 (a slab a quarter as deep) hold the objects elsewhere in z:
  # the check above would see it.
  thin = dataclasses.replace(results_volumes_z_context.spec_at(1.0), shape=(32, 128, 128))
  fluorescence = phantom.render(thin, phantom._objects(thin, np.random.default_rng(7)))
  correlation = np.corrcoef(views[4.0].ravel(), fluorescence.sum(axis=1).ravel())[0, 1]
  assert correlation < 0.8, correlation


def _assert_refuses_in_one_line(parse, cases):
  """For each (values, message): parse(values) raises a one-line ValueError
  starting with message."""
  for values, message in cases:
    with pytest.raises(ValueError) as error:
      parse(values)
    assert str(error.value).startswith(message), values
    assert '\n' not in str(error.value)


def test_z_context_refuses_z_steps_that_are_not_positive_whole_plane_counts_or_repeat():
  from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top
  assert results_volumes_z_context.parse_z_steps(['2', '1', '0.5']) == [2.0, 1.0, 0.5]
  _assert_refuses_in_one_line(results_volumes_z_context.parse_z_steps, (
      (['x'], "--network_z_steps: 'x' is not a number"),
      (['0'], '--network_z_steps: z step 0: '),
      (['-2'], '--network_z_steps: z step -2: '),
      (['3'], '--network_z_steps: z step 3: 32 planes at z step 4 are no whole number of '
              'planes at it'),
      (['2', '2.0'], '--network_z_steps: 2.0 is given twice')))


def test_the_z_context_section_shows_each_z_step_and_each_network_row_with_its_commit():
  from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top

  def blur(psnr, sigma_z):
    return {'psnr': psnr, 'sigma_z': sigma_z, 'sigma_xy': 1.2}

  def run(steps, seconds, psnr, **stamp):
    return {'steps': steps, 'training_seconds': seconds, 'psnr': psnr, **stamp}

  results = {'commit': 'abc1234', 'machine': 'test CPU', 'date': '2026-11-26',
             'spec': {'shape': [32, 128, 128], 'z_spacing': 4.0, 'psf_sigma_xy': 1.2,
                      'psf_axial_ratio': 3.0, 'peak_photons': 30.0},
             # A filter row of the first format (no peak photons: the table's).
             'z_steps': [{'z_step': 4.0, 'shape': [32, 128, 128], 'input': 22.0,
                          'xy': blur(34.0, 0.0), 'xyz': blur(34.5, 0.6)},
                         {'z_step': 1.0, 'peak_photons': 30.0, 'shape': [128, 128, 128],
                          'input': 21.0, 'xy': blur(32.0, 0.0), 'xyz': blur(35.75, 1.5)},
                         {'z_step': 4.0, 'peak_photons': 5.0, 'shape': [32, 128, 128],
                          'input': 7.5, 'xy': blur(25.25, 0.0), 'xyz': blur(27.75, 1.0)}],
             # A row without method or stamp (pairs at the file's own commit and
             # machine), then one kept from another commit and machine, at 5 photons.
             'networks': [{'z_step': 2.0, 'spec': results_volumes_z_context.spec_record(2.0),
                           'pairs_3d': run(300, 400.4, [36.0, 36.5]),
                           'pairs_2d': run(1800, 360.6, [36.5, 37.0])},
                          {'z_step': 2.0, 'method': 'neighbor2neighbor', 'commit': 'fed9876',
                           'machine': 'old CPU', 'date': '2026-11-20',
                           'spec': results_volumes_z_context.spec_record(2.0, 5.0),
                           'neighbor2neighbor_3d': run(300, 200, [37.0, 37.0]),
                           'neighbor2neighbor_2d': run(1400, 180, [36.0, 36.0])}]}
  table = {'commit': 'def5678', 'machine': 'table CPU',
           'spec': {'shape': [32, 128, 128], 'z_spacing': 4.0, 'peak_photons': 30.0,
                    'read_noise': 1.5},
           'runs': {'pairs_2d': run(1629, 343, [37.5, 38.0], commit='c425c7a'),
                    'pairs_3d': run(300, 414, [35.5, 35.75], commit='c425c7a'),
                    'blind_spot_2d': run(1615, 332, [34.0, 34.0]),
                    'blind_spot_3d': run(300, 412, [35.0, 35.0])}}
  page = '\n'.join(results_volumes_z_context.section(results, table, 1.0))
  # Axial s.d. 3.6 xy pixels: 0.9 planes at z step 4, 3.6 at z step 1.
  assert '| 30 | 4 | 32 | 0.90 | 22.00 | 34.00 | 34.50 (0.6) | +0.50 |' in page
  assert '| 30 | 1 | 128 | 3.60 | 21.00 | 32.00 | 35.75 (1.5) | +3.75 |' in page
  assert '| 5 | 4 | 32 | 0.90 | 7.50 | 25.25 | 27.75 (1) | +2.50 |' in page
  assert ('| 30 | 4 | Noise2Noise pairs | 37.75 | 35.62 | -2.12 | 1629 / 300 | 343 / 414 | '
          'c425c7a on table CPU (the table above) |') in page
  assert ('| 30 | 4 | blind-spot | 34.00 | 35.00 | +1.00 | 1615 / 300 | 332 / 412 | '
          'def5678 on table CPU (the table above) |') in page
  assert ('| 30 | 2 | Noise2Noise pairs | 36.75 | 36.25 | -0.50 | 1800 / 300 | 361 / 400 | '
          'abc1234 on test CPU |') in page
  assert ('| 5 | 2 | Neighbor2Neighbor | 36.00 | 37.00 | +1.00 | 1400 / 300 | 180 / 200 | '
          'fed9876 on old CPU |') in page
  assert ('3D ahead of 2D per plane by 1 dB or more: blind-spot at z step 4, 30 photons, '
          'Neighbor2Neighbor at z step 2, 5 photons.') in page
  assert 'at abc1234 on test CPU, 2026-11-26' in page
  # Below its phantom's best blur in xy (none here: blind-spot's 2D 34.00 equals
  # it); only rows whose phantom has a filter row are compared.
  assert 'below the best blur' not in page
  results['z_steps'].append({'z_step': 2.0, 'peak_photons': 5.0, 'shape': [64, 128, 128],
                             'input': 7.5, 'xy': blur(36.5, 0.0), 'xyz': blur(38.0, 1.5)})
  assert ('Networks that scored below the best blur in xy alone of their phantom (the first '
          'table): Neighbor2Neighbor 2D at z step 2, 5 photons.') in '\n'.join(
              results_volumes_z_context.section(results, table, 1.0))
  results['z_steps'][-1]['xy']['psnr'] = 37.5
  results['z_steps'][0]['xy']['psnr'] = 34.25
  assert ('alone of their phantom (the first table): blind-spot 2D at z step 4, 30 photons; '
          'Neighbor2Neighbor 2D and 3D at z step 2, 5 photons.') in '\n'.join(
              results_volumes_z_context.section(results, table, 1.0))
  results['z_steps'].pop()
  results['z_steps'][0]['xy']['psnr'] = 34.0
  # Rows measured on another phantom or white level, or without a spec, are
  # left out and counted.
  stale = [dict(results['networks'][1], spec={
               **results_volumes_z_context.spec_record(2.0, 5.0), 'white_level': 600.0}),
           {key: value for key, value in results['networks'][0].items() if key != 'spec'}]
  page = '\n'.join(results_volumes_z_context.section(
      {**results, 'networks': results['networks'] + stale}, None, 1.0))
  assert page.count('| Neighbor2Neighbor |') == 1 and page.count('| Noise2Noise pairs |') == 1
  assert 'Left out: 2 rows of the JSON measured on another phantom or white level' in page
  assert 'Left out' not in '\n'.join(results_volumes_z_context.section(results, None, 1.0))
  # +0.99 misses the goal; without the table only the rows measured here.
  results['networks'][1]['neighbor2neighbor_3d']['psnr'] = [36.99, 36.99]
  page = '\n'.join(results_volumes_z_context.section(results, None, 1.0))
  assert '3D ahead of 2D per plane by 1 dB or more: in no row.' in page
  assert '(the table above)' not in page
  # A table measured on another phantom is left out.
  table['spec']['peak_photons'] = 60.0
  assert '(the table above)' not in '\n'.join(
      results_volumes_z_context.section(results, table, 1.0))
  # Runs of one row from two commits are both named.
  results['networks'][0]['pairs_3d']['commit'] = 'bbb2222'
  assert '| 2D: abc1234 on test CPU; 3D: bbb2222 on test CPU |' in '\n'.join(
      results_volumes_z_context.section(results, None, 1.0))
  assert results_volumes_z_context.section(None) == []


def test_z_context_keeps_the_rows_it_does_not_measure_only_if_measured_on_this_phantom():
  import pytest  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as z_context  # pylint: disable=g-import-not-at-top
  previous = {'commit': 'old1111', 'machine': 'old CPU', 'date': '2026-11-25',
              'networks': [{'z_step': 2.0, 'pairs_3d': {}, 'pairs_2d': {}},
                           {'z_step': 1.0, 'spec': z_context.spec_record(1.0)},
                           {'z_step': 2.0, 'method': 'blind_spot', 'commit': 'mid2222',
                            'machine': 'mid CPU', 'date': '2026-11-26',
                            'spec': z_context.spec_record(2.0)},
                           {'z_step': 4.0, 'method': 'pairs', 'commit': 'dim3333',
                            'machine': 'dim CPU', 'date': '2026-11-27',
                            'spec': z_context.spec_record(4.0, 5.0)}]}
  kept = z_context.kept_networks(previous, {(2.0, 30.0, 'pairs')})
  assert [(row['z_step'], row['method'], row['commit'], row['machine']) for row in kept] == [
      (1.0, 'pairs', 'old1111', 'old CPU'), (2.0, 'blind_spot', 'mid2222', 'mid CPU'),
      (4.0, 'pairs', 'dim3333', 'dim CPU')]
  # The same method and z step at other photons is another row.
  kept = z_context.kept_networks(previous, {(2.0, 30.0, 'pairs'), (1.0, 30.0, 'pairs')})
  assert [row['commit'] for row in kept] == ['mid2222', 'dim3333']
  kept = z_context.kept_networks(previous, {(2.0, 30.0, 'pairs'), (4.0, 5.0, 'pairs')})
  assert [row['commit'] for row in kept] == ['old1111', 'mid2222']
  assert z_context.kept_networks(None, set()) == []
  # The first row has no spec (the first format): it cannot be kept, only measured again.
  with pytest.raises(ValueError, match='the pairs row at z step 2, 30 photons in .* was '
                     'measured on another phantom'):
    z_context.kept_networks(previous, {(1.0, 30.0, 'pairs')})
  previous['networks'][1]['spec'] = {**z_context.spec_record(1.0), 'read_noise': 3.0}
  with pytest.raises(ValueError, match='the pairs row at z step 1, 30 photons '):
    z_context.kept_networks(previous, {(2.0, 30.0, 'pairs')})
  # The same phantom at another white level (the 5-photon rows once had the table's 600).
  previous['networks'][1]['spec'] = z_context.spec_record(1.0)
  previous['networks'][3]['spec'] = {**z_context.spec_record(4.0, 5.0), 'white_level': 600.0}
  with pytest.raises(ValueError, match='the pairs row at z step 4, 5 photons .* another phantom '
                     'or white level'):
    z_context.kept_networks(previous, {(2.0, 30.0, 'pairs')})
  # Photons without a white level now cannot be kept either.
  previous['networks'][3]['spec'] = {**z_context.spec_record(4.0, 5.0), 'peak_photons': 7.0}
  with pytest.raises(ValueError, match='the pairs row at z step 4, 7 photons '):
    z_context.kept_networks(previous, {(2.0, 30.0, 'pairs')})


def test_z_context_refuses_peak_photons_not_positive_repeated_or_without_a_white_level():
  from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top
  assert results_volumes_z_context.parse_peak_photons(['30', '5', '10']) == [30.0, 5.0, 10.0]
  _assert_refuses_in_one_line(results_volumes_z_context.parse_peak_photons, (
      (['dim'], "--network_peak_photons: 'dim' is not a number"),
      (['2.5'], '--network_peak_photons: 2.5 photons: no white level chosen for it; one of '
                '30, 10, 5'),
      (['0'], '--network_peak_photons: peak photons 0: not a positive'),
      (['-5'], '--network_peak_photons: peak photons -5: not a positive'),
      (['5', '5.0'], '--network_peak_photons: 5.0 is given twice')))


def test_z_context_phantoms_at_fewer_photons_keep_the_objects_and_add_noise():
  import numpy as np  # pylint: disable=g-import-not-at-top
  from n2n.data import phantom  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top
  bright, dim = (results_volumes_z_context.spec_at(4.0, peak) for peak in (30.0, 5.0))
  assert bright == results_volumes_z_context.spec_at(4.0)
  assert dim.peak_photons == 5.0 and dim.shape == bright.shape
  (bright_captures, bright_reference), (dim_captures, dim_reference) = (
      phantom.phantom_scene(spec, 100) for spec in (bright, dim))
  # The same objects: the references are one affine map of each other (photons
  # background + peak x fluorescence, counts offset + gain x photons).
  offset, gain = bright.camera_offset, bright.counts_per_photon
  signal_bright = (bright_reference - offset) / gain - bright.background_photons
  signal_dim = (dim_reference - offset) / gain - dim.background_photons
  # Counts are rounded: half a count is 0.5 / gain photons in each.
  rounding = 0.5 / gain * (1 / 30.0 + 1 / 5.0)
  assert np.abs(signal_bright / 30.0 - signal_dim / 5.0).max() <= rounding + 1e-9
  # Fewer photons: a lower signal-to-noise ratio, in photons.
  def snr(captures, reference):
    return float(np.std(reference.astype(np.float64)) /
                 np.std(captures[0].astype(np.float64) - reference))
  assert snr(dim_captures, dim_reference) < 0.6 * snr(bright_captures, bright_reference)
  assert results_volumes_z_context.data_folder(4.0, 30.0).endswith('z_step_4')
  assert results_volumes_z_context.data_folder(4.0, 5.0).endswith('z_step_4_peak_5')


def test_volume_data_are_written_again_only_when_the_phantom_changed(tmp_path, monkeypatch):
  import dataclasses  # pylint: disable=g-import-not-at-top
  import json  # pylint: disable=g-import-not-at-top
  import os  # pylint: disable=g-import-not-at-top
  from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
  written = []

  def fake_prepare(spec, data, white_level):
    # What prepare_volumes leaves: its parts, each naming the spec it came from.
    written.append(spec.peak_photons if white_level is None else (spec.peak_photons, white_level))
    for part in results_volumes.VOLUME_PARTS:
      os.makedirs(os.path.join(data, part), exist_ok=True)
      with open(os.path.join(data, part, 'from.txt'), 'w') as marker:
        marker.write(f'{spec.peak_photons:g}')
    for records in ('records_3d', 'records_2d'):
      with open(os.path.join(data, records, 'manifest.json'), 'w') as manifest:
        manifest.write('{}')

  monkeypatch.setattr(results_volumes, 'prepare_volumes', fake_prepare)
  data = str(tmp_path / 'volumes')
  # Others' folders beside the volumes (the movies' data, the z-context phantoms) stay.
  others = ('movies', 'movie_pairs', 'records_movies_3d', 'records_movie_pairs_2d', 'z_step_2',
            'z_step_4_peak_5')
  for other in others:
    os.makedirs(os.path.join(data, other))
  bright = results_volumes.SPEC
  dim = dataclasses.replace(bright, peak_photons=5.0)
  results_volumes.ensure_volumes(bright, data)
  results_volumes.ensure_volumes(bright, data)
  assert written == [30.0]
  with open(os.path.join(data, 'spec.json')) as record:
    assert json.load(record) == results_volumes.volume_record(bright)
  os.makedirs(os.path.join(data, 'records_2d', 'stale'))
  results_volumes.ensure_volumes(dim, data)
  assert written == [30.0, 5.0]
  assert not os.path.exists(os.path.join(data, 'records_2d', 'stale'))
  for part in results_volumes.VOLUME_PARTS:
    with open(os.path.join(data, part, 'from.txt')) as marker:
      assert marker.read() == '5'
  assert all(os.path.isdir(os.path.join(data, other)) for other in others)
  # Interrupted before its spec.json was written: written again.
  os.remove(os.path.join(data, 'spec.json'))
  results_volumes.ensure_volumes(dim, data)
  assert written == [30.0, 5.0, 5.0]
  # The same phantom at another white level is other data.
  results_volumes.ensure_volumes(dim, data, 300.0)
  results_volumes.ensure_volumes(dim, data, 300.0)
  assert written == [30.0, 5.0, 5.0, (5.0, 300.0)]
  # A dataset without its manifest (deleted, or cut off): written again.
  os.remove(os.path.join(data, 'records_3d', 'manifest.json'))
  results_volumes.ensure_volumes(dim, data, 300.0)
  # A spec.json cut off mid-write reads as missing.
  with open(os.path.join(data, 'spec.json'), 'w') as record:
    record.write('{"shape": [32, 1')
  results_volumes.ensure_volumes(dim, data, 300.0)
  assert written == [30.0, 5.0, 5.0] + [(5.0, 300.0)] * 3
  assert all(os.path.isdir(os.path.join(data, other)) for other in others)


def test_equal_time_gives_the_2d_run_the_3d_runs_training_time_in_its_own_steps(tmp_path,
                                                                                 monkeypatch):
  import os  # pylint: disable=g-import-not-at-top
  from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
  trained = []
  # Seconds per step: the 3D run 1.4 s, the 2D calibration 0.25 s, the 2D run 0.26 s.
  per_step = {'deep': 1.4, 'calibrate': 0.25, 'flat': 0.26}

  def fake_train(name, dims, method, steps, runs_dir, extra_flags=()):
    trained.append((name, dims, method, steps, tuple(extra_flags)))
    os.makedirs(os.path.join(runs_dir, name))
    with open(os.path.join(runs_dir, name, 'config.json'), 'w') as config:
      config.write('{}')
    return 1.0

  monkeypatch.setattr(results_volumes, 'train', fake_train)
  monkeypatch.setattr(results_volumes, 'seconds_per_step',
                      lambda model_dir: per_step[os.path.basename(model_dir)])
  monkeypatch.setattr(results_volumes, 'batch_size', lambda model_dir: 2)
  names = {3: 'deep', 2: 'flat', 'calibration': 'calibrate'}
  extra = {3: ('--train_data=r3',), 2: ('--train_data=r2',)}
  runs = results_volumes.train_equal_time('pairs', str(tmp_path), names, 300, extra,
                                          {'commit': 'abc1234'})
  # 300 x 1.4 = 420 s of 3D training: 1680 steps at the calibration's 0.25 s.
  assert trained == [('deep', 3, 'pairs', 300, ('--train_data=r3',)),
                     ('calibrate', 2, 'pairs', results_volumes.CALIBRATION_STEPS,
                      ('--train_data=r2',)),
                     ('flat', 2, 'pairs', 1680, ('--train_data=r2',))]
  assert runs[3]['training_seconds'] == 420.0 and runs[2]['steps'] == 1680
  # The 2D run's own time, from its own step time: 1680 x 0.26.
  assert abs(runs[2]['training_seconds'] - 436.8) < 1e-9
  assert runs[2]['commit'] == 'abc1234' and runs[3]['dims'] == 3
  # A calibration already there is reused, not trained again.
  trained.clear()
  names = {3: 'deep2', 2: 'flat2', 'calibration': 'calibrate'}
  per_step.update(deep2=0.7, flat2=0.25)
  results_volumes.train_equal_time('pairs', str(tmp_path), names, 100, extra)
  assert [name for name, *_ in trained] == ['deep2', 'flat2'] and trained[1][3] == 280
  # Calibration flags (the width tool's logging) reach the calibration only.
  trained.clear()
  per_step.update(calibrate3=0.5, flat3=0.5)
  steps, _, calibrated = results_volumes.train_2d_for(100.0, 'pairs', 'flat3', 'calibrate3', str(tmp_path),
                                          ('--train_data=r2',), ('--log_every=10',))
  assert trained == [('calibrate3', 2, 'pairs', results_volumes.CALIBRATION_STEPS,
                      ('--train_data=r2', '--log_every=10')),
                     ('flat3', 2, 'pairs', 200, ('--train_data=r2',))] and steps == 200
  assert calibrated == 0.5


def test_z_context_main_measures_the_phantoms_named_and_keeps_the_other_rows(tmp_path):
  """results_volumes_z_context.main in a subprocess (its flags are absl's
  globals), with the filters and the training replaced by fakes that say what
  they were asked."""
  import json  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as z_context  # pylint: disable=g-import-not-at-top
  results_json = tmp_path / 'volumes_z_context.json'
  driver = (
      'from absl import app\n'
      'from bench.results import volumes_z_context as z\n'
      f'z.RESULTS_JSON = {str(results_json)!r}\n'
      'z.Z_STEPS, z.PEAK_PHOTONS = (4.0,), (30.0, 5.0)\n'
      'def measure(z_step, peak):\n'
      '  blur = {"psnr": 30.0, "sigma_z": 0.0, "sigma_xy": 1.0}\n'
      '  return {"z_step": z_step, "peak_photons": peak, "shape": [32, 128, 128],\n'
      '          "input": peak, "xy": blur, "xyz": blur}\n'
      'z.measure = measure\n'
      'def train_and_score(z_step, peak, method, runs_dir, stamp):\n'
      '  print("trains", z_step, peak, method, flush=True)\n'
      '  return {dims: {"steps": dims, "training_seconds": 1.0, "psnr": [peak + dims], **stamp}\n'
      '          for dims in (2, 3)}\n'
      'z.train_and_score = train_and_score\n'
      'z.define_flags()\n'
      'app.run(z.main)\n')

  def row(z_step, peak, commit, **spec_changes):
    run = {'steps': 1, 'training_seconds': 1.0, 'psnr': [1.0]}
    return {'z_step': z_step, 'method': 'pairs', 'commit': commit, 'machine': 'old CPU',
            'date': '2026-11-20', 'spec': {**z_context.spec_record(z_step, peak), **spec_changes},
            'pairs_3d': run, 'pairs_2d': run}

  def measure_again(*flags):
    return subprocess.run([sys.executable, '-c', driver, '--allow_dirty',
                           f'--runs_dir={tmp_path / "runs"}', '--network_methods=pairs', *flags],
                          cwd=REPO_ROOT, capture_output=True, text=True)

  stamp = {'commit': 'file000', 'machine': 'old CPU', 'date': '2026-11-20'}
  results_json.write_text(json.dumps({**stamp, 'networks': [row(4.0, 30.0, 'old1111'),
                                                             row(4.0, 5.0, 'old2222')]}))
  measured = measure_again('--network_z_steps=4', '--network_peak_photons=5')
  assert measured.returncode == 0, measured.stderr
  assert measured.stdout.count('trains') == 1 and 'trains 4.0 5.0 pairs' in measured.stdout
  results = json.loads(results_json.read_text())
  assert [(row['z_step'], row['peak_photons']) for row in results['z_steps']] == [
      (4.0, 30.0), (4.0, 5.0)]
  # The 30-photon row kept with its commit; the 5-photon one measured now, after it.
  assert [(row['spec']['peak_photons'], row['commit']) for row in results['networks']] == [
      (30.0, 'old1111'), (5.0, results['commit'])]
  assert results['networks'][1]['pairs_3d']['psnr'] == [8.0]
  assert results['networks'][1]['spec'] == z_context.spec_record(4.0, 5.0)
  # A run folder of an earlier measurement would be resumed by train.py: refused.
  (tmp_path / 'runs' / 'pairs_3d_z4_p5').mkdir(parents=True)
  refused = measure_again('--network_z_steps=4', '--network_peak_photons=5')
  assert refused.returncode != 0 and 'trains' not in refused.stdout
  assert 'pairs_3d_z4_p5 exists from an earlier measurement' in refused.stderr
  # A kept row measured on another phantom is refused, naming it.
  for changed in ({'read_noise': 3.0}, {'white_level': 600.0}):
    results_json.write_text(json.dumps({**stamp, 'networks': [
        row(4.0, 10.0, 'old3333', **changed)]}))
    refused = measure_again('--network_z_steps=2', '--network_peak_photons=5')
    assert refused.returncode != 0 and 'trains' not in refused.stdout
    assert 'the pairs row at z step 4, 10 photons in' in refused.stderr, changed
  refused = measure_again('--network_z_steps=4', '--network_peak_photons=-5')
  assert refused.returncode != 0
  assert '--network_peak_photons: peak photons -5: not a positive number' in refused.stderr


def test_volume_records_above_their_white_level_stop_the_tool_with_make_tfrecords_line(tmp_path):
  """Each phantom's white level (z-context WHITE_LEVELS) must hold its counts:
  where it does not, the tool stops with make_tfrecords' own line, not a
  traceback (and where the counts fill under half of it, make_tfrecords warns)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as z_context  # pylint: disable=g-import-not-at-top
  assert z_context.WHITE_LEVELS[results_volumes.SPEC.peak_photons] == results_volumes.WHITE_LEVEL
  scene = tmp_path / 'planes' / 'volume_000_z00'
  scene.mkdir(parents=True)
  for number in (1, 2):
    tf.io.write_file(str(scene / f'acquisition_{number}.png'), tf.io.encode_png(
        np.full([8, 8, 1], 250 + 60 * number, np.uint16)))
  with pytest.raises(SystemExit) as stopped:
    results_volumes._make_records('planes', 'records_2d', '--scenes', data=str(tmp_path),
                                  white_level=300.0)
  assert str(stopped.value) == (
      f'datasets/make_tfrecords.py for {tmp_path / "records_2d"}: make_tfrecords.py: error: '
      f'{scene / "acquisition_1.png"} holds values up to 310, above --white_level=300; pass '
      'the sensor\'s white level')
  results_volumes._make_records('planes', 'records_2d', '--scenes', data=str(tmp_path),
                                white_level=400.0)
  assert (tmp_path / 'records_2d' / 'manifest.json').exists()


def test_z_context_trains_and_scores_each_phantom_on_its_own_data_and_white_level(tmp_path,
                                                                                  monkeypatch):
  import numpy as np  # pylint: disable=g-import-not-at-top
  from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as z_context  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(results_volumes, 'DATA', str(tmp_path / 'volumes'))
  calls = {}

  def ensure_volumes(spec, data, white_level):
    calls['ensure'] = (spec, data, white_level)

  def train_equal_time(method, runs_dir, names, steps_3d, extra_flags, stamp):
    calls['train'] = (method, names, steps_3d, extra_flags, stamp)
    return {dims: {'steps': dims} for dims in (3, 2)}

  def test_volumes(data, white_level):
    calls['test'] = (data, white_level)
    # Counts on the white level's scale: 150 counts of noise around 300 counts of signal.
    return [(np.full([2, 4, 4, 1], 450.0 / white_level, np.float32),
             np.full([2, 4, 4], 300.0 / white_level))]

  def denoiser(model_dir, dims, precision):
    assert precision == 'auto'  # the page's networks are scored as denoise.py runs them
    calls.setdefault('denoisers', []).append((model_dir, dims))
    return lambda noisy: noisy - 150.0 / 300.0 if dims == 3 else noisy

  monkeypatch.setattr(results_volumes, 'ensure_volumes', ensure_volumes)
  monkeypatch.setattr(results_volumes, 'train_equal_time', train_equal_time)
  monkeypatch.setattr(results_volumes, 'test_volumes', test_volumes)
  monkeypatch.setattr(results_volumes, 'denoiser', denoiser)
  monkeypatch.setattr(results_volumes, 'psnr',
                      lambda estimate, reference: float(np.abs(estimate - reference).max()))
  runs = z_context.train_and_score(4.0, 5.0, 'pairs', str(tmp_path / 'runs'), {'commit': 'c'})
  data = str(tmp_path / 'volumes' / 'z_step_4_peak_5')
  assert calls['ensure'] == (z_context.spec_at(4.0, 5.0), data, 300.0)
  assert calls['test'] == (data, 300.0)
  method, names, steps_3d, extra_flags, stamp = calls['train']
  assert (method, steps_3d, stamp) == ('pairs', results_volumes.THREE_D_STEPS, {'commit': 'c'})
  assert names == {3: 'pairs_3d_z4_p5', 2: 'pairs_2d_z4_p5',
                   'calibration': 'calibration_2d_pairs_z4_p5'}
  assert extra_flags == {3: (f'--train_data={data}/records_3d',),
                         2: (f'--train_data={data}/records_2d',)}
  assert calls['denoisers'] == [(str(tmp_path / 'runs' / 'pairs_3d_z4_p5'), 3),
                                (str(tmp_path / 'runs' / 'pairs_2d_z4_p5'), 2)]
  # Each run scored on its own denoiser's output (the 3D fake removes the 150
  # counts exactly, on the 300 white level's scale; the 2D one leaves them).
  assert runs[3]['psnr'] == [0.0] and runs[2]['psnr'] == [0.5]
  # The table's photons keep the table's folder and white level.
  z_context.train_and_score(2.0, 30.0, 'pairs', str(tmp_path / 'runs'), {})
  assert calls['ensure'][1:] == (str(tmp_path / 'volumes' / 'z_step_2'),
                                 results_volumes.WHITE_LEVEL)


def test_the_width_section_compares_3d_with_the_best_2d_width_and_counts_the_goal():
  from bench.results import volumes_width as results_volumes_width  # pylint: disable=g-import-not-at-top

  def run(width, steps, seconds, psnr):
    return {'network_width': width, 'steps': steps, 'training_seconds': seconds, 'psnr': psnr,
            'commit': 'abc1234', 'machine': 'test CPU', 'date': '2026-11-27',
            'precision': 'float32'}

  rows = [
      # 3D 36.5; best 2D is the narrower one (35.5, not 35.0): +1.00, the goal.
      {'z_step': 2.0, 'method': 'neighbor2neighbor', 'input_psnr': [22.0, 22.5],
       '3d': run(24, 600, 440.4, [36.0, 37.0]),
       '2d': [run(48, 900, 401.0, [35.0, 35.0]), run(24, 2900, 390.6, [35.25, 35.75])]},
      # 3D 36.0 against the paper's width 2D 36.5: -0.50.
      {'z_step': 4.0, 'method': 'pairs', 'input_psnr': [22.0, 22.0],
       '3d': run(24, 600, 450.0, [36.0, 36.0]),
       '2d': [run(48, 950, 420.0, [36.5, 36.5]), run(24, 3000, 410.0, [35.0, 35.0])]}]
  page = '\n'.join(results_volumes_width.section({'rows': rows}))
  assert ('| 2 | Neighbor2Neighbor | 22.25 | 36.50 (24) | 35.00 (48); 35.50 (24) | +1.00 | '
          '600 / 900 / 2900 | 440 / 401 / 391 | abc1234 on test CPU, float32, 2026-11-27 |') in page
  assert ('| 4 | Noise2Noise pairs | 22.00 | 36.00 (24) | 36.50 (48); 35.00 (24) | -0.50 | '
          '600 / 950 / 3000 | 450 / 420 / 410 |') in page
  assert '3D ahead of the best 2D per plane by 1 dB or more: Neighbor2Neighbor at z step 2.' in page
  rows[0]['2d'][1]['psnr'] = [35.5, 35.75]   # best 2D 35.625: +0.875, short of the goal
  page = '\n'.join(results_volumes_width.section({'rows': rows}))
  assert '| +0.88 |' in page and 'by 1 dB or more: in no row.' in page
  # +0.996 prints as +1.00: counted as the table shows it.
  rows[0]['2d'][1]['psnr'] = [35.504, 35.504]
  page = '\n'.join(results_volumes_width.section({'rows': rows}))
  assert '| +1.00 |' in page and 'or more: Neighbor2Neighbor at z step 2.' in page
  assert results_volumes_width.section(None) == []
  # A 3D network with in-plane levels says how many, in its cell and in the goal's line.
  rows[0]['3d']['xy_conv_levels'] = 2
  page = '\n'.join(results_volumes_width.section({'rows': rows}))
  assert '| 36.50 (24; in-plane at 2 levels) | 35.00 (48); 35.50 (24) | +1.00 |' in page
  assert 'or more: Neighbor2Neighbor at z step 2; in-plane at 2 levels.' in page
  assert '| 36.00 (24) | 36.50 (48)' in page  # rows without the field: all 3x3x3
  rows[0]['3d']['xy_conv_levels'] = 1
  assert '| 36.50 (24; in-plane at 1 level) |' in '\n'.join(
      results_volumes_width.section({'rows': rows}))


def test_the_width_tool_refuses_widths_and_z_steps_it_cannot_measure_in_one_line():
  from bench.results import volumes_width as results_volumes_width  # pylint: disable=g-import-not-at-top
  assert results_volumes_width.parse_widths(['48', '24']) == [48, 24]
  _assert_refuses_in_one_line(results_volumes_width.parse_widths, (
      (['x'], "--widths_2d: 'x' is not a number"),
      (['0'], '--widths_2d: 0 is not a whole number of 1 or more'),
      (['2.5'], '--widths_2d: 2.5 is not a whole number of 1 or more'),
      (['inf'], '--widths_2d: inf is not a whole number of 1 or more'),
      (['24', '24'], '--widths_2d: 24 is given twice')))
  assert results_volumes_width.parse_z_steps(['2', '4']) == [2.0, 4.0]
  _assert_refuses_in_one_line(results_volumes_width.parse_z_steps, (
      (['8'], '--z_steps: z step 8: not one of 4, 2, 1'),
      (['2', '2'], '--z_steps: 2 is given twice')))
  methods = results_volumes_width.METHODS
  assert results_volumes_width.z_context.parse_methods(['pairs'], 'methods', methods) == ['pairs']
  _assert_refuses_in_one_line(
      lambda values: results_volumes_width.z_context.parse_methods(values, 'methods', methods), (
          (['pairs', 'n2v'], '--methods: n2v not one of pairs, neighbor2neighbor, blind_spot'),
          (['pairs', 'pairs'], '--methods: pairs,pairs names a method twice')))
  names = results_volumes_width.run_names(2.0, 'pairs', 24, [48, 24])
  assert len(set(names.values())) == 5, names
  # A row whose 3D network has in-plane levels trains its own 2D runs too.
  in_plane = results_volumes_width.run_names(2.0, 'pairs', 24, [48, 24], 2)
  assert len(set(names.values()) | set(in_plane.values())) == 10


def test_the_width_tool_keeps_earlier_rows_of_this_phantom_and_refuses_rows_of_another():
  from bench.results import volumes_width as results_volumes_width  # pylint: disable=g-import-not-at-top
  from bench.results import volumes_z_context as results_volumes_z_context  # pylint: disable=g-import-not-at-top
  spec = results_volumes_z_context.spec_record(2.0, 30.0)
  # Rows from before in-plane levels have none: their 3D network is all 3x3x3.
  rows = [{'z_step': 2.0, 'method': 'pairs', 'spec': spec, '3d': {}},
          {'z_step': 2.0, 'method': 'neighbor2neighbor', 'spec': spec, '3d': {}},
          {'z_step': 2.0, 'method': 'pairs', 'spec': spec, '3d': {'xy_conv_levels': 2}}]
  kept = results_volumes_width.kept_rows({'rows': rows}, {(2.0, 'pairs', 0)})
  assert kept == rows[1:]
  kept = results_volumes_width.kept_rows({'rows': rows}, {(2.0, 'pairs', 2)})
  assert kept == rows[:2]
  assert results_volumes_width.kept_rows(None, set()) == []
  other = {**spec, 'read_noise': spec['read_noise'] + 1}
  with pytest.raises(ValueError, match='the neighbor2neighbor row at z step 2 in .* another '
                                       'phantom'):
    results_volumes_width.kept_rows({'rows': [rows[0], {**rows[1], 'spec': other}]},
                                    {(2.0, 'pairs', 0)})
  # A row about to be measured again is not checked: it is replaced.
  assert results_volumes_width.kept_rows({'rows': [{**rows[1], 'spec': other}]},
                                         {(2.0, 'neighbor2neighbor', 0)}) == []


def test_the_gpu_line_gives_each_3d_runs_difference_from_its_z_steps_2d_run_by_rate():
  from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
  run = lambda z_step, dims, rate, psnr: {'z_step': z_step, 'dims': dims, 'learning_rate': rate,
                                          'mean_psnr': psnr, 'input_psnr': [20.0, 22.0]}
  gpu = {'device': 'gpu: NVIDIA Test', 'seconds_asked': 12.0, 'runs': [
      run(2.0, 3, 5e-4, 40.0), run(2.0, 3, 2.5e-4, 39.5), run(2.0, 2, 1e-3, 38.25),
      run(4.0, 3, 5e-4, 15.0), run(4.0, 2, 1e-3, 37.0)]}
  line = results_volumes.gpu_line(gpu)
  assert ('(NVIDIA Test), in a JAX re-implementation of the U-Net (`bench/portable_unet.py`) '
          'trained by `bench/volumes_gpu.py`\'s own loop, not n2n\'s trainer') in line
  assert 'at equal training time (12 s)' in line
  assert ('at a peak learning rate of 2.5e-4: +1.25 dB at z step 2; at a peak learning rate of '
          '5.0e-4: +1.75 dB at z step 2, -22.00 dB at z step 4 (a failed run: 15.00 dB, below '
          'the noisy input); one seed per row') in line


def _page_table(text, header_start):
  """The rows of the first markdown table in text whose header starts with header_start:
  each row's cells, stripped, header and rule left out."""
  lines = text[text.index(header_start):].split('\n\n', 1)[0].splitlines()[2:]
  return [[cell.strip() for cell in line.strip('|').split('|')] for line in lines]


def test_the_pages_correlated_noise_section_shows_its_jsons_figures():
  """docs/results.md's "Real (spatially correlated) noise" section is what its JSON
  (docs/results/results.json, with docs/bench/correlated_peers.json's peers) renders, and
  every PSNR and gain in its tables, and the goal line's, is the JSON's, read here."""
  from bench.results import correlated as results_correlated  # pylint: disable=g-import-not-at-top
  with open(os.path.join(REPO_ROOT, 'docs', 'results', 'results.json')) as source:
    results = json.load(source)
  peers = results_correlated.read_peers()
  with open(os.path.join(REPO_ROOT, 'docs', 'results.md')) as page_file:
    page = page_file.read()
  rendered = '\n'.join(results_page.correlated_section(results_correlated, results, peers))
  assert rendered and rendered in page
  section = page.split('## Real (spatially correlated) noise\n', 1)[1].split('\n## ', 1)[0]
  measured = 0
  for dataset in results_correlated.DATASETS:
    runs = {variant: results[f'{dataset.name}_{variant}'] for variant in dataset.variants}
    table = _page_table(section.split(f'### {dataset.title}\n', 1)[1], '| method | scheme |')
    rows = {(cells[0].removesuffix(f' {results_page.MARK}'), cells[1]): cells[2:6]
            for cells in table}
    reference = runs[results_correlated.REFERENCE]
    own_input = reference['own_captures']['input']
    val_input = next(iter(reference['levels'].values()))['input']
    assert rows[('input (noisy)', '-')] == [f'{own_input:.2f}', '-', f'{val_input:.2f}', '-']
    for variant, run in runs.items():
      own = run['own_captures']['psnr']
      val = next(iter(run['levels'].values()))['final']
      assert rows[(results_correlated.VARIANT_TITLES[variant], run['scheme'])] == [
          f'{own:.2f}', f'{own - own_input:+.2f}', f'{val:.2f}', f'{val - val_input:+.2f}'], (
              dataset.name, variant)
      measured += 1
    for peer in (peers or {}).get('peers', {}).values():
      scores = peer['datasets'].get(dataset.name)
      if scores:
        own, val = scores['own_captures']['psnr'], scores['validation']['psnr']
        assert rows[(peer['title'], scores.get('setting', '-'))] == [
            f'{own:.2f}', f'{own - own_input:+.2f}', f'{val:.2f}', f'{val - val_input:+.2f}']
  assert measured == sum(len(dataset.variants) for dataset in results_correlated.DATASETS)
  # The goal: the best single-image run on the camera's own captures, against its input
  # and against N2N on two captures.
  camera = results_correlated.GOAL_DATASET
  best = max((results[f'{camera}_{variant}']['own_captures'] for variant in
              results_correlated.SINGLE_IMAGE_VARIANTS if f'{camera}_{variant}' in results),
             key=lambda scores: scores['psnr'])
  two_captures = results[f'{camera}_{results_correlated.REFERENCE}']['own_captures']['psnr']
  gain, gap = best['psnr'] - best['input'], best['psnr'] - two_captures
  verdict = lambda met: 'met' if met else 'missed'
  assert (f'at least {results_correlated.GOAL_GAIN_DB:g} dB over the input: '
          f'{verdict(round(gain, 2) >= results_correlated.GOAL_GAIN_DB)} ({gain:+.2f} dB); '
          f'within {results_correlated.GOAL_GAP_DB:g} dB of N2N on two captures: '
          f'{verdict(round(gap, 2) >= -results_correlated.GOAL_GAP_DB)} ({gap:+.2f} dB)') in section


def test_the_pages_camera_profiles_section_shows_its_jsons_figures():
  """docs/results.md's calibrated camera profiles section is what the two profiles' JSONs
  (bench/camera_calibration.py) render, and its figures are the JSONs', read here from
  the runs as the tool wrote them: each profile's input and gains, its costs, the
  verdict on issue 52's goal and the diagnosed level's ratio to the true one; each
  row's title names the camera its JSON measured."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  from bench.results import camera_profiles  # pylint: disable=g-import-not-at-top
  with open(os.path.join(REPO_ROOT, 'docs', 'results.md')) as page_file:
    page = page_file.read()
  found = camera_profiles.read_results()
  assert set(found) == {'noise_reduced', 'plain'}
  models = camera_profiles.read_results(camera_profiles.model_json_path)
  assert '\n'.join(camera_profiles.section(found, models)) in page
  section = page.split('## Simulated cameras calibrated to real photographs\n', 1)[1]
  section = section.split('\n## ', 1)[0]
  rows = {cells[0].split(' ([json]')[0]: cells[1:]
          for cells in _page_table(section, '| camera | input |')}
  costs = {cells[0]: cells[2:] for cells in _page_table(section, '| camera | measured at |')}
  met = []
  for name, title in (('noise_reduced', 'in-camera noise reduction (shot 0.0015, chroma 2, '
                       'luma 0.45)'), ('plain', 'no noise reduction (shot 0.0003)')):
    with open(os.path.join(REPO_ROOT, 'docs', 'bench',
                           f'camera_profile_{name}_trained.json')) as source:
      (setting,) = json.load(source)['settings']
    assert (setting['shot'], setting['chroma_blur'], setting['luma_blur'],
            setting['optics_blur']) == ((0.0015, 2.0, 0.45, 0.65) if name == 'noise_reduced'
                                        else (0.0003, 0.0, 0.0, 0.65))
    runs = {run['method']: run for run in setting['trained']}
    # Recorrupted-to-Recorrupted, measured later on the same captures, in a JSON of its own.
    later_path = os.path.join(REPO_ROOT, 'docs', 'bench', f'camera_profile_{name}_recorrupted.json')
    if os.path.exists(later_path):
      with open(later_path) as source:
        (later,) = json.load(source)['settings']
      assert later['input_psnr'] == setting['input_psnr']
      runs.update({run['method']: run for run in later['trained']})
      # Its runs with one setting changed have no column: a sentence gives their gains.
      for run in later['trained']:
        changed = run['method'].partition(':')[2]
        if changed:
          assert (f'{title}, `{changed}`: {run["gain_db"]:+.2f} dB (' in section
                  and f'against the default\'s {runs["recorrupted"]["gain_db"]:+.2f}' in section)
    one = lambda method: runs[method]['variants']['inference_orientations=1']
    missing = {'gain_db': None, 'seconds_per_megapixel': None}
    recorrupted = runs.get('recorrupted')
    order = [runs['neighbor2neighbor'], one('neighbor2neighbor'), runs['blind_spot'],
             one('blind_spot'), recorrupted or missing,
             one('recorrupted') if recorrupted else missing, runs['pairs'], runs['bm3d'],
             runs['bm3d_estimated']]
    assert all(run['steps'] == 1200 for run in runs.values() if 'steps' in run)
    shown = lambda value, form: '-' if value is None else format(value, form)
    assert rows[title] == ([f'{setting["input_psnr"]:.2f}'] +
                           [shown(run['gain_db'], '+.2f') for run in order])
    assert costs[title] == [shown(run['seconds_per_megapixel'], '.1f') for run in order]
    best = max(runs[method]['gain_db'] for method in ('neighbor2neighbor', 'blind_spot',
                                                      'recorrupted') if method in runs)
    met.append(best >= 2.0 and runs['pairs']['gain_db'] - best <= 0.7)
    assert f'{title}, {best:+.2f} dB' in section
    ratios = (np.mean(runs['bm3d_estimated']['sigma'], axis=1) /
              np.mean(runs['bm3d']['sigma'], axis=1))
    assert (f'{title}: median {np.median(ratios):.2f} times, from {ratios.min():.2f} to '
            f'{ratios.max():.2f}') in section
  assert section.count('is met.') == all(met) and section.count('is not met.') == (not all(met))
  # Recorruptions with each noise model (bench/recorrupted.py): every run's gains, read
  # from its JSON, and its JSON linked.
  for path in sorted(glob.glob(os.path.join(REPO_ROOT, 'docs', 'bench', 'recorrupted_*.json'))):
    name = os.path.basename(path)
    if name.endswith(('_k24.json', '_first_records.json')):
      continue  # the guide's table shows these (docs/correlated_noise.md)
    with open(path) as source:
      for run in json.load(source)['runs']:
        assert (f'{run["gain_db"]:+.2f} ({run["tta_gain_db"]:+.2f} with 8 orientations; '
                f'[json](bench/{name}))') in section, (name, run['noise_model'])
  # The real benchmarks' rows: issue 52's figures, as the issue gives them.
  assert rows['benchmark 1 (real)'] == ['33.41', '-', '+0.92', '-', '+0.59', '-', '-', '-',
                                        '+1.50', '-']
  assert rows['benchmark 2 (real)'] == ['35.88', '-', '+0.53', '-', '+0.11', '-', '-', '-', '-',
                                        '-']


def test_the_pages_camera_model_rows_are_its_jsons_means_on_the_same_captures():
  """The shipped model's table in the calibrated cameras section: for each profile, the
  means over the photographs it never saw (datasets/demo/val) and over the others of its
  gains, with and without 8 orientations, and of the trained methods' gains on the same
  captures (the two JSONs' inputs agree), read here from the JSONs' per-photograph gains."""
  with open(os.path.join(REPO_ROOT, 'docs', 'results.md')) as page_file:
    page = page_file.read()
  section = page.split('## Simulated cameras calibrated to real photographs\n', 1)[1]
  section = section.split('\n## ', 1)[0]
  rows = {(cells[0], cells[1]): cells[2:]
          for cells in _page_table(section, '| camera | photographs |')}
  for name, title in (('noise_reduced', 'in-camera noise reduction (shot 0.0015, chroma 2, '
                       'luma 0.45)'), ('plain', 'no noise reduction (shot 0.0003)')):
    with open(os.path.join(REPO_ROOT, 'docs', 'bench', f'camera_model_{name}.json')) as source:
      model = json.load(source)
    with open(os.path.join(REPO_ROOT, 'docs', 'bench',
                           f'camera_profile_{name}_trained.json')) as source:
      (trained,) = json.load(source)['settings']
    (setting,) = model['settings']
    assert setting['input_psnr'] == trained['input_psnr']
    (shipped_run,) = setting['trained']
    assert shipped_run['method'] == 'model:camera_srgb'
    runs = {run['method']: run['gains_db'] for run in trained['trained']}
    seen = [path.startswith('datasets/demo/val/') for path in model['photograph_names']]
    assert sum(seen) == 2 and len(seen) == 11
    for label, keep in (('2 never seen', True), ('9 trained on', False)):
      mean = lambda gains, keep=keep: sum(g for g, s in zip(gains, seen) if s == keep) / sum(
          1 for s in seen if s == keep)
      expected = [shipped_run['gains_db'], shipped_run['variants']['tta']['gains_db'],
                  runs['neighbor2neighbor'], runs['pairs'], runs['bm3d'],
                  runs['bm3d_estimated']]
      assert rows[(title, label)] == [f'{mean(gains):+.2f}' for gains in expected]


def test_the_camera_crops_on_the_page_are_their_jsons_and_the_picture_shows_them():
  """The calibrated cameras' crops (bench/camera_crops.py): the page's table holds each
  crop's PSNRs as the JSON has them, and the picture's tiles are those crops: each tile,
  taken back to its own pixels (every SCALE-th, drawn by nearest neighbour), scores the
  JSON's PSNR against the noise-free tile of its row."""
  import json  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from PIL import Image  # pylint: disable=g-import-not-at-top
  with open(os.path.join(REPO_ROOT, 'docs', 'bench', 'camera_crops.json')) as source:
    results = json.load(source)
  with open(os.path.join(REPO_ROOT, 'docs', 'results.md')) as page_file:
    page = page_file.read()
  assert len(results['crops']) == 4 and '(results/camera_crops.png)' in page
  for crop in results['crops']:
    cells = ' | '.join(f'{value:.2f}' for value in crop['psnr_db'].values())
    assert f'| {crop["crop"]} | {crop["mean_luminance"]:.2f} | {cells} |' in page
  picture = np.asarray(Image.open(os.path.join(REPO_ROOT, 'docs', 'results',
                                               'camera_crops.png')).convert('RGB'))
  size, scale = results['crop'], results['scale']
  height = size * scale + results['label_height']
  columns = results['columns']
  assert picture.shape == (height * len(results['crops']), size * scale * len(columns), 3)
  for row, crop in enumerate(results['crops']):
    tiles = [picture[row * height:row * height + size * scale:scale,
                     column * size * scale:(column + 1) * size * scale:scale].astype(float)
             for column in range(len(columns))]
    truth = tiles[-1]
    for column, tile in zip(columns, tiles):
      if column in crop['psnr_db']:
        psnr = 10 * np.log10(255.0 ** 2 / np.mean((tile - truth) ** 2))
        assert abs(psnr - crop['psnr_db'][column]) < 0.01, (crop['crop'], column, psnr)


def test_the_pages_clean_targets_are_their_jsons_on_the_same_captures():
  """Noise2Clean on each calibrated profile (bench/camera_calibration.py
  --methods=clean_targets): trained on the same captures as the profile's other methods
  (the same input PSNR), 1200 steps, and the page's sentence holds its gain beside two
  captures' and the best single-image default's, read here from the JSONs."""
  import json  # pylint: disable=g-import-not-at-top
  with open(os.path.join(REPO_ROOT, 'docs', 'results.md')) as page_file:
    page = page_file.read()
  for name in ('noise_reduced', 'plain'):
    runs = {}
    for kind in ('trained', 'clean'):
      with open(os.path.join(REPO_ROOT, 'docs', 'bench',
                             f'camera_profile_{name}_{kind}.json')) as source:
        (runs[kind],) = json.load(source)['settings']
    assert runs['clean']['input_psnr'] == runs['trained']['input_psnr']
    (clean,) = runs['clean']['trained']
    assert clean['method'] == 'clean_targets' and clean['steps'] == 1200
    (pairs,) = [run for run in runs['trained']['trained'] if run['method'] == 'pairs']
    for key in ('steps', 'crop_size', 'batch_size', 'learning_rate', 'precision', 'seed'):
      assert clean[key] == pairs[key], key
    trained = {run['method']: run['gain_db'] for run in runs['trained']['trained']}
    # Recorruptions were trained later on the same captures, in a JSON of their own.
    later = os.path.join(REPO_ROOT, 'docs', 'bench', f'camera_profile_{name}_recorrupted.json')
    with open(later) as source:
      trained.update({run['method']: run['gain_db']
                      for run in json.load(source)['settings'][0]['trained']})
    best = max(trained['neighbor2neighbor'], trained['blind_spot'], trained['recorrupted'])
    assert (f'{clean["gain_db"]:+.2f} dB, against {trained["pairs"]:+.2f} for two captures '
            f'and {best:+.2f} for the best single-image default') in page
    with open(os.path.join(REPO_ROOT, 'docs', 'bench',
                           f'camera_profile_{name}_clean.json')) as source:
      commit = json.load(source)['commit']
    assert '+' not in commit and f'Trained at {commit}' in page
