"""The files diagnose.py reads: bad ones are refused in one line naming them."""

import numpy as np
import pytest
import tifffile

from n2n.data import native_images
from n2n.diagnosis import noisy_data


def _png(path, array):
  path.write_bytes(native_images.encode_pages([array], 'png'))
  return str(path)


def test_unreadable_tiny_non_finite_and_mixed_files_are_named(tmp_path):
  rng = np.random.default_rng(0)
  rgb = _png(tmp_path / 'rgb.png', rng.integers(1, 255, (64, 64, 3), dtype=np.uint8))
  grey = _png(tmp_path / 'grey.png', rng.integers(1, 255, (64, 64), dtype=np.uint8))
  tiny = _png(tmp_path / 'tiny.png', rng.integers(1, 255, (8, 40, 3), dtype=np.uint8))
  broken = tmp_path / 'broken.png'
  broken.write_bytes(b'\x89PNG\r\n\x1a\n not really a png')
  nan = str(tmp_path / 'nan.tif')
  values = rng.uniform(size=(64, 64)).astype(np.float32)
  values[5, 5] = np.nan
  tifffile.imwrite(nan, values)
  for paths, message in (([str(broken)], f'{broken}: not a readable image'),
                         ([tiny], f'{tiny} is 40x8: too small to diagnose'),
                         ([nan], f'{nan} holds NaN or infinite values'),
                         ([rgb, grey], f'{grey} has 1 channel\\(s\\) but {rgb} has 3')):
    with pytest.raises(ValueError, match=message):
      noisy_data.diagnose_images(paths)


def test_noisy_images_are_diagnosed_and_counted(tmp_path):
  rng = np.random.default_rng(1)
  paths = [_png(tmp_path / f'{index}.png',
                np.clip(128 + 12 * rng.standard_normal((96, 96, 3)), 0, 255).astype(np.uint8))
           for index in range(3)]
  profile, count = noisy_data.diagnose_images(paths, max_images=2)
  assert count == 2 and profile.source == 'single'
  assert np.nanmean(profile.sigma) * 255 == pytest.approx(12, rel=0.15)
