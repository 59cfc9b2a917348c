"""bench/recipes/fluorescence.py, what the shipped microscopy model trains on: fields in
[0, 1], two acquisitions whose noise is independent and whose mean is the field's counts,
and each file kind's pixel values."""

import dataclasses

import numpy as np

from bench.recipes import fluorescence


def test_a_field_is_in_the_unit_range_with_its_brightest_pixel_one():
  for seed in range(4):
    field = fluorescence.clean_field(np.random.default_rng(seed), 128)
    assert field.shape == (128, 128) and field.min() >= 0.0 and field.max() == 1.0


def test_two_acquisitions_have_independent_noise_around_the_expected_counts():
  rng = np.random.default_rng(0)
  field = fluorescence.clean_field(rng, 256)
  camera = fluorescence.Camera(peak_photons=50.0, background_photons=2.0, read_noise=2.0,
                               gain=2.0, offset=100.0, file_kind='uint16')
  first, second = (value.astype(np.float64) for value in fluorescence.acquisitions(
      field, camera, rng))
  expected = 100.0 + 2.0 * (2.0 + 50.0 * field)
  noise_first, noise_second = first - expected, second - expected
  # Poisson-Gaussian variance in counts: gain^2 (photons + read^2), plus rounding (1/12).
  variance = 4.0 * (2.0 + 50.0 * field + 4.0) + 1 / 12
  assert abs(np.mean(noise_first ** 2 / variance) - 1.0) < 0.03
  assert abs(np.corrcoef(noise_first.ravel(), noise_second.ravel())[0, 1]) < 0.02


def test_each_file_kind_keeps_its_pixel_values():
  rng = np.random.default_rng(1)
  field = fluorescence.clean_field(rng, 128)
  bright = fluorescence.Camera(400.0, 10.0, 2.0, 4.0, 500.0, 'uint12')
  twelve = fluorescence.acquisitions(field, bright, rng)
  assert all(value.dtype == np.uint16 and value.max() <= 4095 for value in twelve)
  stretched = fluorescence.acquisitions(field, dataclasses.replace(
      bright, file_kind='stretched_uint8'), rng)
  for value in stretched:
    assert np.all(value % 257 == 0) and value.max() == 255 * 257 and value.min() == 0
