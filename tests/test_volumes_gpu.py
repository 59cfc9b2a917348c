"""bench/volumes_gpu.py's pure parts (the training itself runs on Keras' JAX backend,
which the suite does not install): how it cuts a stack into tiles, and its flags."""

import json
import os

import pytest

from bench import volumes_gpu
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize('depth', [8, 32, 40, 64, 100, 128])
def test_every_plane_comes_from_a_tile_that_holds_it_a_quarter_tile_from_any_cut(depth):
  tile = 32
  starts, chosen = volumes_gpu.tile_starts(depth, tile)
  assert len(chosen) == depth
  assert starts[0] == 0 and all(0 <= start <= max(0, depth - tile) for start in starts)
  for plane in range(depth):
    start = starts[chosen[plane]]
    assert start <= plane < start + tile
    # A cut is a tile face inside the volume; the volume's own ends are not cuts.
    distances = [plane - start] if start > 0 else []
    if start + tile < depth:
      distances.append(start + tile - 1 - plane)
    assert min(distances, default=tile) >= tile // 4, (plane, start)


def test_it_refuses_what_it_cannot_measure():
  for argv in (['--dims=4'], ['--seconds=0'], ['--network_width=0']):
    with pytest.raises(SystemExit):
      volumes_gpu.parse_args(argv)
  args = volumes_gpu.parse_args(['--z_steps=2,4', '--dims=3'])
  assert args.z_steps == [2.0, 4.0] and args.dims == [3]


def test_the_volumes_page_shows_the_gpu_table_its_json_renders():
  with open(os.path.join(REPO_ROOT, 'docs', 'bench', 'volumes_gpu_h200.json')) as source:
    results = json.load(source)
  with open(os.path.join(REPO_ROOT, 'docs', 'volumes.md')) as page:
    text = page.read()
  rendered = volumes_gpu.table(results)
  assert rendered in text
  # The table says what each 3D run scored against its z step's 2D run.
  for run in results['runs']:
    assert f'| {run["mean_psnr"]:.2f} |' in rendered
