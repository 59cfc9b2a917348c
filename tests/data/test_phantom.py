"""The phantom volumes and movies: anisotropic blur, independent noise of the stated size."""

import numpy as np

from n2n.data import gaussian_blur
from n2n.data import phantom

SMALL = phantom.PhantomSpec(shape=(16, 64, 64), nuclei=4, filaments=4)


def test_a_scene_is_reproducible_and_its_acquisitions_are_independent():
  captures, reference = phantom.phantom_scene(SMALL, seed=3)
  again, _ = phantom.phantom_scene(SMALL, seed=3)
  assert captures.shape == (2,) + SMALL.shape and captures.dtype == np.uint16
  assert reference.shape == SMALL.shape and reference.dtype == np.uint16
  np.testing.assert_array_equal(captures, again)
  noise = captures.astype(np.float64) - reference
  # Independent draws: the two acquisitions' noise is uncorrelated.
  assert abs(np.corrcoef(noise[0].ravel(), noise[1].ravel())[0, 1]) < 0.02
  # Poisson-Gaussian: variance (counts^2) = gain * (signal counts - offset) + (gain * read)^2,
  # checked on the background and on the brightest voxels (a tenth of a percent).
  expected = lambda signal: (SMALL.counts_per_photon * (signal - SMALL.camera_offset)
                             + (SMALL.counts_per_photon * SMALL.read_noise) ** 2)
  for selected in (reference <= np.quantile(reference, 0.3),
                   reference >= np.quantile(reference, 0.999)):
    measured = noise[:, selected].var()
    predicted = expected(reference[selected].astype(np.float64)).mean()
    assert abs(measured / predicted - 1) < 0.1, (measured, predicted)


def test_the_point_spread_function_is_longer_in_z_than_in_xy():
  impulse = np.zeros((33, 65, 65))
  impulse[16, 32, 32] = 1.0
  spec = SMALL
  sigma_z = spec.psf_sigma_xy * spec.psf_axial_ratio / spec.z_spacing
  blurred = gaussian_blur.blur(impulse, (sigma_z, spec.psf_sigma_xy, spec.psf_sigma_xy))
  assert abs(blurred.sum() - 1.0) < 1e-9
  # Second moments, in voxels, against the sigmas asked for (sampled taps: 2%).
  offsets = np.arange(-16, 17), np.arange(-32, 33)
  variance_z = (blurred.sum(axis=(1, 2)) * offsets[0] ** 2).sum()
  variance_x = (blurred.sum(axis=(0, 1)) * offsets[1] ** 2).sum()
  assert abs(np.sqrt(variance_z) / sigma_z - 1) < 0.02
  assert abs(np.sqrt(variance_x) / spec.psf_sigma_xy - 1) < 0.02
  # In physical units the axial width is psf_axial_ratio times the lateral one.
  assert abs(np.sqrt(variance_z) * spec.z_spacing / np.sqrt(variance_x)
             - spec.psf_axial_ratio) < 0.1


def test_the_movie_moves_its_objects_and_keeps_their_brightness():
  noisy, reference = phantom.phantom_movie(SMALL, seed=1, frames=4,
                                           drift_per_frame=(0.0, 1.0, 0.0))
  assert noisy.shape == reference.shape == (4, 64, 64)
  signal = reference.astype(np.float64) - SMALL.camera_offset
  # One pixel down y per frame: frame k is frame 0 moved k rows, texture and
  # all (filaments' voxels round alike). Rows within the blur's reach of the
  # top and bottom edges are left out: the blur reflects there.
  for frame in range(1, 4):
    moved, first = signal[frame, 8 + frame:56], signal[0, 8:56 - frame]
    assert np.abs(moved - first).max() <= 0.02 * signal.max(), frame
  assert not np.array_equal(noisy[0], noisy[1])  # fresh noise every frame
