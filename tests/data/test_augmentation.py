import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import augmentation


def _as_uint8(floats):
  return np.round(floats.numpy() * 255.0).astype(np.uint8)


def test_augmentation_keeps_content_and_draws_a_transform_per_crop():
  crop = np.arange(4 * 4 * 3, dtype=np.uint8).reshape(4, 4, 3)
  crops = tf.constant(np.stack([crop] * 48))
  augment = config_lib.AugmentConfig(flips=True, rotations=True, channel_permutations=True)
  out = _as_uint8(augmentation.augment_crops(crops, augment, tf.constant([0, 1])))
  for augmented in out:
    assert sorted(augmented.ravel()) == sorted(crop.ravel())
  assert len({tuple(augmented[0, 0] % 3) for augmented in out}) == 6  # channel orders
  # Corner pixel positions: all 8 flips/rotations of a square show up.
  assert len({tuple(augmented[0, 0] // 3) for augmented in out}) == 4
  assert len({tuple(augmented[0, :2].ravel() // 3) for augmented in out}) == 8
  off = config_lib.AugmentConfig(flips=False, rotations=False, channel_permutations=False)
  plain = augmentation.augment_crops(crops, off, tf.constant([0, 1]))
  assert plain.dtype == tf.float32
  np.testing.assert_allclose(plain.numpy(), crops.numpy() / 255.0, rtol=1e-6)


def test_rotations_alone_give_the_four_rotations():
  crop = np.arange(4 * 4, dtype=np.uint8).reshape(4, 4, 1)
  crops = tf.constant(np.stack([crop] * 32))
  only_rotations = config_lib.AugmentConfig(flips=False, rotations=True,
                                            channel_permutations=False)
  out = _as_uint8(augmentation.augment_crops(crops, only_rotations, tf.constant([0, 2])))
  rotations = {np.rot90(crop, turns).tobytes() for turns in range(4)}
  assert {augmented.tobytes() for augmented in out} == rotations


def test_dihedral_maps_match_numpy_flips_and_rotations():
  image = np.arange(5 * 5).reshape(5, 5)
  maps = augmentation.dihedral_index_maps(5)
  for turns in range(4):
    for up_down in (0, 1):
      for left_right in (0, 1):
        expected = image[:, ::-1] if left_right else image
        expected = np.rot90(expected[::-1] if up_down else expected, turns)
        np.testing.assert_array_equal(
            image.ravel()[maps[left_right + 2 * up_down + 4 * turns]], expected.ravel())
