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

import numpy as np
import tensorflow as tf

from n2n.corruptions import catalog
from n2n.corruptions import poisson
from n2n.corruptions import text_render

# Lambda is guarded away from zero: Poisson(lambda * x) / lambda diverges as lambda -> 0.
MIN_POISSON_LAMBDA = 1e-3


def per_image(level, images):
  """Shapes a level to broadcast against images: scalar stays scalar, [B] -> [B, 1, 1, 1]."""
  level = tf.cast(level, tf.float32)
  if level.shape.rank == 1:
    level = tf.reshape(level, [-1] + [1] * (images.shape.rank - 1))
  return level


def standard_normal(shape, seed):
  """Standard normal samples from stateless uniforms by the Box-Muller transform.

  Exact in distribution up to float32 resolution (|z| <= 5.77), and about
  twice as fast on a CPU as tf.random.stateless_normal, which matters because
  the input pipeline shares the cores with the training step.

  Args:
    shape: 1-D int32 tensor or list.
    seed: [2] int32 stateless seed.

  Returns:
    float32 tensor of the given shape, N(0, 1).
  """
  shape = tf.cast(shape, tf.int32)
  count = tf.reduce_prod(shape)
  uniform = tf.random.stateless_uniform(tf.stack([2, (count + 1) // 2]), seed)
  # log1p(-u) with u in [0, 1) is finite: no -inf radius.
  radius = tf.sqrt(-2.0 * tf.math.log1p(-uniform[0]))
  angle = (2.0 * np.pi) * uniform[1]
  normal = tf.concat([radius * tf.cos(angle), radius * tf.sin(angle)], 0)
  return tf.reshape(normal[:count], shape)


def add_gaussian_noise(images, std, seed):
  """Adds zero-mean Gaussian noise of one standard deviation per image.

  Args:
    images: [H, W, C] or [B, H, W, C] float32 in [0, 1].
    std: scalar, or [B] for a batch, float32 in [0, 1] intensity units.
    seed: [2] int32 stateless seed.

  Returns:
    Same shape float32, images + std * N(0, 1), not clipped.
  """
  return images + per_image(std, images) * standard_normal(tf.shape(images), seed)


def add_poisson_noise(images, photons_per_unit, seed):
  """Applies Poisson (shot) noise: noisy = Poisson(lambda * x) / lambda.

  The convention is the paper's: x in [0, 1] is scaled to an expected photon
  count lambda * x, a count is drawn per pixel and channel, and divided back by
  lambda, so E[noisy] = x and Var[noisy] = x / lambda.

  Args:
    images: [H, W, C] or [B, H, W, C] float32 in [0, 1].
    photons_per_unit: lambda > 0 (clamped to at least 1e-3), scalar or [B].
    seed: [2] int32 stateless seed.

  Returns:
    Same shape float32 >= 0, not clipped above.
  """
  if images.shape.rank == 3:
    return add_poisson_noise(images[tf.newaxis], photons_per_unit, seed)[0]
  lam = tf.maximum(tf.cast(photons_per_unit, tf.float32), MIN_POISSON_LAMBDA)
  lam = tf.broadcast_to(tf.reshape(lam, [-1]), tf.shape(images)[:1])
  counts = poisson.sample_poisson(images, lam, seed)
  return counts / per_image(lam, images)


def add_impulse_noise(images, probability, seed):
  """Random-valued impulse noise: each pixel replaced, with the given
  probability, by a colour drawn uniformly from [0, 1]^C.

  Args:
    images: [H, W, C] or [B, H, W, C] float32 in [0, 1].
    probability: float32 in [0, 1], scalar or [B].
    seed: [2] int32 stateless seed.

  Returns:
    Same shape float32 in [0, 1].
  """
  mask_seed, colour_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
  shape = tf.shape(images)
  channels = images.shape[-1]
  replaced = (tf.random.stateless_uniform(tf.concat([shape[:-1], [1]], 0), mask_seed)
              < per_image(probability, images))
  colours = tf.random.stateless_uniform(shape, colour_seed)
  # Select on whole pixel rows: twice as fast as a broadcasting tf.where.
  noisy = tf.compat.v1.where(tf.reshape(replaced, [-1]), tf.reshape(colours, [-1, channels]),
                             tf.reshape(images, [-1, channels]))
  return tf.reshape(noisy, shape)


def add_bernoulli_noise(images, probability, seed):
  """Drops each pixel (all its channels) to zero with the given probability.

  Args:
    images: [H, W, C] or [B, H, W, C] float32 in [0, 1].
    probability: float32 in [0, 1], the fraction dropped, scalar or [B].
    seed: [2] int32 stateless seed.

  Returns:
    (noisy, same shape float32; kept, [..., H, W, 1] float32 in {0, 1}). The
    mask lets a masked loss ignore dropped target pixels.
  """
  shape = tf.shape(images)
  kept = tf.cast(tf.random.stateless_uniform(tf.concat([shape[:-1], [1]], 0), seed)
                 >= per_image(probability, images), tf.float32)
  return images * kept, kept


def _gaussian(images, levels, seed):
  return add_gaussian_noise(images, tf.cast(levels, tf.float32) / 255.0, seed), None


def _poisson(images, levels, seed):
  return add_poisson_noise(images, levels, seed), None


def _text(images, levels, seed):
  return text_render.make_text_overlay()(images, levels, seed), None


def _impulse(images, levels, seed):
  return add_impulse_noise(images, levels, seed), None


@dataclasses.dataclass(frozen=True)
class Corruption:
  """A corruption's parameters (catalog.CorruptionSpec) and the function that applies it.

  Attributes:
    spec: catalog.CorruptionSpec; its fields are also readable here
      (corruption.bounds, corruption.default_loss, ...).
    apply: fn(images [B, H, W, C] float32 in [0, 1], levels [B] float32,
      seed [2]) -> (noisy [B, H, W, C] float32, kept-pixel mask
      [B, H, W, 1] float32 or None). Works on whole batches: one call draws
      the noise of every image, which costs far less than B calls.
  """
  spec: catalog.CorruptionSpec
  apply: object

  def __getattr__(self, name):
    if name == 'spec':  # not set yet (copy, unpickling): no recursion
      raise AttributeError(name)
    return getattr(self.spec, name)


_APPLY = {
    'gaussian': _gaussian,
    'poisson': _poisson,
    'text': _text,
    'impulse': _impulse,
    'bernoulli': add_bernoulli_noise,
}
CORRUPTIONS = {name: Corruption(catalog.SPECS[name], _APPLY[name]) for name in catalog.NAMES}


def get_corruption(name):
  """Returns the Corruption called name; ValueError naming the choices otherwise."""
  return CORRUPTIONS[catalog.get_spec(name).name]


def sample_levels(level_range, count, seed):
  """Draws count levels uniformly from level_range = (low, high); [count] float32."""
  low, high = level_range
  return tf.random.stateless_uniform([count], seed=seed, minval=low, maxval=high,
                                     dtype=tf.float32)


def corrupt_batch(images, noise, levels, seed):
  """Corrupts each image of a batch at its own level, independently.

  Args:
    images: [B, H, W, C] float32 in [0, 1], or volumes [B, D, H, W, C] for the
      corruptions that act on each voxel alone (not text).
    noise: corruption name, e.g. 'gaussian'.
    levels: [B] float32, see the module docstring for units.
    seed: [2] int32 stateless seed.

  Returns:
    (noisy, same shape float32, not clipped; mask [..., 1] float32 in {0, 1},
    which pixels still carry the clean signal: all ones except for
    corruptions that drop pixels).

  Raises:
    ValueError: volumes with a corruption that is not per voxel (text).
  """
  corruption = get_corruption(noise)
  if images.shape.rank == 5:
    if not corruption.pixel_independent:
      raise ValueError(f'--noise={corruption.name} is drawn on 2D images; volumes take '
                       f'{", ".join(catalog.VOLUME_NAMES)}')
    # Each voxel is corrupted on its own, so the planes of a volume stacked
    # into one tall image get exactly the volume's noise.
    shape = tf.shape(images)
    tall = tf.reshape(images, tf.stack([shape[0], shape[1] * shape[2], shape[3], shape[4]]))
    tall.set_shape([None, None, None, images.shape[-1]])
    noisy, mask = corrupt_batch(tall, noise, levels, seed)
    return (tf.reshape(noisy, shape),
            tf.reshape(mask, tf.concat([shape[:-1], [1]], 0)))
  noisy, mask = corruption.apply(images, levels, seed)
  if mask is None:
    mask = tf.ones_like(images[..., :1])
  return noisy, mask


def corrupt_with_mask(image, noise, level, seed):
  """Corrupts one image; see corrupt_batch.

  Args:
    image: [H, W, C] float32 in [0, 1].
    noise: corruption name.
    level: scalar.
    seed: [2] int32 stateless seed.

  Returns:
    (noisy [H, W, C] float32, mask [H, W, 1] float32 in {0, 1}).
  """
  level = tf.reshape(tf.cast(level, tf.float32), [1])
  noisy, mask = corrupt_batch(image[tf.newaxis], noise, level, seed)
  return noisy[0], mask[0]


def corrupt(image, noise, level, seed):
  """Corrupts one image with the named corruption at the given level (user units).

  Args:
    image: [H, W, C] float32 in [0, 1].
    noise: corruption name, e.g. 'gaussian'.
    level: scalar, see the module docstring for units.
    seed: [2] int32 stateless seed.

  Returns:
    [H, W, C] float32, not clipped.
  """
  return corrupt_with_mask(image, noise, level, seed)[0]


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
