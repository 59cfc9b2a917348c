"""Pure, seeded image corruptions, usable inside tf.data.map with parallel calls.

Every function takes an explicit stateless seed ([2] int32 tensor), so the same
(image, level, seed) always gives the same result and no random state lives in
the graph. Images are float32 in [0, 1]; corrupted images are NOT clipped, since
clipping biases the noise and Noise2Noise needs zero-mean (for L2) corruption.

Levels are given in the units users think in:
  gaussian   standard deviation in 0-255 units (sigma 25 means 25/255)
  poisson    lambda, photons per unit intensity (larger lambda = less noise)
  text       fraction of pixels covered by text
  impulse    fraction of pixels replaced by random colours
  bernoulli  fraction of pixels dropped (set to zero)
"""

import dataclasses

import tensorflow as tf

from n2n import text_render

# Lambda is guarded away from zero: Poisson(lambda * x) / lambda diverges as lambda -> 0.
MIN_POISSON_LAMBDA = 1e-3


def add_gaussian_noise(image, std, seed):
  """Adds zero-mean Gaussian noise of one standard deviation to the whole image.

  Args:
    image: [..., H, W, C] float32 in [0, 1].
    std: scalar float32, standard deviation in [0, 1] intensity units.
    seed: [2] int32 stateless seed.

  Returns:
    Same shape float32, image + std * N(0, 1), not clipped.
  """
  normal = tf.random.stateless_normal(tf.shape(image), seed=seed, dtype=tf.float32)
  return image + tf.cast(std, tf.float32) * normal


def add_poisson_noise(image, photons_per_unit, seed):
  """Applies Poisson (shot) noise: noisy = Poisson(lambda * x) / lambda.

  The convention is the paper's: x in [0, 1] is scaled to an expected photon
  count lambda * x, a count is drawn per pixel and channel, and divided back by
  lambda, so E[noisy] = x and Var[noisy] = x / lambda.

  Args:
    image: [..., H, W, C] float32 in [0, 1].
    photons_per_unit: scalar float32 lambda > 0 (clamped to at least 1e-3).
    seed: [2] int32 stateless seed.

  Returns:
    Same shape float32 >= 0, not clipped above.
  """
  lam = tf.maximum(tf.cast(photons_per_unit, tf.float32), MIN_POISSON_LAMBDA)
  counts = tf.random.stateless_poisson(
      tf.shape(image), seed=seed, lam=tf.maximum(image, 0.0) * lam, dtype=tf.float32)
  return counts / lam


def add_impulse_noise(image, probability, seed):
  """Random-valued impulse noise: each pixel replaced, with the given
  probability, by a colour drawn uniformly from [0, 1]^C.

  Args:
    image: [H, W, C] float32 in [0, 1].
    probability: scalar float32 in [0, 1].
    seed: [2] int32 stateless seed.

  Returns:
    [H, W, C] float32 in [0, 1].
  """
  mask_seed, colour_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
  shape = tf.shape(image)
  replaced = tf.random.stateless_uniform(
      tf.concat([shape[:-1], [1]], 0), mask_seed) < tf.cast(probability, tf.float32)
  colours = tf.random.stateless_uniform(shape, colour_seed)
  return tf.where(replaced, colours, image)


def add_bernoulli_noise(image, probability, seed):
  """Drops each pixel (all its channels) to zero with the given probability.

  Args:
    image: [H, W, C] float32 in [0, 1].
    probability: scalar float32 in [0, 1], the fraction dropped.
    seed: [2] int32 stateless seed.

  Returns:
    (noisy [H, W, C] float32, kept [H, W, 1] float32 in {0, 1}). The mask lets
    a masked loss ignore dropped target pixels.
  """
  shape = tf.shape(image)
  kept = tf.cast(tf.random.stateless_uniform(tf.concat([shape[:-1], [1]], 0), seed)
                 >= tf.cast(probability, tf.float32), tf.float32)
  return image * kept, kept


def _gaussian(image, level, seed):
  return add_gaussian_noise(image, tf.cast(level, tf.float32) / 255.0, seed), None


def _poisson(image, level, seed):
  return add_poisson_noise(image, level, seed), None


def _text(image, level, seed):
  return text_render.make_text_overlay()(image, level, seed), None


def _impulse(image, level, seed):
  return add_impulse_noise(image, level, seed), None


@dataclasses.dataclass(frozen=True)
class Corruption:
  """How one corruption is applied, parameterised and scored.

  Attributes:
    name: the --noise value.
    apply: fn(image [H, W, C] float32 in [0, 1], level scalar, seed [2]) ->
      (noisy [H, W, C] float32, kept-pixel mask [H, W, 1] float32 or None).
    level_name: what a level means, for messages and summaries.
    bounds: (lowest, highest) valid level.
    default_range: default --noise_range for training.
    default_eval_levels: default --eval_noise_levels.
    default_loss: the paper's loss for this corruption.
    drops_pixels: the corruption returns a kept-pixel mask for a masked loss.
  """
  name: str
  apply: object
  level_name: str
  bounds: tuple
  default_range: tuple
  default_eval_levels: tuple
  default_loss: str
  drops_pixels: bool = False


CORRUPTIONS = {
    'gaussian': Corruption('gaussian', _gaussian, 'sigma (0-255 units)', (0.0, 255.0),
                           (0.0, 50.0), (25.0,), 'l2'),
    'poisson': Corruption('poisson', _poisson, 'lambda (photons per unit intensity)',
                          (0.0, 1e6), (0.0, 50.0), (30.0,), 'l2'),
    'text': Corruption('text', _text, 'fraction of pixels covered by text', (0.0, 0.9),
                       (0.0, 0.5), (0.25,), 'l1'),
    'impulse': Corruption('impulse', _impulse, 'fraction of pixels replaced', (0.0, 1.0),
                          (0.0, 0.95), (0.5, 0.7), 'annealed_l0'),
    'bernoulli': Corruption('bernoulli', add_bernoulli_noise, 'fraction of pixels dropped',
                            (0.0, 1.0), (0.0, 0.95), (0.5,), 'masked_l2', drops_pixels=True),
}


def get_corruption(name):
  """Returns the Corruption called name; ValueError naming the choices otherwise."""
  if name not in CORRUPTIONS:
    raise ValueError(f'unknown corruption {name!r}; choose one of {", ".join(sorted(CORRUPTIONS))}')
  return CORRUPTIONS[name]


def sample_level(level_range, seed):
  """Draws one level uniformly from level_range = (low, high); scalar float32."""
  low, high = level_range
  return tf.random.stateless_uniform([], seed=seed, minval=low, maxval=high, dtype=tf.float32)


def corrupt(image, noise, level, seed):
  """Corrupts image with the named corruption at the given level (user units).

  Args:
    image: [H, W, C] float32 in [0, 1].
    noise: corruption name, e.g. 'gaussian'.
    level: scalar, see the module docstring for units.
    seed: [2] int32 stateless seed.

  Returns:
    [H, W, C] float32, not clipped.
  """
  return get_corruption(noise).apply(image, level, seed)[0]


def corrupt_with_mask(image, noise, level, seed):
  """Like corrupt, also returning which pixels still carry the clean signal.

  Returns:
    (noisy [H, W, C] float32, mask [H, W, 1] float32 in {0, 1}); the mask is
    all ones except for corruptions that drop pixels (bernoulli).
  """
  noisy, mask = get_corruption(noise).apply(image, level, seed)
  if mask is None:
    mask = tf.ones_like(image[..., :1])
  return noisy, mask




def evaluation_seed(seed, image_index, level):
  """The fixed noise seed for one evaluation image at one level.

  A pure function of (seed, image_index, level), so one checkpoint always gets
  the same PSNR on the same data. Returns a [2] int32 tensor.
  """
  level_key = tf.cast(tf.round(tf.cast(level, tf.float64) * 1000.0), tf.int64)
  base = tf.constant([seed, 0x5EED], tf.int64)
  mixed = tf.random.experimental.stateless_fold_in(base, tf.cast(image_index, tf.int64))
  mixed = tf.random.experimental.stateless_fold_in(mixed, level_key)
  return tf.cast(mixed, tf.int32)
