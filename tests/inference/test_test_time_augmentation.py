"""Test-time augmentation (denoise.py --tta, validate.py --tta): the mean over
the 8 flips and rotations, each turned back."""

import numpy as np
import pytest

from n2n import config as config_lib
from n2n.inference import whole_images
from n2n.model import unet


def test_an_equivariant_denoiser_is_unchanged_and_shapes_are_kept():
  # A 3x3 mean with edge padding commutes with every flip and rotation.
  def box(image):
    padded = np.pad(image, [(1, 1), (1, 1), (0, 0)], mode='edge')
    return np.mean([padded[row:row + image.shape[0], column:column + image.shape[1]]
                    for row in range(3) for column in range(3)], axis=0)

  image = np.random.default_rng(0).uniform(size=(13, 21, 3)).astype(np.float32)
  averaged = whole_images.with_test_time_augmentation(box)(image)
  assert averaged.shape == image.shape and averaged.dtype == np.float32
  np.testing.assert_allclose(averaged, box(image), atol=1e-6)


def test_each_pass_is_turned_back_before_the_mean():
  # A denoiser that is not equivariant: it marks its top-left pixel. Turned back,
  # the 8 passes put the mark on the 4 corners, twice each.
  def mark_top_left(image):
    marked = np.zeros_like(image)
    marked[0, 0] = 8.0
    return marked

  averaged = whole_images.with_test_time_augmentation(mark_top_left)(np.zeros((5, 7, 1), np.float32))
  expected = np.zeros((5, 7, 1), np.float32)
  for row, column in ((0, 0), (0, 6), (4, 0), (4, 6)):
    expected[row, column] = 2.0
  np.testing.assert_array_equal(averaged, expected)


def test_tta_through_tiles_differs_from_whole_images_no_more_than_without_it():
  # Portrait and landscape passes of a 70x90 image cut into 64-pixel tiles
  # differently; the mean must still line up pixel for pixel.
  model = unet.build_unet(1, seed=2)
  image = np.random.default_rng(1).uniform(size=(70, 90, 1)).astype(np.float32)
  whole, tiled = whole_images.make_denoiser(model), whole_images.make_denoiser(model, 64, 16)
  plain_gap = np.abs(tiled(image) - whole(image)).mean()
  tta = whole_images.with_test_time_augmentation
  tta_gap = np.abs(tta(tiled)(image) - tta(whole)(image)).mean()
  assert np.abs(tta(whole)(image) - whole(image)).max() > 1e-3  # not equivariant: TTA acts
  assert tta_gap <= plain_gap


def test_tta_with_follow_is_refused_in_one_line():
  with pytest.raises(ValueError, match='--tta scores one checkpoint'):
    config_lib.ValidateConfig(checkpoint='runs/x', tta=True, follow=True)


def test_volumes_are_turned_and_flipped_in_y_and_x_only():
  # Marks the top-left voxel of its first plane only: turned back, the mark is at
  # the four corners of the first plane (z is never flipped), twice each.
  def mark_first_plane_corner(volume):
    marked = np.zeros_like(volume)
    marked[0, 0, 0] = 8.0
    return marked

  volume = np.zeros((3, 5, 7, 1), np.float32)
  averaged = whole_images.with_test_time_augmentation(mark_first_plane_corner)(volume)
  expected = np.zeros_like(volume)
  for row, column in ((0, 0), (0, 6), (4, 0), (4, 6)):
    expected[0, row, column] = 2.0
  np.testing.assert_array_equal(averaged, expected)
  assert whole_images.augmented_shapes((3, 5, 7)) == [(3, 5, 7), (3, 5, 7), (3, 7, 5),
                                                      (3, 7, 5)] * 2
