"""Clean images corrupted a fixed number of times: simulated captures.

With --noise_captures=N, every clean image of a synthetic-noise run is
corrupted N times, once and for all, and training sees only those N noisy
copies, as a user with N real captures of each scene would. The paper's
default (N = 0) draws fresh noise at every step, which quietly gives the
network an unlimited number of noisy copies: right for reproducing the paper,
wrong for comparing methods that have one capture (Neighbor2Neighbor,
blind-spot) with Noise2Noise on two.

A capture is a pure function of (--seed, the image's name, the capture's
index): the same whenever and wherever the image is read. The captures of one
image share its noise level, drawn once from --noise_range, as the captures of
one scene share a sensor and exposure.

Pairs of captures (--method=pairs) leave the pipeline as elements of the
clean-image pipeline:
  'input'   [B, S, S, C] float32, one capture
  'target'  [B, S, S, C] float32, another capture of the image, or the clean
            image (--target=clean)
"""

import tensorflow as tf

from n2n import config as config_lib
from n2n.corruptions import noise as noise_lib
from n2n.data import augmentation
from n2n.data import input_pipeline
from n2n.data import rgb_images
from n2n.data import tfrecord
from n2n.data import traced

# Mixed into the capture seeds, so they differ from every other stream.
_CAPTURE_KEY = 0x51A6


def fixed_capture(name, image, noise, noise_range, seed, index=0):
  """One fixed noisy capture of a clean image.

  Args:
    name: scalar string, the image's name in the dataset (its identity).
    image: [H, W, C] uint8.
    noise: corruption name; noise_range: (low, high) of its level.
    seed: python int, the run's --seed.
    index: scalar int, which capture (0, 1, ...).

  Returns:
    [H, W, C] float32, not clipped.
  """
  key = tf.strings.to_hash_bucket_fast(name, 2**31 - 1)
  image_seed = tf.random.experimental.stateless_fold_in(
      tf.constant([seed, _CAPTURE_KEY], tf.int64), key)
  level_seed, noise_seed = tf.unstack(tf.random.experimental.stateless_split(image_seed, 2))
  low, high = noise_range
  level = tf.random.stateless_uniform([], level_seed, low, high)
  capture_seed = tf.random.experimental.stateless_fold_in(noise_seed, tf.cast(index, tf.int64))
  return noise_lib.corrupt(tf.cast(image, tf.float32) / 255.0, noise, level,
                           tf.cast(capture_seed, tf.int32))


def parse_captures(record, config):
  """One clean-image record and its fixed captures.

  Returns:
    ([N, H, W, C] float32 captures, N = config.corruption.noise_captures, C the model's
     channels; [H, W, C] float32 clean image in [0, 1]).
  """
  parsed = tfrecord.parse_image(record)
  image = rgb_images.convert_channels_tf(parsed['image'], config_lib.model_channels(config))
  captures = tf.stack([
      fixed_capture(parsed['name'], image, config.corruption.noise, config.corruption.noise_range,
                    config.run.seed, index) for index in range(config.corruption.noise_captures)
  ])
  return captures, tf.cast(image, tf.float32) / 255.0


def _pair_indices(count, target, seed):
  """Which two of an item's count captures (and its clean image, index count)
  make a pair: a capture, then another one or the clean image."""
  first = tf.random.stateless_uniform([], seed, 0, count, dtype=tf.int32)
  if target == 'clean':
    return first, count
  # A uniformly drawn different capture: an offset of 1..count-1.
  offset = tf.random.stateless_uniform([], seed + 1, 1, count, dtype=tf.int32)
  return first, (first + offset) % count


def build_capture_pairs_dataset(config, per_replica_batch, cache, start_step=0,
                                input_context=None):
  """Pairs of fixed captures (--method=pairs with --noise_captures) for one pipeline.

  Args:
    config: config.TrainConfig with synthetic noise and noise_captures >= 1
      (>= 2 for noisy targets).
    per_replica_batch, cache, start_step, input_context: as
      input_pipeline.build_train_dataset. With cache the captures are kept in
      memory, already corrupted.

  Returns:
    tf.data.Dataset of {'input', 'target'}: [B, S, S, C] float32.
  """
  records, pipeline_id = input_pipeline.read_records(config.data.train_data, input_context)
  channels = config_lib.model_channels(config)

  count = config.corruption.noise_captures

  def stacked(record):
    # [N + 1, H, W, C]: the captures, then the clean image; one tensor, so each
    # crop is cut from all of them at once and no whole image is copied per crop.
    captures, clean = parse_captures(record, config)
    return tf.concat([captures, clean[tf.newaxis]], axis=0)

  images = records.map(traced.as_written(stacked), num_parallel_calls=tf.data.AUTOTUNE)
  images = input_pipeline.usable_items(images, config, cache,
                                       height_width=lambda item: tf.shape(item)[1:3])
  crop_size = config.data.crop_size
  pick_seed, crop_seed, augment_seed = input_pipeline.stream_seeds(config, pipeline_id,
                                                                   start_step, 3)

  def crops_of(index, item):
    pick = tf.cast(tf.random.experimental.stateless_fold_in(pick_seed, index), tf.int32)
    first, second = _pair_indices(count, config.method.target, pick)
    # The same window of every image of the item; the pair is two of them.
    windows = input_pipeline.random_crops(
        item, crop_size, config.data.crops_per_image,
        tf.random.experimental.stateless_fold_in(crop_seed, index))  # [K, N + 1, S, S, C]
    return tf.concat([windows[:, first], windows[:, second]], axis=-1)

  crops = input_pipeline.shuffled_crops(images, crops_of, per_replica_batch, config,
                                        pipeline_id, start_step)

  def pairs_of(index, crops):
    # Stacked along channels: one flip, rotation and channel order moves both.
    both = augmentation.augment_crops(
        crops, config.data.augment, tf.random.experimental.stateless_fold_in(augment_seed, index),
        divisor=1.0, channel_groups=2)
    return {'input': both[..., :channels], 'target': both[..., channels:]}

  batches = crops.batch(per_replica_batch, drop_remainder=True).enumerate()
  return batches.map(traced.as_written(pairs_of), num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
