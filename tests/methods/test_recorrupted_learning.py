"""Recorrupted-to-Recorrupted learns what plain Neighbor2Neighbor cannot: on noise
correlated between neighbouring pixels, given that noise's own model, it gains more
than Neighbor2Neighbor without a scheme, by a bound set from the spread of repeated
runs."""

import pytest

from bench.recipes import correlated

# The pixel-shuffle test's run (bench/recipes/correlated.py: crop 128, batch 4, float32,
# 4 images of 192 x 192, width 24, 450 steps). Plain Neighbor2Neighbor gained 0.81-0.90 dB
# there over seeds 1-4 (docs/bench/learning_test_spread_pixel_shuffle_w24_450.json).
PLAIN_NEIGHBOR2NEIGHBOR_BEST_DB = 0.90
# Recorrupted-to-Recorrupted given correlated_noise_model(), seeds 1-4: 1.23-1.40 dB
# (python -m bench.learning_test_spread --tests=recorrupted --seeds=1,2,3,4,
# docs/bench/learning_test_spread_recorrupted_w24_450.json at b587b91, AMD AVX512-BF16).
RECORRUPTED_LEAST_DB = 1.228
# Half-way between the two: the test fails where recorruptions gain no more than
# half their measured lead over the plain method.
BOUND_DB = PLAIN_NEIGHBOR2NEIGHBOR_BEST_DB + 0.5 * (RECORRUPTED_LEAST_DB
                                                   - PLAIN_NEIGHBOR2NEIGHBOR_BEST_DB)


@pytest.mark.slow
def test_recorruptions_gain_more_than_plain_neighbor2neighbor_on_correlated_noise(tmp_path):
  correlated.write_pixel_shuffle_data(tmp_path)
  gain = correlated.recorrupted_gain(tmp_path, 1)
  assert gain > BOUND_DB, gain
