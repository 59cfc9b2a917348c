"""The noise statistics recover what is known: a level set by hand, no
correlation for independent pixels, and the correlation that filtering white
noise makes (worked out by hand, not measured by the code under test)."""

import dataclasses
import glob
import os

import imageio.v3 as iio
import numpy as np
import pytest

from n2n.data import camera_pipeline
from n2n.data import microscope_noise
from n2n.diagnosis import noise_statistics
from tests.conftest import REPO_ROOT


def _photographs():
  """The demo's two validation photographs, [H, W, 3] on a 0-1 scale."""
  paths = sorted(glob.glob(os.path.join(REPO_ROOT, 'datasets', 'demo', 'val', '*.png')))
  return [iio.imread(path)[..., :3] / 255.0 for path in paths]


def _box_filtered(white, axes):
  """White noise averaged over 2 neighbours along each axis in axes, scaled
  back to its variance: correlation 0.5 at lag 1 along each such axis (0.25
  at lag (1, 1) for both), 0 beyond."""
  noise = white
  for axis in axes:
    noise = (np.take(noise, range(noise.shape[axis] - 1), axis=axis)
             + np.take(noise, range(1, noise.shape[axis]), axis=axis)) / np.sqrt(2)
  return noise


def _assert_level(profile, sigma):
  measured = profile.sigma[~np.isnan(profile.sigma)]
  assert measured.size >= profile.sigma.size // 2
  assert np.mean(measured) == pytest.approx(sigma, rel=0.15)
  np.testing.assert_allclose(measured, sigma, rtol=0.25)


def test_pairs_of_independent_pixel_noise_read_their_level_and_no_correlation():
  rng = np.random.default_rng(0)
  # One level at the centre of each of the 8 signal bins, the noise small
  # beside the bins' width (under 0.02 against 0.0625 to a bin's edge).
  levels = (np.arange(8) + 0.5) / 8
  clean = np.repeat(levels, 25)[None, :, None].repeat(160, axis=0).repeat(3, axis=2)
  sigma = np.sqrt(0.0004 * clean + 0.00002)
  pairs = [[clean + sigma * rng.standard_normal(clean.shape) for _ in range(2)]
           for _ in range(3)]
  profile = noise_statistics.measure_pairs(pairs)
  np.testing.assert_allclose(profile.signal, levels, atol=0.002)
  expected = np.sqrt(0.0004 * levels + 0.00002)
  np.testing.assert_allclose(profile.sigma, expected[:, None].repeat(3, axis=1), rtol=0.03)
  np.testing.assert_allclose(profile.fit, [[0.0004, 0.00002]] * 3, rtol=0.1, atol=2e-6)
  off_centre = np.delete(profile.correlation.ravel(), profile.correlation.size // 2)
  assert np.abs(off_centre).max() < 0.02 and profile.correlation[4, 4] == pytest.approx(1.0)


@pytest.mark.parametrize('axes,along_x,along_y', [
    ((1,), [0.5, 0, 0, 0], [0, 0, 0, 0]),
    ((0,), [0, 0, 0, 0], [0.5, 0, 0, 0]),
    ((0, 1), [0.5, 0, 0, 0], [0.5, 0, 0, 0]),
])
def test_pairs_read_the_correlation_filtering_makes_at_every_lag(axes, along_x, along_y):
  rng = np.random.default_rng(1)
  pairs = []
  for _ in range(2):
    noise = [_box_filtered(0.05 * rng.standard_normal((201, 201, 1)), axes) for _ in range(2)]
    clean = np.full(noise[0].shape, 0.5)
    pairs.append([clean + noise[0], clean + noise[1]])
  profile = noise_statistics.measure_pairs(pairs)
  np.testing.assert_allclose(profile.correlation_x, along_x, atol=0.02)
  np.testing.assert_allclose(profile.correlation_y, along_y, atol=0.02)
  diagonal = 0.25 if len(axes) == 2 else 0.0
  assert profile.correlation[5, 5] == pytest.approx(diagonal, abs=0.02)
  assert profile.correlation[3, 5] == pytest.approx(diagonal, abs=0.02)


@pytest.mark.parametrize('sigma', [5, 15])
def test_single_photographs_read_independent_noise_as_uncorrelated_at_its_level(sigma):
  rng = np.random.default_rng(2)
  noisy = [photo + sigma / 255 * rng.standard_normal(photo.shape) for photo in _photographs()]
  profile = noise_statistics.estimate_single(noisy)
  # The tolerances docs/diagnosis.md states for the single-image estimate: the
  # level within 15% on average, and within 25% in every signal bin and
  # channel that holds patches (the noise's level is the same in all).
  _assert_level(profile, sigma / 255)
  assert np.abs(profile.correlation_x).max() < 0.1 and np.abs(profile.correlation_y).max() < 0.1


def test_single_photographs_read_the_correlation_of_filtered_noise():
  rng = np.random.default_rng(3)
  noisy = []
  for photo in _photographs():
    noise = _box_filtered(10 / 255 * rng.standard_normal(photo.shape), (0, 1))
    noisy.append(photo[:noise.shape[0], :noise.shape[1]] + noise)
  profile = noise_statistics.estimate_single(noisy)
  np.testing.assert_allclose(profile.correlation_x, [0.5, 0, 0, 0], atol=0.1)
  np.testing.assert_allclose(profile.correlation_y, [0.5, 0, 0, 0], atol=0.1)
  assert profile.correlation_length(0.2) == 2


def test_the_flattest_patches_are_found_beside_texture():
  """Half the image is strong texture, half flat: an estimate over every patch
  would read the texture's variance and correlation."""
  rng = np.random.default_rng(4)
  texture = np.kron(rng.uniform(0, 1, (32, 16, 1)), np.ones((4, 4, 1)))
  image = np.concatenate([texture, np.full((128, 64, 1), 0.4)], axis=1)
  noisy = image + 0.02 * rng.standard_normal(image.shape)
  profile = noise_statistics.estimate_single([noisy])
  assert np.nanmean(profile.sigma) == pytest.approx(0.02, rel=0.15)
  assert abs(profile.correlation_x[0]) < 0.1


def test_an_image_smaller_than_a_patch_is_refused_naming_its_size():
  with pytest.raises(ValueError, match='an image of 8x30 pixels is smaller than a 16x16 patch'):
    noise_statistics.estimate_single([np.zeros((8, 30, 1))])


def test_single_photographs_read_the_camera_simulators_correlation_as_two_captures_measure_it():
  """The simulator's correlation has no closed form in sRGB: two captures
  measure it on every pixel, and the single-image estimate of the first
  captures must agree within the stated 0.1 at every lag."""
  rng = np.random.default_rng(5)
  firsts, pairs = [], []
  for index, photo in enumerate(_photographs()):
    settings = camera_pipeline.random_settings(np.random.default_rng(index),
                                               shot_range=(0.002, 0.01))
    captures, _ = camera_pipeline.captures_of(camera_pipeline.even_crop(photo), settings, 2, rng)
    pairs.append([capture / 255.0 for capture in captures])
    firsts.append(pairs[-1][0])
  measured = noise_statistics.measure_pairs(pairs)
  estimated = noise_statistics.estimate_single(firsts)
  assert measured.correlation_x[0] > 0.4
  np.testing.assert_allclose(estimated.correlation_x, measured.correlation_x, atol=0.1)
  np.testing.assert_allclose(estimated.correlation_y, measured.correlation_y, atol=0.1)


def test_single_images_read_sCMOS_row_noise_as_two_captures_measure_it():
  rng = np.random.default_rng(6)
  settings = microscope_noise.ScmosSettings(photons=100, read_sigma=2, row_sigma=3)
  firsts, pairs = [], []
  for photo in _photographs():
    luma = photo.mean(axis=2)
    pairs.append([microscope_noise.capture(luma, settings, rng)[..., None] / 65535.0
                  for _ in range(2)])
    firsts.append(pairs[-1][0])
  measured = noise_statistics.measure_pairs(pairs)
  estimated = noise_statistics.estimate_single(firsts)
  assert measured.correlation_x[-1] > 0.05 and abs(measured.correlation_y[-1]) < 0.02
  np.testing.assert_allclose(estimated.correlation_x, measured.correlation_x, atol=0.1)
  np.testing.assert_allclose(estimated.correlation_y, measured.correlation_y, atol=0.1)


def test_saturated_and_noise_free_areas_are_left_out():
  """A photograph whose top 40% is blown out to white: those patches hold no
  noise (the old estimate read them as sigma 0, correlation 0.68); an image
  without noise anywhere is refused."""
  rng = np.random.default_rng(7)
  photo = _photographs()[0]
  noisy = np.clip(photo + 20 / 255 * rng.standard_normal(photo.shape), 0, 1)
  noisy[:int(0.4 * noisy.shape[0])] = 1.0
  profile = noise_statistics.estimate_single([noisy])
  _assert_level(profile, 20 / 255)
  assert abs(profile.correlation_x[0]) < 0.1
  with pytest.raises(ValueError, match='no patch shows noise'):
    noise_statistics.estimate_single([np.full((64, 64, 3), 0.5)])


def test_captures_too_small_for_the_lags_are_refused_naming_their_size():
  with pytest.raises(ValueError, match='captures of 3x3 pixels are too small'):
    noise_statistics.measure_pairs([[np.zeros((3, 3, 1)), np.ones((3, 3, 1))]])


def _pairs_of_levels(variance_of_signal, seed):
  """Pairs of captures of one level at the centre of each signal bin, with
  independent noise of variance variance_of_signal(signal)."""
  rng = np.random.default_rng(seed)
  levels = (np.arange(8) + 0.5) / 8
  clean = np.repeat(levels, 25)[None, :, None].repeat(160, axis=0).repeat(3, axis=2)
  sigma = np.sqrt(variance_of_signal(clean))
  return [[clean + sigma * rng.standard_normal(clean.shape) for _ in range(2)]
          for _ in range(3)]


def test_noise_whose_level_falls_with_the_signal_does_not_fit_the_poisson_gaussian_model():
  # As after a tone curve: the variance falls from 0.00042 in the shadows to 0.00002.
  profile = noise_statistics.measure_pairs(_pairs_of_levels(lambda s: 0.0004 * (1 - s) + 0.00002,
                                                            seed=8))
  assert np.all(profile.fit[:, 0] < 0)
  assert profile.fit_misses() == ['falls'] * 3
  saved = profile.to_dict()
  assert saved['poisson_gaussian_fits'] == [False] * 3
  assert all(shot < 0 for shot, _ in saved['fit_shot_read'])  # the fit as found


def test_rising_and_flat_levels_fit_the_poisson_gaussian_model():
  rising = noise_statistics.measure_pairs(_pairs_of_levels(lambda s: 0.0004 * s + 0.00002, 9))
  flat = noise_statistics.measure_pairs(_pairs_of_levels(lambda s: np.full_like(s, 0.0002), 10))
  assert rising.fit_misses() == flat.fit_misses() == [None] * 3
  assert rising.to_dict()['poisson_gaussian_fits'] == [True] * 3
  # A flat level's fitted shot is near 0, of either sign, and falls far less than the limit.
  low, high = flat.fitted_variance().T
  assert np.all(np.abs(1 - np.sqrt(high / low)) < noise_statistics.LEVEL_FALL_LIMIT / 2)


def test_a_fit_with_a_negative_variance_at_the_lowest_signal_does_not_fit():
  profile = noise_statistics.measure_pairs(_pairs_of_levels(lambda s: 0.0004 * s + 0.00002, 11))
  shifted = dataclasses.replace(profile, fit=profile.fit - [0.0, 0.0002])
  assert shifted.fit_misses() == ['negative'] * 3


def test_a_level_that_rises_then_falls_departs_from_the_fit():
  # The level of processed sRGB: highest in the mid-tones, low in shadows and highlights.
  profile = noise_statistics.measure_pairs(
      _pairs_of_levels(lambda s: 0.0004 * (4 * s * (1 - s))**2 + 0.000005, seed=12))
  assert profile.fit_misses() == ['departs'] * 3
  assert profile.to_dict()['poisson_gaussian_fits'] == [False] * 3


# Noise mixed between channels by this matrix: its channels' correlation is
# mixing @ mixing.T over the outer product of its row norms, worked out below
# by hand: rows (1, 0, 0), (0.6, 0.8, 0), (-0.6, 0, 0.8), each of norm 1, so
# the correlations are the rows' dot products: R-G 0.6, R-B -0.6, G-B -0.36.
_CHANNEL_MIXING = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.6, 0.0, 0.8]])
_CHANNEL_CORRELATION = np.array([[1.0, 0.6, -0.6], [0.6, 1.0, -0.36], [-0.6, -0.36, 1.0]])


def test_pairs_and_single_photographs_read_the_correlation_between_channels():
  rng = np.random.default_rng(5)
  draw = lambda photo: 8 / 255 * rng.standard_normal(photo.shape) @ _CHANNEL_MIXING.T
  photos = _photographs()
  single = noise_statistics.estimate_single([photo + draw(photo) for photo in photos])
  pairs = noise_statistics.measure_pairs([(photo + draw(photo), photo + draw(photo))
                                          for photo in photos])
  np.testing.assert_allclose(pairs.channel_correlation, _CHANNEL_CORRELATION, atol=0.02)
  # The single-image reading leans positive: the flattest patches keep some
  # grey texture (correlated between channels) and are chosen for their own
  # flatness; the bound allows for that.
  np.testing.assert_allclose(single.channel_correlation, _CHANNEL_CORRELATION, atol=0.25)
  assert np.array_equal(np.sign(single.channel_correlation), np.sign(_CHANNEL_CORRELATION))
  # Independent channels read as independent.
  independent = noise_statistics.measure_pairs(
      [(photo + 8 / 255 * rng.standard_normal(photo.shape),
        photo + 8 / 255 * rng.standard_normal(photo.shape)) for photo in photos])
  np.testing.assert_allclose(independent.channel_correlation, np.eye(3), atol=0.02)
