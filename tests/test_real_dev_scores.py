"""bench/real_dev.py's scores: plain PSNR on a 0-255 scale, and PSNR after the per-image
affine fit that w2s80's contrast-stretched images need. References worked out by hand."""

import numpy as np
import pytest

from bench import real_dev


def test_psnr_of_an_error_of_one_everywhere_is_twenty_log_255():
  reference = np.arange(64, dtype=np.uint8).reshape(8, 8)
  assert real_dev.psnr(reference + 1, reference) == pytest.approx(20 * np.log10(255.0))


def test_affine_fit_takes_out_a_contrast_stretch_exactly():
  reference = np.random.default_rng(0).integers(0, 200, (16, 16)).astype(np.float64)
  stretched = 0.5 * reference + 20.0  # another contrast and offset of the same image
  np.testing.assert_allclose(real_dev.affine_fit(stretched, reference), reference, atol=1e-9)


def test_affine_fit_of_noise_left_scores_the_least_squares_residual():
  # output = reference + e, e of mean 0 and uncorrelated with the reference. Regressing
  # the reference on the output gives a = var(r) / (var(r) + var(e)) = 125 / 126 and a
  # residual power of var(r) var(e) / (var(r) + var(e)) = 125 / 126 (not 1: the fit
  # shrinks the noise a little).
  reference = np.array([[0.0, 10.0], [20.0, 30.0]])  # variance 125
  error = np.array([[1.0, -1.0], [-1.0, 1.0]])  # mean 0, variance 1, uncorrelated with it
  sidd, w2s = real_dev.SETS['sidd24'], real_dev.SETS['w2s80']
  assert real_dev.score(w2s, reference + error, reference) == pytest.approx(
      10 * np.log10(255.0 ** 2 / (125 / 126)))
  # Without the fit a doubled contrast is an error; with it, none.
  assert real_dev.score(sidd, 2 * reference, reference) < 30
  assert real_dev.score(w2s, 2 * reference, reference) > 100


def test_the_detail_crop_is_where_the_reference_varies():
  reference = np.zeros((real_dev.CROP * 2, real_dev.CROP * 2), np.uint8)
  corner = real_dev.CROP + real_dev.CROP // 4
  reference[corner:, corner:] = np.indices((reference.shape[0] - corner,) * 2).sum(0) % 2 * 255
  y, x = real_dev.detail_corner(reference)
  assert y >= corner - real_dev.CROP // 4 and x >= corner - real_dev.CROP // 4
