"""Training elements from single noisy images: the neighbour sub-sampler and
blind-spot masking (issue 22)."""

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import single_image_pairs as pairs
from n2n.pipelines import registry as pipelines
from n2n.training import losses

_DIAGONALS = ({0, 3}, {1, 2})


def _numbered(batch, size, channels):
  """[B, S, S, C] float32 whose value tells image, pixel and channel apart."""
  pixel = np.arange(size * size, dtype=np.float32).reshape(1, size, size, 1)
  image = np.arange(batch, dtype=np.float32).reshape(batch, 1, 1, 1) * 1e5
  channel = np.arange(channels, dtype=np.float32).reshape(1, 1, 1, channels) * 1e4
  return tf.constant(pixel + image + channel)


def test_the_two_sub_images_take_different_neighbouring_pixels_of_every_cell():
  positions = pairs.neighbour_positions(4, 64, 64, tf.constant([1, 2])).numpy()
  assert positions.shape == (4, 32, 32, 2)
  first, second = positions[..., 0], positions[..., 1]
  assert (first != second).all()
  assert not any({a, b} in _DIAGONALS for a, b in zip(first.ravel(), second.ravel()))
  # All eight ordered pairs of neighbours occur.
  assert len(set(zip(first.ravel(), second.ravel()))) == 8


def test_every_channel_takes_the_same_pixel_of_a_cell():
  images = _numbered(2, 8, 3)
  pair = pairs.neighbor2neighbor_pair(images, tf.constant([3, 4]))
  for key in ('input', 'target'):
    sub = pair[key].numpy()
    assert sub.shape == (2, 4, 4, 3)
    np.testing.assert_array_equal(sub[..., 1] - sub[..., 0], 1e4)
    np.testing.assert_array_equal(sub[..., 2] - sub[..., 0], 2e4)
  # Each value of either sub-image is the pixel its cell's position names.
  positions = pair['positions'].numpy()
  for which, key in enumerate(('input', 'target')):
    for image in range(2):
      for row in range(4):
        for column in range(4):
          cell = positions[image, row, column, which]
          pixel = (2 * row + cell // 2) * 8 + 2 * column + cell % 2
          assert pair[key].numpy()[image, row, column, 0] == image * 1e5 + pixel, (key, row)


def test_positions_are_random_per_image_and_step_and_repeat_for_a_seed():
  draw = lambda seed: pairs.neighbour_positions(2, 32, 32, tf.constant(seed)).numpy()
  np.testing.assert_array_equal(draw([5, 6]), draw([5, 6]))
  assert (draw([5, 6]) != draw([5, 7])).mean() > 0.5  # another step's seed
  first, second = draw([5, 6])
  assert (first != second).mean() > 0.5  # two images of one batch
  # Through the dataset: every batch folds its index into the run's seed.
  noisy = tf.data.Dataset.from_tensors(_numbered(2, 64, 1)).repeat(3)
  pipeline = pipelines.get('neighbor2neighbor')
  config = config_lib.train_config(method='neighbor2neighbor')
  run = lambda: [element['positions'].numpy() for element in pipeline.elements_dataset(
      noisy, tf.constant([1, 2], tf.int64), config)]
  again, other = run(), run()
  for ours, theirs in zip(again, other):
    np.testing.assert_array_equal(ours, theirs)
  assert (again[0] != again[1]).mean() > 0.5


def test_odd_sizes_are_cropped_to_whole_cells():
  images = _numbered(1, 9, 1)[:, :, :7]  # 9 x 7
  even = pairs.even_crop(images)
  assert even.shape == (1, 8, 6, 1)
  positions = pairs.neighbour_positions(1, 8, 6, tf.constant([0, 1]))
  assert pairs.subsample(even, positions[..., 0]).shape == (1, 4, 3, 1)


def _mirrored(index, size):
  """A coordinate outside 0..size-1 mirrored back about the edge pixel, written
  out case by case (-1 -> 1, -2 -> 2, size -> size - 2, size + 1 -> size - 3)."""
  if index < 0:
    return -index
  if index >= size:
    return 2 * (size - 1) - index
  return index


def _reference_median(image, row, column):
  """The median over the 5x5 window's other pixels, by explicit coordinates: a
  window position that mirrors onto (row, column) itself is not a neighbour."""
  height, width = image.shape[:2]
  values = []
  for row_offset in range(-2, 3):
    for column_offset in range(-2, 3):
      at = (_mirrored(row + row_offset, height), _mirrored(column + column_offset, width))
      if at != (row, column):
        values.append(image[at])
  return np.median(np.array(values), axis=0)


def test_a_masked_pixel_takes_its_neighbourhood_median_at_every_position_and_border_ring():
  rng = np.random.default_rng(1)
  noisy = rng.uniform(size=(2, 16, 16, 3)).astype(np.float32)
  pair = pairs.blind_spot_pair(tf.constant(noisy), 0.3, tf.constant([7, 8]))
  mask = pair['target_mask'].numpy()[..., 0].astype(bool)
  replaced = pair['input'].numpy()
  np.testing.assert_array_equal(pair['target'].numpy(), noisy)
  np.testing.assert_array_equal(replaced[~mask], noisy[~mask])
  masked = list(zip(*np.nonzero(mask)))
  # The draw covers each border ring, where the window mirrors.
  for ring in (0, 1, 14, 15):
    assert any(ring in (row, column) for _, row, column in masked), ring
  for image, row, column in masked:
    np.testing.assert_allclose(replaced[image, row, column],
                               _reference_median(noisy[image], row, column), rtol=1e-6)


def test_no_pixel_of_the_image_sees_itself_in_its_replacement():
  """Every pixel of a 9x7 image (all border rings included) is perturbed in a
  copy of its own; its replacement must not move, whatever it held."""
  rng = np.random.default_rng(2)
  height, width = 9, 7
  image = rng.uniform(size=(height, width, 2)).astype(np.float32)
  pixels = [(row, column) for row in range(height) for column in range(width)]
  copies = np.repeat(image[np.newaxis], len(pixels), axis=0)
  for index, (row, column) in enumerate(pixels):
    copies[index, row, column] = 50.0 + index
  positions = tf.constant([(index, row, column) for index, (row, column) in enumerate(pixels)],
                          tf.int32)
  untouched = pairs.medians_without_centre(tf.constant(np.repeat(image[np.newaxis],
                                                                 len(pixels), axis=0)), positions)
  perturbed = pairs.medians_without_centre(tf.constant(copies), positions)
  np.testing.assert_array_equal(perturbed.numpy(), untouched.numpy())
  assert perturbed.numpy().max() < 1.0


def test_the_mask_fraction_is_the_setting_and_the_loss_sees_masked_pixels_only():
  noisy = tf.random.stateless_uniform([3, 64, 64, 1], [0, 0])
  pair = pairs.blind_spot_pair(noisy, 0.01, tf.constant([2, 3]))
  counts = pair['target_mask'].numpy().sum(axis=(1, 2, 3))
  np.testing.assert_array_equal(counts, [round(0.01 * 64 * 64)] * 3)
  prediction = pair['target'].numpy().copy()
  prediction[pair['target_mask'].numpy()[..., 0] == 0] += 5.0  # wrong only where unmasked
  loss = losses.masked_l2_loss(tf.constant(prediction), pair['target'], pair['target_mask'])
  np.testing.assert_allclose(loss, 0.0, atol=1e-12)


@pytest.mark.parametrize('line_axis', ['rows', 'columns'])
def test_no_pixel_of_a_structn2v_line_sees_the_line_it_hides(line_axis):
  """Noise correlated along the line (a whole row's or column's offset) must not
  reach the masked pixel's input or any input along its line: each masked
  pixel's row (column) is offset in a copy of its own, and its line's inputs
  must not move."""
  rng = np.random.default_rng(3)
  noisy = rng.uniform(size=(1, 16, 16, 2)).astype(np.float32)
  seed = tf.constant([4, 5])
  span = 5
  pair = pairs.blind_spot_pair(tf.constant(noisy), 0.03, seed, line_axis, span)
  masked = list(zip(*np.nonzero(pair['target_mask'].numpy()[0, ..., 0])))
  assert len(masked) == round(0.03 * 16 * 16)
  # The draw includes a line clipped at the border.
  assert any(min(place[1 if line_axis == 'rows' else 0], 15 - place[1 if line_axis == 'rows'
                                                                    else 0]) < 2
             for place in masked)
  for row, column in masked:
    offset = noisy.copy()
    if line_axis == 'rows':
      offset[0, row] += 10.0
      line = [(row, c) for c in range(max(0, column - 2), min(16, column + 3))]
    else:
      offset[0, :, column] += 10.0
      line = [(r, column) for r in range(max(0, row - 2), min(16, row + 3))]
    moved = pairs.blind_spot_pair(tf.constant(offset), 0.03, seed, line_axis, span)['input']
    for place in line:
      np.testing.assert_array_equal(moved.numpy()[0][place], pair['input'].numpy()[0][place])
      # ...and the line really was replaced (not left holding the noisy values).
      assert not np.array_equal(pair['input'].numpy()[0][place], noisy[0][place])


def test_without_a_line_the_masked_pixels_row_reaches_its_replacement():
  """The control of the test above: Noise2Void's median includes the pixel's
  row, so row noise reaches the input (what structN2V is for)."""
  noisy = np.random.default_rng(3).uniform(size=(1, 16, 16, 1)).astype(np.float32)
  seed = tf.constant([4, 5])
  pair = pairs.blind_spot_pair(tf.constant(noisy), 0.03, seed)
  row, column = list(zip(*np.nonzero(pair['target_mask'].numpy()[0, ..., 0])))[0]
  offset = noisy.copy()
  offset[0, row] += 10.0
  moved = pairs.blind_spot_pair(tf.constant(offset), 0.03, seed)['input'].numpy()
  assert moved[0, row, column, 0] != pair['input'].numpy()[0, row, column, 0]


def test_a_structn2v_line_masks_its_centres_only_for_the_loss():
  noisy = tf.random.stateless_uniform([2, 32, 32, 1], [0, 1])
  pair = pairs.blind_spot_pair(noisy, 0.01, tf.constant([2, 3]), 'rows', 7)
  mask = pair['target_mask'].numpy()[..., 0]
  np.testing.assert_array_equal(mask.sum(axis=(1, 2)), [round(0.01 * 32 * 32)] * 2)
  changed = pair['input'].numpy()[..., 0] != noisy.numpy()[..., 0]
  # Up to 7 pixels a line, and nothing outside the lines of the masked rows.
  assert mask.sum() < changed.sum() <= 7 * mask.sum()
  for image, row, column in zip(*np.nonzero(changed)):
    assert mask[image, row, max(0, column - 3):column + 4].any()


def _where(volumes, value):
  """The one (volume, plane, row, column) of volumes [B, D, H, W, 1] holding value."""
  found = np.argwhere(volumes[..., 0] == value)
  assert len(found) == 1, value
  return tuple(found[0])


def test_volumes_are_subsampled_plane_by_plane_with_draws_of_their_own():
  shape = (2, 3, 8, 8, 1)
  noisy = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
  pair = pairs.neighbor2neighbor_pair(tf.constant(noisy), tf.constant([3, 9]))
  assert pair['input'].shape == pair['target'].shape == (2, 3, 4, 4, 1)
  assert pair['positions'].shape == (2, 3, 4, 4, 2)
  np.testing.assert_array_equal(pair['full'], noisy)
  first, second = pair['input'].numpy(), pair['target'].numpy()
  for volume, plane, row, column in np.ndindex(2, 3, 4, 4):
    taken = [_where(noisy, image[volume, plane, row, column, 0]) for image in (first, second)]
    for place in taken:
      # The same volume and plane (z keeps every plane), inside the 2x2 cell.
      assert place[:2] == (volume, plane) and (place[2] // 2, place[3] // 2) == (row, column)
    # Two different pixels, side by side or one above the other, never diagonal.
    assert abs(taken[0][2] - taken[1][2]) + abs(taken[0][3] - taken[1][3]) == 1
  # Each plane draws its own sampler choice.
  positions = pair['positions'].numpy()
  assert not np.array_equal(positions[0, 0], positions[0, 1])
  assert not np.array_equal(positions[0, 0], positions[1, 0])


def test_the_regulariser_of_volumes_compares_each_volume_with_the_same_sampling_of_its_output():
  from n2n.pipelines import neighbor2neighbor  # pylint: disable=g-import-not-at-top
  noisy = tf.random.stateless_uniform([3, 2, 8, 8, 1], [4, 4])
  pair = pairs.neighbor2neighbor_pair(noisy, tf.constant([5, 6]))
  # An identity network: f(g1(y)) - g2(y) equals g1(f(y)) - g2(f(y)) exactly.
  term = neighbor2neighbor.regulariser_term(pair['input'], pair['target'], noisy,
                                            pair['positions'])
  np.testing.assert_allclose(term, 0.0, atol=1e-12)
  # A prediction off by 0.1 in the second volume only costs that volume 0.01.
  off = pair['input'].numpy()
  off[1] += 0.1
  term = neighbor2neighbor.regulariser_term(tf.constant(off), pair['target'], noisy,
                                            pair['positions'])
  np.testing.assert_allclose(term, [0.0, 0.01, 0.0], atol=1e-6)


def test_2x2x2_cells_take_two_voxels_adjacent_along_z_y_or_x_of_every_cell():
  shape = (2, 8, 8, 8, 2)
  noisy = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
  pair = pairs.neighbor2neighbor_pair(tf.constant(noisy), tf.constant([3, 9]), cells='xyz')
  assert pair['input'].shape == pair['target'].shape == (2, 4, 4, 4, 2)
  assert pair['positions'].shape == (2, 4, 4, 4, 2)
  first, second = pair['input'].numpy(), pair['target'].numpy()
  directions = set()
  for volume, plane, row, column in np.ndindex(2, 4, 4, 4):
    taken = [np.argwhere(noisy == image[volume, plane, row, column, 0])[0]
             for image in (first, second)]
    for place in taken:
      # The same volume, inside the cell; the next channel is the same voxel's.
      assert place[0] == volume and tuple(place[1:4] // 2) == (plane, row, column)
      assert place[4] == 0
    step = np.abs(taken[0][1:4] - taken[1][1:4])
    assert step.sum() == 1  # one step along one axis: never diagonal, never the same voxel
    directions.add(int(np.argmax(step)))
    for image, place in zip((first, second), taken):
      assert image[volume, plane, row, column, 1] == noisy[tuple(place[:4]) + (1,)]
  assert directions == {0, 1, 2}  # z, y and x neighbours are all drawn
  # All 24 ordered pairs of adjacent voxels occur over the batch.
  positions = pair['positions'].numpy().reshape(-1, 2)
  assert len({tuple(pair) for pair in positions}) == 24


def test_the_regulariser_of_2x2x2_cells_samples_the_output_as_the_pair():
  from n2n.pipelines import neighbor2neighbor  # pylint: disable=g-import-not-at-top
  noisy = tf.random.stateless_uniform([3, 4, 8, 8, 1], [4, 4])
  pair = pairs.neighbor2neighbor_pair(noisy, tf.constant([5, 6]), cells='xyz')
  term = neighbor2neighbor.regulariser_term(pair['input'], pair['target'], noisy,
                                            pair['positions'], cells='xyz')
  np.testing.assert_allclose(term, 0.0, atol=1e-12)
  off = pair['input'].numpy()
  off[2] += 0.1
  term = neighbor2neighbor.regulariser_term(tf.constant(off), pair['target'], noisy,
                                            pair['positions'], cells='xyz')
  np.testing.assert_allclose(term, [0.0, 0.0, 0.01], atol=1e-6)


def _window_values_3d(volume, plane, row, column, line_axis=None):
  """The 5x5x5 neighbourhood's values the median is taken over: numpy's reflect
  padding of the voxels' numbers says which voxel each window place holds. Left
  out: places holding the voxel itself, and with a structN2V line every place
  holding a voxel of its own row ('rows') or column ('columns') of its own plane;
  the same line in other planes stays in. [values, C]."""
  numbers = np.arange(volume[..., 0].size).reshape(volume.shape[:3])
  window = np.pad(numbers, 2, mode='reflect')[plane:plane + 5, row:row + 5,
                                              column:column + 5].ravel()
  planes, rows, columns = np.unravel_index(window, volume.shape[:3])
  if line_axis == 'rows':
    hidden = (planes == plane) & (rows == row)
  elif line_axis == 'columns':
    hidden = (planes == plane) & (columns == column)
  else:
    hidden = window == numbers[plane, row, column]
  return volume.reshape(-1, volume.shape[-1])[window[~hidden]]


def _reference_median_3d(volume, plane, row, column, line_axis=None):
  """The median of _window_values_3d, per channel."""
  return np.median(_window_values_3d(volume, plane, row, column, line_axis), axis=0)


def test_the_3d_window_leaves_out_a_mirrored_copy_of_the_line_by_hand():
  """Plane 1: its window's plane offset -2 mirrors onto plane 1 itself, so with
  'rows' the own row is hidden twice over (offsets 0 and -2, 5 places each): 125 - 10."""
  volume = np.zeros((5, 7, 6, 1), np.float32)
  assert len(_window_values_3d(volume, 1, 3, 2, 'rows')) == 115
  assert len(_window_values_3d(volume, 2, 3, 2, 'rows')) == 120
  # Without a line only the voxel itself goes: at plane 1, twice (offsets 0 and -2).
  assert len(_window_values_3d(volume, 1, 3, 2)) == 123


@pytest.mark.parametrize('line_axis', [None, 'rows', 'columns'])
def test_every_voxels_median_matches_the_explicit_window_with_and_without_a_line(line_axis):
  """medians_without_centre at every voxel of a volume small enough that most windows
  mirror at some face, against the reference."""
  volume = np.random.default_rng(7).uniform(size=(1, 5, 7, 6, 2)).astype(np.float32)
  voxels = list(np.ndindex(*volume.shape[1:4]))
  positions = tf.constant([(0,) + voxel for voxel in voxels], tf.int32)
  medians = pairs.medians_without_centre(tf.constant(volume), positions, line_axis).numpy()
  for voxel, median in zip(voxels, medians):
    np.testing.assert_allclose(median, _reference_median_3d(volume[0], *voxel, line_axis),
                               rtol=1e-6, err_msg=str(voxel))


def test_a_masked_voxel_takes_its_5x5x5_neighbourhood_median_at_every_border():
  rng = np.random.default_rng(4)
  noisy = rng.uniform(size=(2, 6, 10, 9, 2)).astype(np.float32)
  pair = pairs.blind_spot_pair(tf.constant(noisy), 0.3, tf.constant([7, 1]))
  mask = pair['target_mask'].numpy()[..., 0].astype(bool)
  assert pair['target_mask'].shape == (2, 6, 10, 9, 1)
  np.testing.assert_array_equal(mask.sum(axis=(1, 2, 3)), [round(0.3 * 6 * 10 * 9)] * 2)
  replaced = pair['input'].numpy()
  np.testing.assert_array_equal(pair['target'].numpy(), noisy)
  np.testing.assert_array_equal(replaced[~mask], noisy[~mask])
  masked = list(zip(*np.nonzero(mask)))
  # The draw covers the first and last two planes, where the window mirrors in z.
  assert {0, 1, 4, 5} <= {plane for _, plane, _, _ in masked}
  for volume, plane, row, column in masked:
    np.testing.assert_allclose(replaced[volume, plane, row, column],
                               _reference_median_3d(noisy[volume], plane, row, column),
                               rtol=1e-6)


def test_no_voxel_of_a_volume_sees_itself_in_its_replacement():
  rng = np.random.default_rng(5)
  volume = rng.uniform(size=(4, 5, 3, 1)).astype(np.float32)
  voxels = list(np.ndindex(*volume.shape[:3]))
  copies = np.repeat(volume[np.newaxis], len(voxels), axis=0)
  for index, voxel in enumerate(voxels):
    copies[(index,) + voxel] = 50.0 + index
  positions = tf.constant([(index,) + voxel for index, voxel in enumerate(voxels)], tf.int32)
  untouched = pairs.medians_without_centre(
      tf.constant(np.repeat(volume[np.newaxis], len(voxels), axis=0)), positions)
  perturbed = pairs.medians_without_centre(tf.constant(copies), positions)
  np.testing.assert_array_equal(perturbed.numpy(), untouched.numpy())
  assert perturbed.numpy().max() < 1.0


@pytest.mark.parametrize('line_axis', ['rows', 'columns'])
def test_a_structn2v_line_in_a_volume_lies_in_its_plane_and_hides_it(line_axis):
  """Line noise is per plane (a camera's frame): each masked voxel's row (column)
  of its own plane is offset in a copy, and its line's inputs must not move;
  nothing outside the masked voxels' lines in their planes is replaced."""
  rng = np.random.default_rng(6)
  noisy = rng.uniform(size=(1, 4, 12, 12, 1)).astype(np.float32)
  seed = tf.constant([8, 3])
  pair = pairs.blind_spot_pair(tf.constant(noisy), 0.02, seed, line_axis, 5)
  mask = pair['target_mask'].numpy()[0, ..., 0]
  masked = list(zip(*np.nonzero(mask)))
  assert len(masked) == round(0.02 * 4 * 12 * 12)
  changed = pair['input'].numpy()[0, ..., 0] != noisy[0, ..., 0]
  for plane, row, column in zip(*np.nonzero(changed)):
    if line_axis == 'rows':
      assert mask[plane, row, max(0, column - 2):column + 3].any()
    else:
      assert mask[plane, max(0, row - 2):row + 3, column].any()
  for plane, row, column in masked:
    offset = noisy.copy()
    if line_axis == 'rows':
      offset[0, plane, row] += 10.0
      line = [(plane, row, c) for c in range(max(0, column - 2), min(12, column + 3))]
    else:
      offset[0, plane, :, column] += 10.0
      line = [(plane, r, column) for r in range(max(0, row - 2), min(12, row + 3))]
    moved = pairs.blind_spot_pair(tf.constant(offset), 0.02, seed, line_axis, 5)['input']
    for place in line:
      np.testing.assert_array_equal(moved.numpy()[0][place], pair['input'].numpy()[0][place])
