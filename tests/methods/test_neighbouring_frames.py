"""--method=neighbouring_frames: a movie's even frames against its odd ones, and a short
run that learns to denoise a drifting phantom movie from one noisy acquisition."""

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes import volumes as volume_helpers
from n2n.data import volume_pipeline
from n2n.training import preflight


def test_each_input_frame_is_paired_with_the_next_frame(tmp_path):
  # Every pixel of frame t holds 100 + t: target minus input is one frame, everywhere,
  # whatever flips and turns the crop took (a z flip reverses both in step).
  movie = (100 + np.arange(40, dtype=np.uint16)[:, None, None]
           + np.zeros((1, 48, 48), np.uint16))
  records = volume_helpers.movie_dataset(tmp_path, [movie])
  config = preflight.check_training_inputs(
      volume_helpers.train_config(records, method='neighbouring_frames', crop_depth=8,
                                  crops_per_image=3),
      tf.distribute.get_strategy()).config
  batch = next(iter(volume_pipeline.build_frames_dataset(config, 2, cache=False)))
  assert batch['input'].shape == (2, 8, 32, 32, 1)
  difference = (batch['target'] - batch['input']).numpy() * 600.0
  np.testing.assert_allclose(difference, 1.0, atol=1e-3)
  # Consecutive input planes are two frames apart.
  steps = np.diff(batch['input'].numpy()[..., 0, 0, 0] * 600.0, axis=1)
  assert set(np.round(np.abs(steps)).ravel()) == {2.0}


def test_neighbouring_frames_needs_a_movie_twice_as_deep_as_the_crop(tmp_path):
  records = volume_helpers.movie_dataset(tmp_path, [np.zeros((24, 48, 48), np.uint16)])
  with pytest.raises(ValueError, match=r'--crop_depth=16 \(2 frames per plane: 32\) is deeper'):
    preflight.check_training_inputs(
        volume_helpers.train_config(records, method='neighbouring_frames', crop_depth=16),
        tf.distribute.get_strategy())


@pytest.mark.slow
def test_60_steps_of_neighbouring_frames_denoise_a_slowly_drifting_movie(tmp_path):
  movies = volume_helpers.drifting_movies()
  records = volume_helpers.movie_dataset(tmp_path, [noisy for noisy, _ in movies])
  model_dir = volume_helpers.train_run(records, tmp_path / 'run', 60,
                                       method='neighbouring_frames', crop_depth=8)
  gains = volume_helpers.denoise_py_gains(model_dir, movies)
  # python -m bench.volume_learning_spread (docs/bench/volume_learning_spread.json, AMD
  # AVX512-BF16 host, float32), seeds 1-4: the least gain of the two movies 3.58-4.52 dB;
  # at the tests' width 24 (docs/bench/volume_learning_spread_width24.json, AMD AVX2
  # host), seeds 1-3: 2.90-6.04 dB.
  # Denoised in one tile of all 48 frames instead, runs of 150 steps gained -5.59 to +0.02
  # dB (seeds 1-3, docs/bench/volume_tile_depth.json): why denoise.py tiles as trained.
  assert min(gains) > 1.5, gains
