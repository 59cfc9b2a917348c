"""Recorrupted-to-Recorrupted's tensors (n2n/methods/recorrupted.py): noise drawn
like the run's noise model (n2n/noise_model.py) and the pair it makes."""

import itertools

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n import noise_model
from n2n.data import gaussian_blur
from n2n.diagnosis import noise_statistics
from n2n.methods import recorrupted
from n2n.pipelines import single_image


def _blurred(images, sigma):
  """[B, H, W, C] float32 images blurred by a Gaussian of sigma pixels, edges reflected."""
  taps = gaussian_blur.gaussian_taps(sigma).astype(np.float32)
  radius = len(taps) // 2
  channels = images.shape[-1]
  padded = tf.pad(images, [[0, 0], [radius, radius], [radius, radius], [0, 0]], mode='REFLECT')
  across = tf.tile(tf.constant(taps)[np.newaxis, :, np.newaxis, np.newaxis], [1, 1, channels, 1])
  down = tf.tile(tf.constant(taps)[:, np.newaxis, np.newaxis, np.newaxis], [1, 1, channels, 1])
  blurred = tf.nn.depthwise_conv2d(padded, across, [1, 1, 1, 1], 'VALID')
  return tf.nn.depthwise_conv2d(blurred, down, [1, 1, 1, 1], 'VALID')


def _level(signal_images, model):
  """[B, H, W, C] float32: the model's sigma per channel at each pixel's signal,
  interpolated linearly between its bins and held beyond them."""
  signal = tf.constant(model.signal, tf.float32)
  sigma = tf.constant(model.sigma, tf.float32)  # [bins, C]
  if len(model.signal) == 1:
    return tf.ones_like(signal_images) * sigma[0]
  bins = len(model.signal)
  above = tf.clip_by_value(tf.searchsorted(signal, tf.reshape(signal_images, [-1]), side='right'),
                           1, bins - 1)
  flat = tf.reshape(signal_images, [-1, signal_images.shape[-1]])
  above = tf.reshape(above, tf.shape(flat))
  low_signal, high_signal = tf.gather(signal, above - 1), tf.gather(signal, above)
  share = tf.clip_by_value((flat - low_signal) / (high_signal - low_signal), 0.0, 1.0)
  channel = tf.broadcast_to(tf.range(flat.shape[-1]), tf.shape(flat))
  low = tf.gather_nd(sigma, tf.stack([above - 1, channel], axis=-1))
  high = tf.gather_nd(sigma, tf.stack([above, channel], axis=-1))
  return tf.reshape(low + share * (high - low), tf.shape(signal_images))


def draw(noisy, model, seed):
  """Noise like the model's for [B, H, W, C] float32 images (0-1 scale): [B, H, W, C]
  float32 (n2n/noise_model.py's docstring says how); seed: [2] int32 stateless seed."""
  radius = noise_model.KERNEL_RADIUS
  channels = noisy.shape[-1]
  shape = tf.shape(noisy) + tf.constant([0, 2 * radius, 2 * radius, 0])
  white = tf.random.stateless_normal(shape, seed)
  kernel = tf.tile(tf.constant(noise_model.kernel(model.correlation))[:, :, None, None],
                   [1, 1, channels, 1])
  spatial = tf.nn.depthwise_conv2d(white, kernel, [1, 1, 1, 1], 'VALID')
  mixed = tf.einsum('bhwc,dc->bhwd', spatial,
                    tf.constant(noise_model.mixing(model.channel_correlation)))
  return mixed * _level(_blurred(noisy, noise_model.SIGNAL_BLUR), model)


def recorrupted_pair(noisy, model, alpha, seed):
  """{'input': y + alpha * n, 'target': y - n / alpha} of [B, H, W, C] float32 noisy
  crops y, n drawn like the model's noise."""
  drawn = draw(noisy, model, seed)
  return {'input': noisy + alpha * drawn, 'target': noisy - drawn / alpha}


# Folded into a batch's seed for its channel permutations (the recorruption uses it as is).
_PERMUTATION_KEY = 1


def permuted_channels(images, seed):
  """{name: [B, H, W, 3]} with each example's channels put in one of the 6 orders at
  random, the same order for every name; seed: [2] int32 stateless seed."""
  orders = tf.constant(list(itertools.permutations(range(3))), tf.int32)
  first = next(iter(images.values()))
  choice = tf.random.stateless_uniform([tf.shape(first)[0]], seed, 0, 6, dtype=tf.int32)
  order = tf.gather(orders, choice)  # [B, 3]
  return {name: tf.gather(image, order, axis=3, batch_dims=1) for name, image in images.items()}


class RecorruptedPipeline(single_image.SingleImagePipeline):
  method = recorrupted.METHOD

  def crops_config(self, config):
    # The noise model is per channel (its levels, the channels' correlation): crops are
    # recorrupted in their own channel order, and --augment_channel_permutations then
    # reorders input and target together (elements).
    return config_lib.replace_settings(config, augment_channel_permutations=False)

  def elements(self, noisy, seed, config):
    pair = recorrupted_pair(noisy, self.method.recorruption_model(config),
                            self.method.settings(config).alpha, seed)
    if config.data.augment.channel_permutations and noisy.shape[-1] == 3:
      pair = permuted_channels(pair, tf.random.experimental.stateless_fold_in(
          seed, _PERMUTATION_KEY))
    return pair

  def held_out_view_loss(self, denoise, noisy, seed, config=None):
    """Mean squared error of the denoised input y + alpha * n against the target
    y - n / alpha, n drawn as the run draws it (at its level scale). Where n's
    covariance is the noise's own (scale 1, an exact model) its expected value is
    the network's error on the noisier input plus the target's noise variance; at
    another scale input and target share a part of the noise, so losses are
    comparable between runs of one scale only. Without a config (or a noise model)
    the model is the single-image estimate of this image's noise, at the scale a
    model estimated at start is drawn at."""
    settings = self.method.settings(config) if config else recorrupted.Settings()
    if config is not None and settings.noise_model:
      model = self.method.recorruption_model(config)
    else:
      profile = noise_statistics.estimate_single([noisy])
      if profile.samples < noise_model.MIN_SAMPLES:
        raise ValueError(f'the held-out image\'s noise was read from {profile.samples} pixels of '
                         f'flat patches, fewer than {noise_model.MIN_SAMPLES}: give the run '
                         'a --recorrupted_noise_model')
      model = recorrupted.scaled(noise_model.model_of_profile(profile),
                                 recorrupted.level_scale(settings, profile.source))
    pair = recorrupted_pair(tf.constant(noisy[np.newaxis], tf.float32), model, settings.alpha,
                            seed)
    return float(np.mean(np.square(denoise(pair['input'][0].numpy())
                                   - pair['target'][0].numpy())))

PIPELINE = RecorruptedPipeline()
