"""tf.data pipelines of noisy crops, for training from single noisy images.

The single-image methods (n2n/training/single_image.py) make their own input
and target from one noisy crop; this module supplies the crops:

  [B, S, S, C] float32 batches (1.0 at the data's white level), augmented
  (flips, rotations, channel permutations), from
  - a clean-image dataset with --noise: every image corrupted ONCE, with a
    noise seed and level fixed per image (keyed by its name and --seed), so
    the run is honest single-image training: a fresh realisation at every
    step would quietly give the network many noisy copies of each image;
  - a scene dataset (--noise=none): every capture is a training image.

Randomness is stateless, keyed by (seed, pipeline, resume step), as in
input_pipeline.
"""

import tensorflow as tf

from n2n import config as config_lib
from n2n.corruptions import noise as noise_lib
from n2n.data import augmentation
from n2n.data import input_pipeline
from n2n.data import rgb_images
from n2n.data import tfrecord

# Mixed into the per-image noise seeds, so they differ from every other stream.
_FIXED_NOISE_KEY = 0x51A6
# The random streams of one pipeline: crop positions, augmentation, and the
# method's own draws (sub-sampler, masks), which training makes from the crops.
CROP_STREAM, AUGMENT_STREAM, METHOD_STREAM = range(3)


def stream_seeds(config, pipeline_id, start_step):
  """The [2] int64 seeds of the three streams, keyed by (--seed, pipeline, resume step)."""
  return input_pipeline.stream_seeds(config, pipeline_id, start_step, 3)


def fixed_noisy_image(name, image, noise, noise_range, seed):
  """One clean image corrupted once, the same way whenever it is read.

  Args:
    name: scalar string, the image's name in the dataset (its identity).
    image: [H, W, C] uint8.
    noise: corruption name; noise_range: (low, high) of its level.
    seed: python int, the run's --seed.

  Returns:
    [H, W, C] float32, not clipped.
  """
  key = tf.strings.to_hash_bucket_fast(name, 2**31 - 1)
  image_seed = tf.random.experimental.stateless_fold_in(
      tf.constant([seed, _FIXED_NOISE_KEY], tf.int64), key)
  level_seed, noise_seed = tf.unstack(tf.random.experimental.stateless_split(image_seed, 2))
  low, high = noise_range
  level = tf.random.stateless_uniform([], level_seed, low, high)
  return noise_lib.corrupt(tf.cast(image, tf.float32) / 255.0, noise, level, noise_seed)


def _noisy_images(records, config):
  """Dataset of [H, W, C] float32 noisy images from either kind of record."""
  channels = config_lib.model_channels(config)
  if config.noise == config_lib.NO_NOISE:
    dtype = tf.as_dtype(config.data_dtype)

    def captures_of(record):
      scene = tfrecord.parse_scene(record)
      return tf.data.Dataset.from_tensor_slices(scene['captures'])

    def decode(data):
      pixels = tfrecord.decode_pixels(data, dtype, config.data_channels)
      return rgb_images.convert_channels_tf(
          tf.cast(pixels, tf.float32) / config.white_level, channels)

    return records.flat_map(captures_of).map(decode, num_parallel_calls=tf.data.AUTOTUNE)

  def corrupt(record):
    parsed = tfrecord.parse_image(record)
    image = rgb_images.convert_channels_tf(parsed['image'], channels)
    return fixed_noisy_image(parsed['name'], image, config.noise, config.noise_range,
                             config.seed)

  return records.map(corrupt, num_parallel_calls=tf.data.AUTOTUNE)


def build_noisy_crops_dataset(config, per_replica_batch, cache, start_step=0,
                              input_context=None):
  """Batches of augmented noisy crops for one input pipeline.

  Args:
    config: config.TrainConfig (data resolved).
    per_replica_batch, cache, start_step, input_context: as
      input_pipeline.build_train_dataset. With cache the noisy images are kept
      in memory, already corrupted.

  Returns:
    tf.data.Dataset of [per_replica_batch, S, S, C] float32.
  """
  records, pipeline_id = input_pipeline.read_records(config.train_data, input_context)
  images = _noisy_images(records, config)
  images = input_pipeline.usable_items(images, config, cache)
  crop_size = config.crop_size
  seeds = stream_seeds(config, pipeline_id, start_step)
  crop_seed, augment_seed = seeds[CROP_STREAM], seeds[AUGMENT_STREAM]

  def crops_of(index, image):
    return input_pipeline.random_crops(image, crop_size, config.crops_per_image,
                                       tf.random.experimental.stateless_fold_in(crop_seed, index))

  crops = input_pipeline.shuffled_crops(images, crops_of, per_replica_batch, config,
                                        pipeline_id, start_step)

  def augment(index, batch):
    return augmentation.augment_crops(
        batch, config.augment, tf.random.experimental.stateless_fold_in(augment_seed, index),
        divisor=1.0)

  batches = crops.batch(per_replica_batch, drop_remainder=True).enumerate()
  return batches.map(augment, num_parallel_calls=tf.data.AUTOTUNE)
