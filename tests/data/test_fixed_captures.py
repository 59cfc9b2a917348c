"""Simulated captures (--noise_captures): each clean image corrupted a fixed
number of times, and the pairs drawn from those captures only."""

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import fixed_captures
from n2n.training import train_lib


def _capture(name, index=0, seed=0):
  image = tf.fill([16, 16, 3], tf.constant(128, tf.uint8))
  return fixed_captures.fixed_capture(tf.constant(name), image, 'gaussian', (25.0, 25.0), seed,
                                      index).numpy()


def test_a_capture_is_a_pure_function_of_seed_image_and_index():
  np.testing.assert_array_equal(_capture('a.png'), _capture('a.png'))
  for other in (_capture('b.png'), _capture('a.png', index=1), _capture('a.png', seed=1)):
    assert np.abs(_capture('a.png') - other).mean() > 0.05
  assert abs(float(np.std(_capture('a.png'))) - 25 / 255) < 0.01


def test_the_captures_of_an_image_share_its_level():
  image = tf.fill([64, 64, 1], tf.constant(128, tf.uint8))
  spreads = [float(np.std(fixed_captures.fixed_capture(tf.constant('a.png'), image, 'gaussian',
                                                       (5.0, 50.0), 0, index)))
             for index in range(3)]
  assert max(spreads) - min(spreads) < 0.1 * min(spreads)


def _config(tfrecord_dir, **overrides):
  values = dict(train_data=str(tfrecord_dir / '*.tfrecord'), model_dir='unused',
                noise='gaussian', noise_range=(25.0, 25.0), crop_size=32, batch_size=4,
                crops_per_image=1, seed=2, augment_flips=False, augment_rotations=False,
                augment_channel_permutations=False)
  values.update(overrides)
  return config_lib.train_config(**values)


def _stored_captures(tfrecord_dir, config):
  """[N, H, W, C] float32 captures of every image of the dataset, in record order."""
  records = tf.data.TFRecordDataset(tf.io.gfile.glob(str(tfrecord_dir / '*.tfrecord')))
  return [captures.numpy() for captures, _ in
          (fixed_captures.parse_captures(record, config) for record in records)]


def _is_crop_of(crop, image):
  """True when crop [S, S, C] appears in image [H, W, C] at some offset."""
  size = crop.shape[0]
  # Noisy values are all but unique: look only where the corner value occurs.
  for top, left in zip(*np.nonzero(image[:, :, 0] == crop[0, 0, 0])):
    if np.array_equal(image[top:top + size, left:left + size], crop):
      return True
  return False


def test_pairs_of_two_captures_are_two_different_fixed_captures(tfrecord_dir):
  config = _config(tfrecord_dir, noise_captures=2)
  captures = _stored_captures(tfrecord_dir, config)
  dataset = train_lib.build_dataset(config, 4, cache=False)
  for element in dataset.take(3):
    for crop_in, crop_target in zip(element['input'].numpy(), element['target'].numpy()):
      found = [(image, index) for image, both in enumerate(captures)
               for index in range(2) if _is_crop_of(crop_in, both[index])]
      assert len(found) == 1, 'the input is a crop of exactly one stored capture'
      image, index = found[0]
      assert _is_crop_of(crop_target, captures[image][1 - index])


def test_a_clean_target_pairs_a_fixed_capture_with_its_clean_image(tfrecord_dir):
  config = _config(tfrecord_dir, noise_captures=1, target='clean')
  captures = _stored_captures(tfrecord_dir, config)
  element = next(iter(train_lib.build_dataset(config, 4, cache=False)))
  for crop_in, crop_target in zip(element['input'].numpy(), element['target'].numpy()):
    assert any(_is_crop_of(crop_in, both[0]) for both in captures)
    # The clean target is on the 256-level grid; the capture is not.
    np.testing.assert_allclose(crop_target * 255, np.round(crop_target * 255), atol=1e-3)


def test_single_image_methods_train_on_every_capture_and_only_on_them(tfrecord_dir):
  config = _config(tfrecord_dir, method='blind_spot', noise_captures=2)
  captures = [capture for both in _stored_captures(tfrecord_dir, config) for capture in both]
  seen = set()
  for element in train_lib.build_dataset(config, 4, cache=False).take(12):
    for crop in element['target'].numpy():
      matches = [index for index, capture in enumerate(captures) if _is_crop_of(crop, capture)]
      assert len(matches) == 1
      seen.add(matches[0])
  assert len(seen) == len(captures)
  assert config_lib.train_config(train_data='x', model_dir='y', crop_size=64,
                                method='neighbor2neighbor').corruption.noise_captures == 1


@pytest.mark.parametrize('overrides, message', [
    (dict(noise_captures=1),
     '--noise_captures=1 leaves one capture of each image: --method=pairs with --target=noisy '
     'needs 2 or more'),
    (dict(noise_captures=2, noise='bernoulli'),
     '--noise_captures=2 is not supported with --noise=bernoulli'),
    (dict(noise_captures=2, noise='none'),
     '--noise_captures=2 simulates captures with synthetic noise; with --noise=none'),
])
def test_captures_that_cannot_make_pairs_are_refused_in_one_line(overrides, message):
  values = dict(train_data='x', model_dir='y')
  values.update(overrides)
  with pytest.raises(ValueError, match=message.replace('(', r'\(').replace(')', r'\)')):
    config_lib.train_config(**values)
