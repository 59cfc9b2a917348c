"""Training elements from single noisy images: the neighbour sub-sampler and
blind-spot masking (issue 22)."""

import numpy as np
import tensorflow as tf

from n2n.data import single_image_pairs as pairs
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
  # Each value is the pixel its cell's position names.
  positions = pair['positions'].numpy()
  for image in range(2):
    for row in range(4):
      for column in range(4):
        cell = positions[image, row, column, 0]
        pixel = (2 * row + cell // 2) * 8 + 2 * column + cell % 2
        assert pair['input'].numpy()[image, row, column, 0] == image * 1e5 + pixel


def test_positions_are_random_per_image_and_step_and_repeat_for_a_seed():
  draw = lambda seed: pairs.neighbour_positions(2, 32, 32, tf.constant(seed)).numpy()
  np.testing.assert_array_equal(draw([5, 6]), draw([5, 6]))
  assert (draw([5, 6]) != draw([5, 7])).mean() > 0.5  # another step's seed
  first, second = draw([5, 6])
  assert (first != second).mean() > 0.5  # two images of one batch
  # Through the dataset: every batch folds its index into the run's seed.
  noisy = tf.data.Dataset.from_tensors(_numbered(2, 64, 1)).repeat(3)
  run = lambda: [element['positions'].numpy() for element in pairs.method_dataset(
      noisy, 'neighbor2neighbor', 0.0, tf.constant([1, 2], tf.int64))]
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


def _median_without_centre(image, row, column):
  padded = np.pad(image, [(2, 2), (2, 2), (0, 0)], mode='reflect')
  window = padded[row:row + 5, column:column + 5].reshape(25, -1)
  return np.median(np.delete(window, 12, axis=0), axis=0)


def test_a_masked_pixel_takes_its_neighbourhood_median_never_itself():
  rng = np.random.default_rng(1)
  noisy = rng.uniform(size=(2, 16, 16, 3)).astype(np.float32)
  pair = pairs.blind_spot_pair(tf.constant(noisy), 0.05, tf.constant([7, 8]))
  mask = pair['target_mask'].numpy()[..., 0].astype(bool)
  replaced = pair['input'].numpy()
  np.testing.assert_array_equal(pair['target'].numpy(), noisy)
  np.testing.assert_array_equal(replaced[~mask], noisy[~mask])
  for image, row, column in zip(*np.nonzero(mask)):
    np.testing.assert_allclose(replaced[image, row, column],
                               _median_without_centre(noisy[image], row, column), rtol=1e-6)
  # Whatever the masked pixel held, its replacement is the same.
  image, row, column = [int(value[0]) for value in np.nonzero(mask)]
  changed = noisy.copy()
  changed[image, row, column] = 100.0
  again = pairs.blind_spot_pair(tf.constant(changed), 0.05, tf.constant([7, 8]))
  np.testing.assert_array_equal(again['input'].numpy()[image, row, column],
                                replaced[image, row, column])


def test_the_mask_fraction_is_the_setting_and_the_loss_sees_masked_pixels_only():
  noisy = tf.random.stateless_uniform([3, 64, 64, 1], [0, 0])
  pair = pairs.blind_spot_pair(noisy, 0.01, tf.constant([2, 3]))
  counts = pair['target_mask'].numpy().sum(axis=(1, 2, 3))
  np.testing.assert_array_equal(counts, [round(0.01 * 64 * 64)] * 3)
  prediction = pair['target'].numpy().copy()
  prediction[pair['target_mask'].numpy()[..., 0] == 0] += 5.0  # wrong only where unmasked
  loss = losses.masked_l2_loss(tf.constant(prediction), pair['target'], pair['target_mask'])
  np.testing.assert_allclose(loss, 0.0, atol=1e-12)
