"""sCMOS-like frames: seeded, centred on the expected counts, and correlated
along rows as much as the row offsets make them."""

import numpy as np
import pytest

from n2n.data import microscope_noise
from n2n.data import native_images
from n2n.data import scenes
from n2n.data import simulated_scenes
from n2n.diagnosis import noise_statistics


def test_frames_are_seeded_and_average_to_the_reference():
  clean = np.tile(np.linspace(0.1, 0.9, 64), (48, 1))
  settings = microscope_noise.ScmosSettings(photons=100, read_sigma=2, row_sigma=3)
  first = microscope_noise.capture(clean, settings, np.random.default_rng(0))
  assert np.array_equal(first, microscope_noise.capture(clean, settings,
                                                        np.random.default_rng(0)))
  rng = np.random.default_rng(1)
  mean = np.mean([microscope_noise.capture(clean, settings, rng) for _ in range(400)], axis=0)
  reference = microscope_noise.reference(clean, settings).astype(float)
  assert first.dtype == np.uint16 and np.abs(mean - reference).max() < 2.0


def test_row_offsets_correlate_a_row_at_every_distance_and_nothing_down_a_column():
  settings = microscope_noise.ScmosSettings(photons=100, read_sigma=2, row_sigma=4)
  clean = np.full((256, 256), 0.5)
  rng = np.random.default_rng(2)
  pairs = [[microscope_noise.capture(clean, settings, rng)[..., None] / 65535.0
            for _ in range(2)] for _ in range(4)]
  profile = noise_statistics.measure_pairs(pairs)
  expected = microscope_noise.expected_correlation_along_rows(settings, 0.5)
  assert expected == 16 / (50 + 4 + 16)
  np.testing.assert_allclose(profile.correlation_x, expected, atol=0.03)
  np.testing.assert_allclose(profile.correlation_y, 0.0, atol=0.03)


def test_microscope_scenes_are_16_bit_grayscale_and_the_camera_refuses_grayscale(tmp_path):
  source = tmp_path / 'clean'
  source.mkdir()
  photo = (np.random.default_rng(3).uniform(0, 255, (40, 56, 3))).astype(np.uint8)
  (source / 'photo.png').write_bytes(native_images.encode_pages([photo], 'png'))
  simulated_scenes.write_scenes(str(source), str(tmp_path / 'scenes'), captures=2,
                                pipeline='microscope')
  arrays = scenes.read_scene(scenes.find_scenes(str(tmp_path / 'scenes'))[0])
  assert arrays.captures.shape == (2, 40, 56, 1) and arrays.dtype == 'uint16'
  assert arrays.reference.min() >= 100  # the baseline offset
  with pytest.raises(ValueError, match='the camera pipeline makes RGB photographs'):
    simulated_scenes.write_scenes(str(source), str(tmp_path / 'camera'), pipeline='camera',
                                  grayscale=True)
