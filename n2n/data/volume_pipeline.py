"""tf.data pipelines of stack datasets (volumes, or movies with time as depth).

Training elements are dicts of per-replica batches, as for images, one axis more:
  'input'   [B, D, S, S, C] float32, a crop of one acquisition (1.0 at the
            data's white level)
  'target'  [B, D, S, S, C] float32, the same crop of another acquisition of
            the stack, or of its reference
with D = --crop_depth and S = --crop_size. Stacks are decoded and cropped at
their native bit depth; only the crops become float. Augmentation flips and
rotates in xy (any of the 8 orientations: xy pixels are alike) and flips z
(a z step is not an xy pixel, so z is never swapped with y or x).
"""

import tensorflow as tf

from n2n.data import input_pipeline
from n2n.data import scene_pipeline
from n2n.data import tfrecord


def stack_pair(scene, target, dtype, data_channels, seed):
  """Two different acquisitions of one stack (or one and its reference), native
  pixels: [D, H, W, 2 * data_channels], input channels then target channels
  (scene_pipeline.scene_pair on volumes)."""
  stacked, _ = scene_pipeline.scene_pair(scene, target, dtype, data_channels, seed,
                                         decode=tfrecord.decode_volume)
  return stacked


def random_volume_crops(stack, crop_depth, crop_size, count, seed):
  """count random [crop_depth, crop_size, crop_size, C] windows of [D, H, W, C]."""
  size = [crop_depth, crop_size, crop_size, stack.shape[-1]]
  seeds = tf.random.experimental.stateless_split(seed, count)
  return tf.stack([tf.image.stateless_random_crop(stack, size, seed=seeds[i])
                   for i in range(count)])


def augment_volume(crop, seed, flips=True, rotations=True):
  """One crop [D, S, S, C] flipped and rotated in xy and flipped in z, at random.

  Args:
    crop: [D, S, S, C] (square in xy, so a rotation keeps its shape).
    seed: [2] int32 stateless seed.
    flips: random flips of x, y and z; rotations: random 90-degree xy turns.
  """
  draws = tf.random.stateless_uniform([4], seed)
  if rotations:
    turns = tf.cast(draws[0] * 4, tf.int32)
    # tf.image.rot90 turns the H, W axes of [N, H, W, C]: the planes are N.
    crop = tf.image.rot90(crop, turns)
  if flips:
    for axis, draw in zip((0, 1, 2), tf.unstack(draws[1:])):
      crop = tf.where(draw < 0.5, tf.reverse(crop, [axis]), crop)
  return crop


def build_volume_dataset(config, per_replica_batch, cache, start_step=0, input_context=None):
  """The training dataset of a stack dataset (--spatial_dims=3) for one input pipeline.

  Args:
    config: config.TrainConfig resolved from the data (config.resolve_data).
    per_replica_batch, cache, start_step, input_context: as
      input_pipeline.build_train_dataset.

  Returns:
    tf.data.Dataset of {'input', 'target'}: [B, D, S, S, C] float32.
  """
  records, pipeline_id = input_pipeline.read_records(config.data.train_data, input_context)
  scenes = records.map(tfrecord.parse_scene, num_parallel_calls=tf.data.AUTOTUNE)
  crop_depth = config.data.crop_depth
  scenes = scenes.filter(lambda scene: scene['depth'] >= crop_depth)
  scenes = input_pipeline.usable_items(scenes, config, cache,
                                      height_width=lambda scene: scene['shape'][:2])
  dtype = tf.as_dtype(config.data.dtype)
  data_channels = config.data.channels
  pick_seed, crop_seed, augment_seed = input_pipeline.stream_seeds(config, pipeline_id,
                                                                   start_step, 3)

  def crops_of(index, scene):
    pick = tf.random.experimental.stateless_fold_in(pick_seed, index)
    stacked = stack_pair(scene, config.method.target, dtype, data_channels, pick)
    return random_volume_crops(stacked, crop_depth, config.data.crop_size,
                               config.data.crops_per_image,
                               tf.random.experimental.stateless_fold_in(crop_seed, index))

  crops = input_pipeline.shuffled_crops(scenes, crops_of, per_replica_batch, config,
                                        pipeline_id, start_step)
  augment = config.data.augment

  def pair_of(index, crop):
    seed = tf.random.experimental.stateless_fold_in(augment_seed, index)
    # Input and target stacked on channels: one transform moves both.
    both = augment_volume(tf.cast(crop, tf.float32) / config.data.white_level, seed,
                          augment.flips, augment.rotations)
    return {'input': both[..., :data_channels], 'target': both[..., data_channels:]}

  pairs = crops.enumerate().map(pair_of, num_parallel_calls=tf.data.AUTOTUNE)
  return pairs.batch(per_replica_batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
