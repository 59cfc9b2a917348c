"""tf.data pipelines of stack datasets (volumes, or movies with time as depth).

Training elements are dicts of per-replica batches, as for images, one axis more:
  'input'   [B, D, S, S, C] float32, a crop of one acquisition (1.0 at the
            data's white level, or, with --normalization=percentile, the
            acquisition's own percentiles over all its voxels mapped to 0 and 1)
  'target'  [B, D, S, S, C] float32, the same crop of another acquisition of
            the stack, or of its reference, on the input acquisition's scale
or, for clean stacks with synthetic noise, two independent corruptions of one
clean crop (and 'target_mask' for corruptions that drop voxels),
with D = --crop_depth and S = --crop_size. Stacks are decoded and cropped at
their native bit depth; only the crops become float. Augmentation flips and
rotates in xy (any of the 8 orientations: xy pixels are alike) and flips z
(a z step is not an xy pixel, so z is never swapped with y or x).
"""

import itertools

import tensorflow as tf

from n2n.data import input_pipeline
from n2n.data import normalization
from n2n.data import scene_pipeline
from n2n.data import tfrecord
from n2n.data import traced


def stack_pair(scene, target, dtype, data_channels, seed):
  """Two different acquisitions of one stack (or one and its reference), native
  pixels: ([D, H, W, 2 * data_channels], input channels then target channels;
  the input acquisition's index) (scene_pipeline.scene_pair on volumes)."""
  return scene_pipeline.scene_pair(scene, target, dtype, data_channels, seed,
                                   decode=tfrecord.decode_volume)


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


def _volume_batches(config, per_replica_batch, cache, start_step, input_context, crop_depth,
                    crop_of, parts_of):
  """The shared stream: stacks at least crop_depth deep, crop_of(scene, pick
  seed, crop seed) -> ([count, crop_depth, S, S, C'] native crops, the index of
  the acquisition the input comes from, that acquisition [D, H, W, C] native),
  parts_of(crop [..., C'] float32 in network units, [2] int32 seed of the crop)
  -> {name: [D', S, S, C_name]}, every part augmented alike (one flip or turn
  moves them all), batched. Network units: divided by the white level, or,
  with --normalization=percentile, mapped by the input acquisition's own
  percentiles (the target too, so the network answers on the input's scale,
  which denoising undoes)."""
  records, pipeline_id = input_pipeline.read_records(config.data.train_data, input_context)
  scenes = records.map(traced.as_written(tfrecord.parse_scene), num_parallel_calls=tf.data.AUTOTUNE)
  scenes = scenes.filter(traced.as_written(lambda scene: scene['depth'] >= crop_depth))
  rule = normalization.rule_of(config)
  scenes, precomputed_maps = scene_pipeline.with_maps_when_cached(scenes, config, cache,
                                                                  tfrecord.decode_volume)
  scenes = input_pipeline.usable_items(scenes, config, cache,
                                      height_width=lambda scene: scene['shape'][:2])
  pick_seed, crop_seed, augment_seed = input_pipeline.stream_seeds(config, pipeline_id,
                                                                   start_step, 3)

  def crops_of(index, scene):
    crops, first, acquisition = crop_of(
        scene, tf.random.experimental.stateless_fold_in(pick_seed, index),
        tf.random.experimental.stateless_fold_in(crop_seed, index))
    if not rule.per_image:
      return crops  # native: the shuffle buffer holds uint8/uint16, not float
    return scene_pipeline.on_input_scale(crops, scene, first, acquisition, rule,
                                         precomputed_maps)

  crops = input_pipeline.shuffled_crops(scenes, crops_of, per_replica_batch, config,
                                        pipeline_id, start_step)
  augment = config.data.augment
  divisor = 1.0 if rule.per_image else config.data.white_level

  def augmented(index, crop):
    seed = tf.random.experimental.stateless_fold_in(augment_seed, index)
    parts = parts_of(tf.cast(crop, tf.float32) / divisor,
                     tf.random.experimental.stateless_fold_in(seed, 1))
    names = sorted(parts)
    # The parts stacked on channels: one transform moves them all.
    moved = augment_volume(tf.concat([parts[name] for name in names], axis=-1), seed,
                           augment.flips, augment.rotations)
    ends = itertools.accumulate(parts[name].shape[-1] for name in names)
    return {name: moved[..., end - parts[name].shape[-1]:end] for name, end in zip(names, ends)}

  pairs = crops.enumerate().map(traced.as_written(augmented), num_parallel_calls=tf.data.AUTOTUNE)
  return pairs.batch(per_replica_batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def _one_acquisition_crops(config, depth):
  """crop_of for _volume_batches: crops `depth` planes deep of one acquisition
  of the scene, drawn at random (a movie's frames, or a single noisy stack)."""
  dtype = tf.as_dtype(config.data.dtype)

  def crop_of(scene, pick_seed, crop_seed):
    count = tf.shape(scene['captures'])[0]
    pick = tf.random.stateless_uniform([], pick_seed, 0, count, dtype=tf.int32)
    stack = tfrecord.decode_volume(scene['captures'][pick], dtype, config.data.channels)
    return (random_volume_crops(stack, depth, config.data.crop_size,
                                config.data.crops_per_image, crop_seed), pick, stack)

  return crop_of


def build_frames_dataset(config, per_replica_batch, cache, start_step=0, input_context=None):
  """The training dataset of --method=neighbouring_frames: crops of 2 x crop_depth
  consecutive frames of one movie, even frames as input, odd frames as target.

  Returns:
    tf.data.Dataset of {'input', 'target'}: [B, D, S, S, C] float32.
  """
  frames = 2 * config.data.crop_depth
  return _volume_batches(config, per_replica_batch, cache, start_step, input_context, frames,
                         _one_acquisition_crops(config, frames),
                         lambda crop, _: {'input': crop[0::2], 'target': crop[1::2]})


def build_noisy_volume_dataset(config, per_replica_batch, cache, start_step=0,
                               input_context=None):
  """Batches of augmented noisy crops of single acquisitions, for the
  single-image methods in 3D (each acquisition of a scene, or each stack of a
  --noisy_images dataset, is a training volume of its own).

  Returns:
    tf.data.Dataset of [B, D, S, S, C] float32.
  """
  batches = _volume_batches(config, per_replica_batch, cache, start_step, input_context,
                            config.data.crop_depth,
                            _one_acquisition_crops(config, config.data.crop_depth),
                            lambda crop, _: {'noisy': crop})
  return batches.map(traced.as_written(lambda batch: batch['noisy']))


def build_volume_dataset(config, per_replica_batch, cache, start_step=0, input_context=None):
  """The training dataset of a stack dataset (--spatial_dims=3) for one input pipeline.

  Args:
    config: config.TrainConfig resolved from the data (config.resolve_data).
    per_replica_batch, cache, start_step, input_context: as
      input_pipeline.build_train_dataset.

  Returns:
    tf.data.Dataset of {'input', 'target'}: [B, D, S, S, C] float32.
  """
  dtype = tf.as_dtype(config.data.dtype)
  data_channels = config.data.channels
  crop_depth = config.data.crop_depth

  def crop_of(scene, pick_seed, crop_seed):
    stacked, first = stack_pair(scene, config.method.target, dtype, data_channels, pick_seed)
    return (random_volume_crops(stacked, crop_depth, config.data.crop_size,
                                config.data.crops_per_image, crop_seed),
            first, stacked[..., :data_channels])

  return _volume_batches(config, per_replica_batch, cache, start_step, input_context, crop_depth,
                         crop_of, lambda crop, _: {'input': crop[..., :data_channels],
                                                   'target': crop[..., data_channels:]})


def build_synthetic_volume_dataset(config, per_replica_batch, cache, start_step=0,
                                   input_context=None):
  """The training dataset of clean stacks (make_tfrecords.py --clean_stacks) with
  synthetic noise: each crop corrupted twice, independently and each time at its
  own level of --noise_range (input_pipeline.make_training_pairs, per voxel as
  per pixel), or once with the clean crop as target (--target=clean).

  Returns:
    tf.data.Dataset of {'input', 'target'} and, for --noise=bernoulli,
    'target_mask' ([B, D, S, S, 1]): [B, D, S, S, C] float32.
  """
  corruption = config.corruption

  def pairs_of(crop, seed):
    pairs = input_pipeline.make_training_pairs(crop[tf.newaxis], corruption.noise,
                                               corruption.noise_range, config.method.target,
                                               seed)
    return {name: part[0] for name, part in pairs.items()}

  return _volume_batches(config, per_replica_batch, cache, start_step, input_context,
                         config.data.crop_depth,
                         _one_acquisition_crops(config, config.data.crop_depth), pairs_of)
