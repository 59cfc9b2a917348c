"""tf.data pipelines: training pairs from TFRecords, evaluation images from folders.

Training elements are dicts of per-replica batches:
  'input'        [B, S, S, C] float32, the corrupted input (not clipped)
  'target'       [B, S, S, C] float32, an independent corruption (or the clean crop)
  'target_mask'  [B, S, S, 1] float32, only for corruptions that drop pixels
with S = crop_size. All randomness is stateless and derived from (seed, worker,
start step, image or batch index), so a run is reproducible and a resumed run does
not replay the crops and noise of its first steps.
"""

import json
import os

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.corruptions import noise as noise_lib
from n2n.data import augmentation
from n2n.data import file_lists
from n2n.data import rgb_images
from n2n.data import tfrecord
from n2n.data import traced

# Bounds the crop shuffle buffer; at 256x256x3 uint8 this is at most 100 MB.
_MAX_CROP_SHUFFLE = 512


def read_manifests(files):
  """Loads the dataset tool's manifest.json beside the given shards, if any.

  Returns:
    list of manifest dicts (one per directory that has one).
  """
  manifests = []
  for directory in sorted({os.path.dirname(path) for path in files}):
    path = os.path.join(directory, tfrecord.MANIFEST_NAME)
    if tf.io.gfile.exists(path):
      with tf.io.gfile.GFile(path) as manifest_file:
        manifests.append(json.load(manifest_file))
  return manifests


def decoded_megabytes(manifests):
  """Memory of all images decoded to uint8 RGB, MiB; None without manifests."""
  if not manifests:
    return None
  return sum(manifest.get('decoded_bytes', 0) for manifest in manifests) / 2**20


def random_crops(image, crop_size, count, seed):
  """Takes count random square crops from one image.

  Args:
    image: [H, W, C] of any dtype, with H, W >= crop_size; or [N, H, W, C]
      (N static): N registered images, all cut at the same window.
    crop_size: python int.
    count: python int, crops per image.
    seed: [2] int32 stateless seed.

  Returns:
    [count, crop_size, crop_size, C] (or [count, N, crop_size, crop_size, C])
    of the same dtype.
  """
  size = image.shape[:-3].as_list() + [crop_size, crop_size, image.shape[-1]]
  seeds = tf.random.experimental.stateless_split(seed, count)
  return tf.stack([tf.image.stateless_random_crop(image, size, seed=seeds[i])
                   for i in range(count)])


def make_training_pairs(clean, noise, noise_range, target, seed):
  """Corrupts each clean crop twice, independently, each time at its own level.

  Works on a whole batch at once: one call per batch keeps the input
  pipeline's per-element overhead off the cores the training step needs.

  Args:
    clean: [B, S, S, C] float32 in [0, 1].
    noise: corruption name.
    noise_range: (low, high) training level range, user units.
    target: 'noisy' (Noise2Noise) or 'clean' (Noise2Clean baseline).
    seed: [2] int32 stateless seed.

  Returns:
    dict: 'input' and 'target', [B, S, S, C] float32; for corruptions that
    drop pixels also 'target_mask', [B, S, S, 1] float32, 1 where the target
    is valid.
  """
  seeds = tf.random.experimental.stateless_split(seed, 4)
  count = tf.shape(clean)[0]
  noisy_input, _ = noise_lib.corrupt_batch(
      clean, noise, noise_lib.sample_levels(noise_range, count, seeds[0]), seeds[1])
  if target == 'clean':
    noisy_target, target_mask = clean, tf.ones_like(clean[..., :1])
  else:
    noisy_target, target_mask = noise_lib.corrupt_batch(
        clean, noise, noise_lib.sample_levels(noise_range, count, seeds[2]), seeds[3])
  pairs = {'input': noisy_input, 'target': noisy_target}
  if noise_lib.get_corruption(noise).drops_pixels:
    pairs['target_mask'] = target_mask
  return pairs


def shuffle_seeds(seed, pipeline_id, start_step):
  """Seeds of the image-order and crop-order shuffles, as two python ints.

  They depend on the start step too, so a resumed run reads the images in a
  new order instead of replaying the order its first steps saw.
  """
  state = np.random.SeedSequence([seed, pipeline_id, start_step]).generate_state(2, np.uint64)
  return tuple(int(value >> np.uint64(1)) for value in state)


def read_records(train_data, input_context=None):
  """This input pipeline's share of the records of every --train_data shard.

  Returns:
    (tf.data.Dataset of serialized records, the pipeline's index).
  """
  files = file_lists.record_files(train_data)
  pipelines = input_context.num_input_pipelines if input_context else 1
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  files_ds = tf.data.Dataset.from_tensor_slices(files)
  shard_files = pipelines > 1 and len(files) >= pipelines
  if shard_files:
    files_ds = files_ds.shard(pipelines, pipeline_id)
  records = files_ds.interleave(
      tf.data.TFRecordDataset, cycle_length=min(len(files), 8),
      num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
  if pipelines > 1 and not shard_files:
    # Fewer files than workers: every worker reads all, keeps every n-th record.
    records = records.shard(pipelines, pipeline_id)
  return records, pipeline_id


def crop_shuffle_size(per_replica_batch, crops_per_image):
  """Crops in the crop shuffle buffer: enough to mix images, bounded in memory."""
  return min(_MAX_CROP_SHUFFLE, max(8 * per_replica_batch, 4 * crops_per_image))


def usable_items(items, config, cache, height_width=lambda image: tf.shape(image)[:2]):
  """Drops what cannot give a crop, and keeps the rest in memory if asked.

  Args:
    items: tf.data.Dataset of decoded images or parsed scenes.
    config: config.TrainConfig (skip_corrupt_records, crop_size).
    cache: keep the items in memory after the first pass.
    height_width: fn(item) -> [2] int tensor, its height and width.

  Returns:
    tf.data.Dataset of the items whose records read (with
    --skip_corrupt_records) and whose sides reach the crop size. train.py
    checks the manifest up front, so the size filter cannot silently drop
    everything.
  """
  if config.data.skip_corrupt_records:
    # Drops records that fail to read or decode (truncated shards, bad PNGs).
    items = items.ignore_errors(log_warning=True)
  crop_size = config.data.crop_size
  items = items.filter(traced.as_written(
      lambda item: tf.reduce_min(height_width(item)) >= crop_size))
  return items.cache() if cache else items


def stream_seeds(config, pipeline_id, start_step, count):
  """count independent [2] int64 seeds for one pipeline's random streams (crops,
  augmentation, noise, ...), keyed by (--seed, pipeline, resume step)."""
  base_seed = tf.random.experimental.stateless_fold_in(
      tf.constant([config.run.seed, pipeline_id], tf.int64), start_step)
  return tf.unstack(tf.random.experimental.stateless_split(base_seed, count))


def shuffled_crops(items, crops_of, per_replica_batch, config, pipeline_id, start_step):
  """Every pipeline's crop stream: items (images or scenes) in a shuffled,
  endless order, each cut into crops by crops_of, the crops shuffled again so a
  batch mixes items.

  Args:
    items: tf.data.Dataset of decoded images or parsed scenes.
    crops_of: fn(index, item) -> [crops_per_image, S, S, C].
    per_replica_batch, config, pipeline_id, start_step: the shuffles' sizes and seeds.

  Returns:
    tf.data.Dataset of single [S, S, C] crops.
  """
  image_order_seed, crop_order_seed = shuffle_seeds(config.run.seed, pipeline_id, start_step)
  items = items.shuffle(64, seed=image_order_seed, reshuffle_each_iteration=True)
  crops = items.repeat().enumerate().map(traced.as_written(crops_of), num_parallel_calls=tf.data.AUTOTUNE)
  return crops.unbatch().shuffle(crop_shuffle_size(per_replica_batch, config.data.crops_per_image),
                                 seed=crop_order_seed)


def build_train_dataset(config, per_replica_batch, cache, start_step=0, input_context=None):
  """The training dataset for one input pipeline (one worker).

  Args:
    config: config.TrainConfig.
    per_replica_batch: python int.
    cache: bool, keep decoded images in memory.
    start_step: the global step the run starts (or resumes) at.
    input_context: tf.distribute.InputContext or None.

  Returns:
    tf.data.Dataset of dicts, see the module docstring.
  """
  records, pipeline_id = read_records(config.data.train_data, input_context)
  crop_size = config.data.crop_size
  channels = config_lib.model_channels(config)
  images = records.map(traced.as_written(
      lambda record: rgb_images.convert_channels_tf(tfrecord.parse_image(record)['image'],
                                                    channels)),
      num_parallel_calls=tf.data.AUTOTUNE)
  images = usable_items(images, config, cache)
  crop_seed, pair_seed = stream_seeds(config, pipeline_id, start_step, 2)

  def crops_of(index, image):
    seed = tf.random.experimental.stateless_fold_in(crop_seed, index)
    return random_crops(image, crop_size, config.data.crops_per_image, seed)

  crops = shuffled_crops(images, crops_of, per_replica_batch, config, pipeline_id, start_step)

  def pairs_of(index, crops):
    seeds = tf.random.experimental.stateless_split(
        tf.random.experimental.stateless_fold_in(pair_seed, index), 2)
    clean = augmentation.augment_crops(crops, config.data.augment, seeds[0])
    return make_training_pairs(clean, config.corruption.noise, config.corruption.noise_range,
                               config.method.target, seeds[1])

  # Augmentation and corruption run on whole batches (one call per batch).
  batches = crops.batch(per_replica_batch, drop_remainder=True).enumerate()
  pairs = batches.map(traced.as_written(pairs_of), num_parallel_calls=tf.data.AUTOTUNE)
  return pairs.prefetch(tf.data.AUTOTUNE)
