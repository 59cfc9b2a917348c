"""The camera simulator: its processing inverts its unprocessing, its mosaic and
demosaicing do what their names say, its captures are seeded and their raw
noise independent, and the noise it makes is spatially correlated."""

import dataclasses

import numpy as np
import pytest

from bench.recipes.images import smooth_image
from n2n.data import camera_pipeline
from n2n.diagnosis import noise_statistics


def _photo(seed, height=64, width=96):
  return smooth_image(np.random.default_rng(seed), height, width) / 255.0


@pytest.mark.parametrize('seed', range(4))
def test_processing_inverts_unprocessing_on_a_clean_photograph(seed):
  settings = camera_pipeline.random_settings(np.random.default_rng(seed))
  srgb = _photo(seed)
  back = camera_pipeline.process(camera_pipeline.unprocess(srgb, settings), settings)
  np.testing.assert_allclose(back, srgb, atol=1e-6)


def test_random_cameras_keep_white_and_draw_the_papers_noise_levels():
  rng = np.random.default_rng(0)
  for _ in range(50):
    settings = camera_pipeline.random_settings(rng)
    np.testing.assert_allclose(settings.rgb_to_camera.sum(axis=1), 1.0)
    assert np.all(np.diag(settings.rgb_to_camera) >= 0.6) and np.all(settings.rgb_to_camera > 0)
    assert 0.0001 <= settings.shot <= 0.012
    # log(read) = 2.18 log(shot) + 1.2 + N(0, 0.26): within 4 standard deviations.
    assert abs(np.log(settings.read) - (2.18 * np.log(settings.shot) + 1.2)) < 4 * 0.26
    assert 1.9 <= settings.red_gain <= 2.4 and 1.5 <= settings.blue_gain <= 1.9


def test_mosaic_keeps_each_sites_own_colour():
  camera = np.random.default_rng(1).uniform(size=(6, 8, 3))
  raw = camera_pipeline.mosaic(camera)
  for row in range(6):
    for column in range(8):
      channel = {(0, 0): 0, (0, 1): 1, (1, 0): 1, (1, 1): 2}[(row % 2, column % 2)]
      assert raw[row, column] == camera[row, column, channel]


def test_demosaicing_keeps_every_sample_and_fills_each_gap_with_its_nearest_sites():
  """Every pixel, borders included: beyond an edge the nearest site of a colour
  is the one mirrored about the edge pixel (index -1 reads index 1)."""
  raw = np.random.default_rng(2).uniform(size=(10, 12))
  rgb = camera_pipeline.demosaic(raw)

  def at(row, column):
    row = -row if row < 0 else (2 * 9 - row if row > 9 else row)
    column = -column if column < 0 else (2 * 11 - column if column > 11 else column)
    return raw[row, column]

  for row in range(10):
    for column in range(12):
      up, down, left, right = (at(row - 1, column), at(row + 1, column), at(row, column - 1),
                               at(row, column + 1))
      diagonals = (at(row - 1, column - 1) + at(row - 1, column + 1) + at(row + 1, column - 1)
                   + at(row + 1, column + 1)) / 4
      site = (row % 2, column % 2)
      if site == (0, 0):  # red: green from 4 neighbours, blue from 4 diagonals
        expected = (raw[row, column], (up + down + left + right) / 4, diagonals)
      elif site == (1, 1):  # blue
        expected = (diagonals, (up + down + left + right) / 4, raw[row, column])
      elif site == (0, 1):  # green on a red row: red left and right, blue above and below
        expected = ((left + right) / 2, raw[row, column], (up + down) / 2)
      else:  # green on a blue row
        expected = ((up + down) / 2, raw[row, column], (left + right) / 2)
      np.testing.assert_allclose(rgb[row, column], expected, atol=1e-12)


def test_mosaic_then_demosaicing_gives_a_smooth_photograph_back_within_40_db():
  # Smooth content (8-pixel blocks, blurred) is what bilinear demosaicing gets right.
  srgb = _photo(3, 128, 128)
  for _ in range(3):
    srgb = camera_pipeline._binomial_blur(srgb)  # pylint: disable=protected-access
  settings = camera_pipeline.random_settings(np.random.default_rng(3))
  camera = camera_pipeline.unprocess(srgb, settings)
  back = camera_pipeline.demosaic(camera_pipeline.mosaic(camera))
  inner = (slice(2, -2), slice(2, -2))
  mse = np.mean((back[inner] - camera[inner])**2)
  assert 10 * np.log10(1 / mse) > 40


def test_captures_are_seeded_and_each_draws_its_own_raw_noise():
  settings = camera_pipeline.random_settings(np.random.default_rng(4), jpeg_quality=90)
  srgb = camera_pipeline.even_crop(_photo(4, 65, 97))
  first, reference = camera_pipeline.captures_of(srgb, settings, 2, np.random.default_rng(5))
  again, _ = camera_pipeline.captures_of(srgb, settings, 2, np.random.default_rng(5))
  assert srgb.shape == (64, 96, 3) and reference.shape == (64, 96, 3)
  assert all(np.array_equal(a, b) for a, b in zip(first, again))
  assert not np.array_equal(first[0], first[1])
  raw = camera_pipeline.mosaic(camera_pipeline.unprocess(_photo(6, 256, 256), settings))
  rng = np.random.default_rng(7)
  noise = [camera_pipeline.raw_noise(raw, settings, rng) - raw for _ in range(2)]
  assert abs(np.corrcoef(noise[0].ravel(), noise[1].ravel())[0, 1]) < 0.02


def test_jpeg_round_trip_changes_pixels_less_at_higher_quality():
  photo = _photo(8)
  for _ in range(3):  # no sharp colour edges, which chroma subsampling blurs at any quality
    photo = camera_pipeline._binomial_blur(photo)  # pylint: disable=protected-access
  image = np.round(photo * 255).astype(np.uint8)
  errors = [np.abs(camera_pipeline.jpeg_round_trip(image, quality).astype(int) - image).mean()
            for quality in (30, 95)]
  assert errors[1] < errors[0] / 2  # measured 3.7 and 9.2 levels


def test_camera_noise_is_correlated_between_neighbours_where_raw_noise_is_not():
  rng = np.random.default_rng(9)
  pairs = []
  for seed in range(3):
    settings = camera_pipeline.random_settings(np.random.default_rng(seed),
                                               shot_range=(0.002, 0.01))
    captures, _ = camera_pipeline.captures_of(_photo(seed, 128, 128), settings, 2, rng)
    pairs.append([capture / 255.0 for capture in captures])
  profile = noise_statistics.measure_pairs(pairs)
  # Bilinear demosaicing alone correlates neighbours by about a half.
  assert profile.correlation_x[0] > 0.3 and profile.correlation_y[0] > 0.3
  assert abs(profile.correlation_x[3]) < 0.05 and abs(profile.correlation_y[3]) < 0.05


@pytest.mark.parametrize('sigma', [1.0, 2.0])
def test_chroma_noise_reduction_keeps_the_luma_and_spreads_the_colour_noise(sigma):
  noise = np.random.default_rng(8).standard_normal((256, 256, 3))
  reduced = camera_pipeline.reduce_noise(noise, sigma)
  luma = np.array([0.299, 0.587, 0.114])  # Rec. 601
  np.testing.assert_allclose(reduced @ luma, noise @ luma, atol=1e-12)
  # With a luma noise reduction too, the colour differences are the same, and the luma
  # (white noise too) is correlated as the Gaussian of the luma's own sigma makes it.
  both = camera_pipeline.reduce_noise(noise, sigma, luma_sigma=0.7)
  np.testing.assert_allclose(both - (both @ luma)[..., np.newaxis],
                             reduced - (reduced @ luma)[..., np.newaxis], atol=1e-12)
  blurred_luma = (both @ luma)[8:-8, 8:-8]
  measured = np.corrcoef(blurred_luma[:, 1:].ravel(), blurred_luma[:, :-1].ravel())[0, 1]
  assert abs(measured - np.exp(-1 / (4 * 0.7 ** 2))) < 0.03, measured
  chroma = reduced - (reduced @ luma)[..., np.newaxis]
  # White noise through a Gaussian blur of standard deviation s: correlation
  # exp(-d^2 / (4 s^2)) at lag d (the blur's kernel convolved with itself).
  inner = chroma[8:-8, 8:-8]
  for lag in (1, 2):
    measured = np.mean([np.corrcoef(inner[:, lag:, c].ravel(), inner[:, :-lag, c].ravel())[0, 1]
                        for c in range(3)])
    assert abs(measured - np.exp(-lag ** 2 / (4 * sigma ** 2))) < 0.03, (lag, measured)


def test_noise_reduction_is_off_unless_asked_and_each_stage_changes_the_rendering():
  settings = camera_pipeline.random_settings(np.random.default_rng(9))
  assert settings.chroma_blur == settings.luma_blur == 0.0
  srgb = _photo(9, 64, 64)
  camera = camera_pipeline.unprocess(srgb, settings)
  plain = camera_pipeline.process(camera, settings)
  for stage in ('chroma_blur', 'luma_blur'):
    assert not np.allclose(
        camera_pipeline.process(camera, dataclasses.replace(settings, **{stage: 1.0})), plain)
  with pytest.raises(ValueError, match='a Gaussian blur of standard deviation -1.0'):
    camera_pipeline.process(camera, dataclasses.replace(settings, luma_blur=-1.0))


def test_optics_blur_softens_scene_and_reference_alike_and_leaves_the_noise_its_level():
  # A scene with detail at the pixel (random values), where a lens's blur shows.
  rng = np.random.default_rng(4)
  srgb = rng.uniform(0.2, 0.8, (64, 64, 3))
  settings = camera_pipeline.random_settings(np.random.default_rng(5), (0.002, 0.002))
  assert settings.optics_blur == 0.0
  soft = dataclasses.replace(settings, optics_blur=1.0)
  (sharp_capture,), sharp_reference = camera_pipeline.captures_of(
      srgb, settings, 1, np.random.default_rng(6))
  (soft_capture,), soft_reference = camera_pipeline.captures_of(
      srgb, soft, 1, np.random.default_rng(6))
  step = lambda image: np.mean(np.abs(np.diff(image.astype(np.float64), axis=1)))
  # A Gaussian of sigma 1 keeps about a fifth of white detail's neighbour differences.
  assert step(soft_reference) < 0.5 * step(sharp_reference)
  # Before the mosaic: a flat colour stays its colour (a blur of the mosaic would mix the
  # sites' colours and shift it).
  flat = np.full((32, 32, 3), [0.7, 0.4, 0.2])
  np.testing.assert_array_equal(camera_pipeline.captures_of(flat, soft, 1, rng)[1],
                                camera_pipeline.captures_of(flat, settings, 1, rng)[1])
  # The same raw noise draws: the noise about each reference has nearly the same level
  # (the blur moves signal between pixels, and the shot noise follows the signal).
  sharp_noise = np.std(sharp_capture.astype(np.float64) - sharp_reference)
  soft_noise = np.std(soft_capture.astype(np.float64) - soft_reference)
  assert abs(soft_noise / sharp_noise - 1.0) < 0.1, (soft_noise, sharp_noise)
