"""Recorruptions are drawn like the noise model says, and the pair they make has
input and target noises that share nothing: the property Recorrupted-to-
Recorrupted rests on. References are worked out by hand or measured with plain
numpy products, not with the code under test."""

import json

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n import noise_model
from n2n.methods import registry as methods_registry
from n2n.pipelines import recorrupted

LAG = noise_model.MAX_LAG


def _correlation(along_x, along_y):
  """[9, 9] correlation of noise correlated along x and along y only (their
  product off the axes: separable noise), 1 at the centre."""
  rows = np.concatenate([[1.0], along_y])
  columns = np.concatenate([[1.0], along_x])
  full_rows = np.concatenate([rows[:0:-1], rows])
  full_columns = np.concatenate([columns[:0:-1], columns])
  return np.outer(full_rows, full_columns)


# Channels correlated as R-G 0.6, R-B -0.6, G-B -0.36: _MIXING's rows have norm 1 and
# these dot products.
_CHANNELS = np.array([[1.0, 0.6, -0.6], [0.6, 1.0, -0.36], [-0.6, -0.36, 1.0]])
_MIXING = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.6, 0.0, 0.8]])
# Separable 3-tap smoothing along x and y: 2/3 at lag 1, 1/3 at lag 2 on each axis.
_MODEL = noise_model.NoiseModel(_correlation([2 / 3, 1 / 3, 0, 0], [2 / 3, 1 / 3, 0, 0]),
                                 _CHANNELS, np.array([0.2, 0.8]),
                                 np.array([[0.02, 0.03, 0.04], [0.01, 0.015, 0.02]]))


def _lag_correlation(noise, lag, axis):
  """Mean over channels of the correlation at `lag` along axis (1: y, 2: x) of
  [B, H, W, C] noise."""
  first = np.take(noise, range(noise.shape[axis] - lag), axis=axis)
  second = np.take(noise, range(lag, noise.shape[axis]), axis=axis)
  return np.mean(np.mean(first * second, axis=(0, 1, 2)) / np.mean(noise ** 2, axis=(0, 1, 2)))


def test_drawn_noise_has_the_models_correlation_channels_and_level():
  flat = np.full((8, 96, 96, 3), 0.2, np.float32)
  noise = recorrupted.draw(tf.constant(flat), _MODEL, tf.constant([3, 4], tf.int32)).numpy()
  for axis in (1, 2):
    measured = [_lag_correlation(noise, lag, axis) for lag in (1, 2, 3)]
    np.testing.assert_allclose(measured, [2 / 3, 1 / 3, 0], atol=0.03)
  channels = np.corrcoef(noise.reshape(-1, 3).T)
  np.testing.assert_allclose(channels, _CHANNELS, atol=0.03)
  np.testing.assert_allclose(noise.std(axis=(0, 1, 2)), [0.02, 0.03, 0.04], rtol=0.05)
  # Between the bins the level is interpolated; past them it is held.
  for signal, expected in ((0.5, [0.015, 0.0225, 0.03]), (0.95, [0.01, 0.015, 0.02])):
    noise = recorrupted.draw(tf.constant(np.full((4, 64, 64, 3), signal, np.float32)), _MODEL,
                             tf.constant([5, 6], tf.int32)).numpy()
    np.testing.assert_allclose(noise.std(axis=(0, 1, 2)), expected, rtol=0.06)


@pytest.mark.parametrize('alpha', [1.0, 0.5])
def test_the_pairs_noises_are_uncorrelated_when_the_model_is_the_noises_own(alpha):
  clean = np.full((8, 96, 96, 3), 0.2, np.float32)
  # The capture's own noise, made here as _MODEL describes it: white noise summed over 3
  # neighbours along y and along x (/3: unit variance), mixed by _MIXING, at the level
  # of signal 0.2.
  white = np.random.default_rng(12).standard_normal((8, 98, 98, 3))
  along_y = white[:, :-2] + white[:, 1:-1] + white[:, 2:]
  box = (along_y[:, :, :-2] + along_y[:, :, 1:-1] + along_y[:, :, 2:]) / 3.0
  own = (box @ _MIXING.T * _MODEL.sigma[0]).astype(np.float32)
  pair = recorrupted.recorrupted_pair(tf.constant(clean + own), _MODEL, alpha,
                                      tf.constant([9, 10], tf.int32))
  into, target = pair['input'].numpy() - clean, pair['target'].numpy() - clean
  # input noise own + alpha n, target noise own - n / alpha: their covariance is
  # cov(own) - cov(n) = 0 at every lag and between channels.
  for shift in (0, 1, 2):
    shifted = np.roll(target, shift, axis=2)
    cross = np.mean(into[..., np.newaxis] * shifted[..., np.newaxis, :], axis=(0, 1, 2))
    scale = np.sqrt(np.outer(np.mean(into ** 2, axis=(0, 1, 2)),
                             np.mean(target ** 2, axis=(0, 1, 2))))
    assert np.abs(cross / scale).max() < 0.03, (shift, cross / scale)
  # A model missing the correlation leaves input and target sharing it.
  white = noise_model.NoiseModel(_correlation([0, 0, 0, 0], [0, 0, 0, 0]), _CHANNELS,
                                  _MODEL.signal, _MODEL.sigma)
  pair = recorrupted.recorrupted_pair(tf.constant(clean + own), white, alpha,
                                      tf.constant([9, 10], tf.int32))
  into, target = pair['input'].numpy() - clean, pair['target'].numpy() - clean
  shifted = np.roll(target, 1, axis=2)
  cross = np.mean(into * shifted) / np.sqrt(np.mean(into ** 2) * np.mean(target ** 2))
  assert cross > 0.2


def test_a_model_survives_the_config_and_bad_text_names_the_flag():
  config = config_lib.train_config(method='recorrupted', noise='none',
                                   recorrupted_noise_model=_MODEL.to_json())
  again = methods_registry.get('recorrupted').noise_model(
      config_lib.read_train_config(json.loads(config.to_json())))
  for name in ('correlation', 'channel_correlation', 'signal', 'sigma'):
    np.testing.assert_allclose(getattr(again, name), getattr(_MODEL, name), atol=1e-6)
  for text in ('{"correlation": [1]}', 'not json'):
    with pytest.raises(ValueError, match='^--recorrupted_noise_model is not a noise model'):
      config_lib.train_config(method='recorrupted', noise='none', recorrupted_noise_model=text)
  # Synthetic noise needs a model given.
  with pytest.raises(ValueError, match='^--method=recorrupted draws its recorruptions like the '
                                       'noise of real captures.*--noise=gaussian give '
                                       '--recorrupted_noise_model$'):
    config_lib.train_config(method='recorrupted', noise='gaussian')


def test_channel_permutations_reorder_input_and_target_alike_after_the_recorruption():
  rng = np.random.default_rng(11)
  pair = {'input': tf.constant(rng.uniform(size=(64, 4, 4, 3)), tf.float32)}
  pair['target'] = pair['input'] + 1.0
  permuted = recorrupted.permuted_channels(pair, tf.constant([1, 2], tf.int32))
  into, target = permuted['input'].numpy(), permuted['target'].numpy()
  np.testing.assert_allclose(target - into, 1.0, atol=1e-6)
  source = pair['input'].numpy()
  orders = set()
  for example in range(64):
    # Each example's channels are its own, in some order.
    order = tuple(int(np.argmin([np.abs(source[example, ..., c] - into[example, ..., k]).max()
                                 for c in range(3)])) for k in range(3))
    assert sorted(order) == [0, 1, 2]
    np.testing.assert_array_equal(into[example], source[example][..., list(order)])
    orders.add(order)
  assert len(orders) == 6


def test_the_level_scale_draws_that_share_of_the_models_noise_in_the_pipelines_pairs():
  noisy = tf.constant(np.random.default_rng(3).uniform(0.1, 0.9, (2, 32, 32, 3)), tf.float32)
  seed = tf.constant([4, 5], tf.int32)
  drawn = {}
  for scale in (1.0, 0.85, 0.5):
    config = config_lib.train_config(method='recorrupted', noise='none',
                                     recorrupted_noise_model=_MODEL.to_json(),
                                     recorrupted_level_scale=scale,
                                     augment_channel_permutations=False)
    pair = recorrupted.PIPELINE.elements(noisy, seed, config)
    # alpha 1: input y + n, target y - n.
    drawn[scale] = (pair['input'] - noisy).numpy()
    np.testing.assert_allclose((noisy - pair['target']).numpy(), drawn[scale], atol=1e-6)
  for scale in (0.85, 0.5):
    np.testing.assert_allclose(drawn[scale], scale * drawn[1.0], atol=1e-6)
  assert np.std(drawn[1.0]) > 0.001
  # A model given with the scale left at 0 (chosen), or a config.json from before the
  # setting, draws at the model's own level.
  given = config_lib.train_config(method='recorrupted', noise='none',
                                  recorrupted_noise_model=_MODEL.to_json(),
                                  augment_channel_permutations=False)
  saved = json.loads(given.to_json())
  del saved['method']['recorrupted']['level_scale']
  for config in (given, config_lib.read_train_config(saved)):
    assert config.method.recorrupted.level_scale == 0
    pair = recorrupted.PIPELINE.elements(noisy, seed, config)
    np.testing.assert_allclose((pair['input'] - noisy).numpy(), drawn[1.0], atol=1e-6)


def test_the_held_out_loss_draws_at_the_runs_level_scale():
  # An identity "denoiser" scores (y + n) - (y - n) = 2n at alpha 1: a loss of 4 n^2,
  # so drawing n at half the level quarters it (the same seed, the same draw).
  noisy = np.random.default_rng(8).uniform(0.2, 0.8, (48, 48, 3)).astype(np.float32)
  losses = {}
  for scale in (1.0, 0.5):
    config = config_lib.train_config(method='recorrupted', noise='none',
                                     recorrupted_noise_model=_MODEL.to_json(),
                                     recorrupted_level_scale=scale)
    losses[scale] = recorrupted.PIPELINE.held_out_view_loss(
        lambda image: image, noisy, tf.constant([1, 2], tf.int32), config)
  assert losses[0.5] == pytest.approx(0.25 * losses[1.0], rel=1e-4)
  assert losses[1.0] > 0
