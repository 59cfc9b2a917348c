"""bench/volumes_gpu.py's pure parts (the training itself runs on Keras' JAX backend,
which the suite does not install): how it cuts a stack into tiles, and its flags."""

import json
import os

import numpy as np
import pytest

from bench import volumes_gpu
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize('depth, tile', [(16, 16), (32, 32), (40, 32), (64, 32), (100, 32),
                                         (128, 32), (40, 16)])
def test_every_plane_comes_from_a_tile_that_holds_it_a_quarter_tile_from_any_cut(depth, tile):
  starts, chosen = volumes_gpu.tile_starts(depth, tile)
  assert len(chosen) == depth
  # Every tile lies inside the volume: none reaches into the padding past its last plane.
  assert starts[0] == 0 and all(0 <= start and start + tile <= depth for start in starts)
  for plane in range(depth):
    start = starts[chosen[plane]]
    assert start <= plane < start + tile
    # A cut is a tile face inside the volume; the volume's own ends are not cuts.
    distances = [plane - start] if start > 0 else []
    if start + tile < depth:
      distances.append(start + tile - 1 - plane)
    assert min(distances, default=tile) >= tile // 4, (plane, start)


def test_a_volume_shallower_than_a_tile_is_refused():
  with pytest.raises(ValueError, match='8 planes'):
    volumes_gpu.tile_starts(8, 32)


def test_it_refuses_what_it_cannot_measure(capsys):
  for argv, message in ((['--dims=4'], '--dims=4: only 3 and 2'),
                        (['--seconds=0'], '--seconds, --network_width'),
                        (['--network_width=0'], '--seconds, --network_width'),
                        (['--crop_size=48'], '--crop_size=48 must be a multiple of 32'),
                        (['--crop_size=160'], '--crop_size=160 must be a multiple of 32 up to 128'),
                        (['--batch_size_2d=0'], '--batch_size_2d must be'),
                        (['--initial_weights=w.npz'], '--initial_weights: give one --dims'),
                        (['--dims=2', '--initial_weights=/no/such.npz'],
                         '--initial_weights=/no/such.npz: no such file')):
    with pytest.raises(SystemExit):
      volumes_gpu.parse_args(argv)
    assert message in capsys.readouterr().err, argv
  args = volumes_gpu.parse_args(['--z_steps=2,4', '--dims=3'])
  assert args.z_steps == [2.0, 4.0] and args.dims == [3]


def test_the_volumes_page_shows_the_gpu_table_its_json_renders():
  with open(os.path.join(REPO_ROOT, 'docs', 'bench', 'volumes_gpu_h200.json')) as source:
    results = json.load(source)
  with open(os.path.join(REPO_ROOT, 'docs', 'volumes.md')) as page:
    text = page.read()
  rendered = volumes_gpu.table(results)
  assert rendered in text
  rows = rendered.splitlines()[2:2 + len(results['runs'])]
  for row, run in zip(rows, results['runs']):
    cells = [cell.strip() for cell in row.strip('|').split('|')]
    assert cells[0].startswith(f'{run["z_step"]:g} (')
    assert float(cells[6]) == pytest.approx(sum(run['psnr']) / len(run['psnr']), abs=0.006)
    if run['dims'] == 3:
      # 3D - 2D, from the JSON's per-volume scores, not from the table's means.
      plane_run, = [other for other in results['runs']
                    if other['dims'] == 2 and other['z_step'] == run['z_step']]
      difference = (sum(run['psnr']) - sum(plane_run['psnr'])) / len(run['psnr'])
      assert float(cells[7]) == pytest.approx(difference, abs=0.006)
      # The page's prose, outside the table, quotes each 3D run's difference, the failed one too.
      assert f'{difference:+.2f}' in text.replace(rendered, '')
    else:
      assert cells[7] == ''


def test_the_volumes_page_quotes_each_side_of_the_loop_check_with_its_own_figures():
  with open(os.path.join(REPO_ROOT, 'docs', 'bench', 'volumes_gpu_loop_check.json')) as source:
    results = json.load(source)
  with open(os.path.join(REPO_ROOT, 'docs', 'volumes.md')) as page:
    text = ' '.join(page.read().split())
  means = {side: [sum(run[side]) / len(run[side]) for run in results['runs']]
           for side in ('n2n', 'loop_same_start', 'loop')}
  figures = {side: f'{sum(values) / len(values):.2f}' for side, values in means.items()}
  spans = {side: f'{min(values):.2f}-{max(values):.2f}' for side, values in means.items()}
  gaps = [same - own for same, own in zip(means['loop_same_start'], means['n2n'])]
  # Each side's figures stand in its own clause, in this order.
  assert (f"`train.py` scored {figures['n2n']} dB on average ({spans['n2n']}); the loop started "
          f"from the same initial weights {figures['loop_same_start']} "
          f"({spans['loop_same_start']}; per seed {min(gaps):+.2f} to {max(gaps):+.2f} dB from "
          f"`train.py`'s, mean {sum(gaps) / len(gaps):+.2f}); the loop from its own draw of the "
          f"initializers on JAX, as on the GPU, {figures['loop']} ({spans['loop']})") in text
  seeds = [run['seed'] for run in results['runs']]
  assert (f"width {results['network_width']}, {results['crop_size']} x {results['crop_size']} "
          f"crops, batch {results['batch_size']}, {results['steps']} steps, seeds "
          f"{min(seeds)}-{max(seeds)}") in text
  assert results['precision'] == results['scoring_precision'] == 'float32'


def test_it_restates_the_results_pages_phantom_data_and_score():
  # It cannot import bench/results/volumes.py (TensorFlow) on the GPU machines: its copies
  # of the page's white level, seeds and PSNR must stay those of the page.
  from bench.results import volumes as results_volumes  # pylint: disable=g-import-not-at-top
  assert volumes_gpu.WHITE_LEVEL == results_volumes.WHITE_LEVEL
  assert volumes_gpu.TRAIN_SEEDS == results_volumes.TRAIN_SEEDS
  assert volumes_gpu.TEST_SEEDS == results_volumes.TEST_SEEDS
  assert volumes_gpu.TABLE_SPEC == results_volumes.SPEC
  rng = np.random.default_rng(0)
  reference = rng.uniform(0.1, 0.9, (4, 8, 8))
  estimate = reference + rng.normal(0, 0.05, reference.shape)
  assert volumes_gpu.psnr(estimate, reference) == results_volumes.psnr(estimate, reference)
