"""bench/fluorescence_sim_set.py: the simulated widefield set issue 63 §3's table scores
beside the real w2s80 (its pairs: bench/recipes/fluorescence.stretched_pairs), written in
real_dev's layout."""

import os
import subprocess
import sys

import imageio.v3 as iio
import numpy as np

from bench.recipes import fluorescence
from tests.conftest import REPO_ROOT


def _correlation(first, second):
  return np.corrcoef(first.ravel().astype(float), second.ravel().astype(float))[0, 1]


def test_each_pair_is_a_contrast_stretched_noisy_view_of_its_reference():
  pairs = fluorescence.stretched_pairs(6, 128, seed=1000)
  assert len(pairs) == 6
  references = [reference for _, reference in pairs]
  for index, (noisy, reference) in enumerate(pairs):
    assert noisy.dtype == reference.dtype == np.uint8
    assert noisy.shape == reference.shape == (128, 128)
    # An 8-bit export stretched to its own range, as W2S's 8-bit copy is.
    assert noisy.min() <= 5 and noisy.max() >= 250, (noisy.min(), noisy.max())
    # Of its own field (dim fields correlate little, at 128 px 0.17 the least of seed
    # 1000's first 8, yet more than with any other field), and noisy: never equal to it.
    own = _correlation(noisy, reference)
    assert own < 0.999, own
    assert all(own > _correlation(noisy, other)
               for other_index, other in enumerate(references) if other_index != index)


def test_a_seed_draws_the_same_fields_and_another_seed_others():
  first = fluorescence.stretched_pairs(2, 128, seed=1000)
  again = fluorescence.stretched_pairs(2, 128, seed=1000)
  other = fluorescence.stretched_pairs(2, 128, seed=1001)
  for (noisy, reference), (noisy_again, reference_again) in zip(first, again):
    np.testing.assert_array_equal(noisy, noisy_again)
    np.testing.assert_array_equal(reference, reference_again)
  assert not np.array_equal(first[0][1], other[0][1])


def test_the_set_is_written_in_real_dev_s_layout_and_never_over_an_existing_one(tmp_path):
  command = [sys.executable, '-m', 'bench.fluorescence_sim_set', f'--folder={tmp_path}',
             '--fields=2', '--field_size=128']
  subprocess.run(command, check=True, capture_output=True, cwd=REPO_ROOT, timeout=300)
  folder = tmp_path / 'fluorescence_sim'  # the set real_dev reads (its SETS)
  assert sorted(os.listdir(folder / 'noisy')) == sorted(os.listdir(folder / 'gt')) == [
      '000.png', '001.png']
  (noisy, reference), = fluorescence.stretched_pairs(1, 128, seed=1000)
  np.testing.assert_array_equal(iio.imread(folder / 'noisy' / '000.png'), noisy)
  np.testing.assert_array_equal(iio.imread(folder / 'gt' / '000.png'), reference)
  # A second run into the same folder stops, in one line naming it, and leaves the set.
  written = {path: path.stat().st_mtime_ns for path in folder.rglob('*.png')}
  again = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
  assert again.returncode != 0
  assert again.stderr.strip().splitlines() == [
      f'error: --folder: {folder} exists; a set is written only where none is'], again.stderr
  assert {path: path.stat().st_mtime_ns for path in folder.rglob('*.png')} == written
