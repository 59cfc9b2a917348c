"""TIFF stacks: axes, dtype and physical sizes survive a read and a write, in every format."""

import numpy as np
import pytest
import tifffile

from n2n.data import volumes

# (format, axes, shape): hyperstacks, OME with RGB samples, plain stacks.
CASES = [
    ('imagej', 'TZCYX', (2, 3, 2, 5, 6)),
    ('imagej', 'TYX', (4, 5, 6)),
    ('imagej', 'ZYX', (3, 5, 6)),
    ('ome', 'TZCYX', (2, 3, 2, 5, 6)),
    ('ome', 'ZYXS', (3, 5, 6, 3)),
    ('ome', 'TCYX', (3, 2, 5, 6)),
    ('tiff', 'ZYX', (3, 5, 6)),
    ('tiff', 'TZYXS', (2, 3, 5, 6, 3)),
]


def _labelled(shape, dtype):
  """An array whose every value encodes its own index along each axis (one decimal digit each)."""
  grids = np.indices(shape)
  return sum(grid * 10 ** (len(shape) - 1 - index) for index, grid in enumerate(grids)).astype(dtype)


@pytest.mark.parametrize('volume_format, axes, shape', CASES)
@pytest.mark.parametrize('dtype', [np.uint16, np.float32])
def test_every_format_round_trips_axes_pixels_and_sizes(tmp_path, volume_format, axes, shape,
                                                       dtype):
  array = _labelled(shape, dtype)
  canonical = volumes.to_canonical(array, axes)
  # Every element lands where its axes say: canonical[t, z, y, x, c] is
  # array[...] at the same t, z, c, y, x (an index computed here, not by the module).
  expected = np.zeros(canonical.shape, np.float64)
  t, z, y, x, c = np.indices(canonical.shape)
  positions = {'T': t, 'Z': z, 'Y': y, 'X': x, 'C': c}
  for place, letter in enumerate(axes.replace('S', 'C')):
    expected += positions[letter] * 10 ** (len(shape) - 1 - place)
  np.testing.assert_array_equal(canonical, expected.astype(dtype))

  time_step = 0.5 if 'T' in axes and volume_format != 'tiff' else 0.0
  sizes = ((2.5, 0.5, 0.25), 'um') if volume_format != 'tiff' else ((1.0, 1.0, 1.0), '')
  like = volumes.Volume(canonical, axes, volume_format, sizes[0], sizes[1], time_step)
  path = str(tmp_path / 'stack.tif')
  volumes.write_volume(path, canonical, like)
  back = volumes.read_volume(path)
  assert (back.axes, back.format, back.unit, back.time_step) == (axes, volume_format, sizes[1],
                                                                 time_step)
  np.testing.assert_allclose(back.spacing, sizes[0], rtol=1e-6)
  assert back.pixels.dtype == dtype
  np.testing.assert_array_equal(back.pixels, canonical)
  # The file holds the array in its own layout, as tifffile reads it.
  np.testing.assert_array_equal(tifffile.imread(path), array)


def test_a_stack_without_axes_needs_them_from_the_user(tmp_path):
  path = str(tmp_path / 'pages.tif')
  with tifffile.TiffWriter(path) as writer:
    for plane in range(4):
      writer.write(np.full((5, 6), plane, np.uint16), metadata=None)
  with pytest.raises(volumes.VolumeError, match=r'pages\.tif.*--axes'):
    volumes.read_volume(path)
  volume = volumes.read_volume(path, axes='ZYX')
  assert volume.pixels.shape == (1, 4, 5, 6, 1) and volume.is_stack
  np.testing.assert_array_equal(volume.pixels[0, :, 0, 0, 0], [0, 1, 2, 3])
  with pytest.raises(volumes.VolumeError, match=r"pages\.tif --axes: axes 'TZYX' name 4"):
    volumes.read_volume(path, axes='TZYX')


# A repeated axis, both kinds of channel, a letter n2n does not know, no X.
@pytest.mark.parametrize('bad', ['ZZYX', 'CYXS', 'ZYQX', 'TZCY'])
def test_inconsistent_axes_are_refused(tmp_path, bad):
  path = str(tmp_path / 'stack.tif')
  tifffile.imwrite(path, np.zeros((2, 3, 4, 5), np.uint8), metadata={'axes': 'TZYX'},
                   photometric='minisblack')
  with pytest.raises(volumes.VolumeError, match=rf"stack\.tif --axes: axes '{bad}'"):
    volumes.read_volume(path, axes=bad)


def test_axes_flag_is_checked():
  assert volumes.parse_axes_flag(' zyx ') == 'ZYX'
  with pytest.raises(ValueError, match="--axes='ZQX'"):
    volumes.parse_axes_flag('ZQX')


def test_an_unreadable_file_is_named(tmp_path):
  path = tmp_path / 'broken.tif'
  path.write_bytes(b'not a tiff')
  with pytest.raises(volumes.VolumeError, match='broken.tif: not a readable TIFF stack'):
    volumes.read_volume(str(path))
