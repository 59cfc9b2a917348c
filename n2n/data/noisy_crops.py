"""tf.data pipelines of noisy crops, for training from single noisy images.

The single-image methods (n2n/methods/) make their own input
and target from one noisy crop; this module supplies the crops:

  [B, S, S, C] float32 batches (1.0 at the data's white level, or each
  image's own percentiles mapped to 0 and 1), augmented
  (flips, rotations, channel permutations), from
  - a clean-image dataset with --noise: every image corrupted once (or
    --noise_captures times, each capture a training image) with fixed seeds
    (n2n/data/fixed_captures.py), so the run is honest single-image training:
    a fresh realisation at every step would quietly give the network many
    noisy copies of each image;
  - a scene dataset (--noise=none): every capture is a training image.

Randomness is stateless, keyed by (seed, pipeline, resume step), as in
input_pipeline.
"""

import tensorflow as tf

from n2n import config as config_lib
from n2n.data import augmentation
from n2n.data import fixed_captures
from n2n.data import input_pipeline
from n2n.data import normalization
from n2n.data import rgb_images
from n2n.data import tfrecord
from n2n.data import traced

# The random streams of one pipeline: crop positions, augmentation, and the
# method's own draws (sub-sampler, masks), which training makes from the crops.
CROP_STREAM, AUGMENT_STREAM, METHOD_STREAM = range(3)


def stream_seeds(config, pipeline_id, start_step):
  """The [2] int64 seeds of the three streams, keyed by (--seed, pipeline, resume step)."""
  return input_pipeline.stream_seeds(config, pipeline_id, start_step, 3)


def _noisy_images(records, config):
  """Dataset of [H, W, C] float32 noisy images from either kind of record."""
  channels = config_lib.model_channels(config)
  if config.corruption.noise == config_lib.NO_NOISE:
    dtype = tf.as_dtype(config.data.dtype)
    rule = normalization.rule_of(config)

    def captures_of(record):
      scene = tfrecord.parse_scene(record)
      return tf.data.Dataset.from_tensor_slices(scene['captures'])

    def decode(data):
      pixels = tf.cast(tfrecord.decode_pixels(data, dtype, config.data.channels), tf.float32)
      if rule.per_image:
        values = normalization.normalize_tf(pixels[tf.newaxis], rule)[0][0]
      else:
        values = pixels / config.data.white_level
      return rgb_images.convert_channels_tf(values, channels)

    return records.flat_map(traced.as_written(captures_of)).map(
        traced.as_written(decode), num_parallel_calls=tf.data.AUTOTUNE)

  captures = records.map(
      traced.as_written(lambda record: fixed_captures.parse_captures(record, config)[0]),
      num_parallel_calls=tf.data.AUTOTUNE)
  return captures.flat_map(tf.data.Dataset.from_tensor_slices)


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
  records, pipeline_id = input_pipeline.read_records(config.data.train_data, input_context)
  images = _noisy_images(records, config)
  images = input_pipeline.usable_items(images, config, cache)
  crop_size = config.data.crop_size
  seeds = stream_seeds(config, pipeline_id, start_step)
  crop_seed, augment_seed = seeds[CROP_STREAM], seeds[AUGMENT_STREAM]

  def crops_of(index, image):
    return input_pipeline.random_crops(image, crop_size, config.data.crops_per_image,
                                       tf.random.experimental.stateless_fold_in(crop_seed, index))

  crops = input_pipeline.shuffled_crops(images, crops_of, per_replica_batch, config,
                                        pipeline_id, start_step)

  def augment(index, batch):
    return augmentation.augment_crops(
        batch, config.data.augment, tf.random.experimental.stateless_fold_in(augment_seed, index),
        divisor=1.0)

  batches = crops.batch(per_replica_batch, drop_remainder=True).enumerate()
  return batches.map(traced.as_written(augment), num_parallel_calls=tf.data.AUTOTUNE)
