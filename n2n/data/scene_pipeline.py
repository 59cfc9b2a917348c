"""tf.data pipelines of scene datasets (real noisy captures, --noise=none).

Training elements are dicts of per-replica batches, as for clean images:
  'input'   [B, S, S, C] float32, one capture (1.0 at the data's white level,
            or, with --normalization=percentile, the capture's own percentiles
            mapped to 0 and 1)
  'target'  [B, S, S, C] float32, another capture of the scene, or its
            reference, on the input capture's scale
Captures are decoded and cropped at their native bit depth; only the crops
become float. Randomness is stateless, as in input_pipeline.
"""

import tensorflow as tf

from n2n import config as config_lib
from n2n.data import augmentation
from n2n.data import input_pipeline
from n2n.data import normalization
from n2n.data import rgb_images
from n2n.data import tfrecord
from n2n.data import traced


def scene_pair(scene, target, dtype, data_channels, seed, decode=tfrecord.decode_pixels):
  """Two different captures of one scene (or a capture and its reference), native pixels.

  Args:
    scene: tfrecord.parse_scene's dict.
    target: 'noisy' (a second capture) or 'clean' (the reference).
    dtype: the captures' tf.DType; data_channels: their channel count.
    seed: [2] int32 stateless seed.
    decode: fn(serialized, dtype, channels) -> pixels (tfrecord.decode_volume
      for stacks).

  Returns:
    [H, W, 2 * data_channels] of dtype ([D, H, W, ...] for stacks): input
    channels, then target channels; and the input capture's index.
  """
  count = tf.shape(scene['captures'])[0]
  first = tf.random.stateless_uniform([], seed, 0, count, dtype=tf.int32)
  if target == 'clean':
    target_bytes = scene['reference'][0]
  else:
    # A uniformly drawn different capture: an offset of 1..count-1.
    offset = tf.random.stateless_uniform([], seed + 1, 1, count, dtype=tf.int32)
    target_bytes = scene['captures'][(first + offset) % count]
  pixels = lambda data: decode(data, dtype, data_channels)
  return tf.concat([pixels(scene['captures'][first]), pixels(target_bytes)], axis=-1), first


def with_capture_maps(scene, dtype, data_channels, rule, decode=tfrecord.decode_pixels):
  """scene with 'maps' [N, 2] float32: each capture's (offset, scale) by its
  percentiles (normalization.percentile_maps_tf) over all its pixels (a
  stack's voxels, with decode=tfrecord.decode_volume), computed once per scene."""

  def map_of(data):
    pixels = tf.cast(decode(data, dtype, data_channels), tf.float32)
    offset, scale = normalization.percentile_maps_tf(pixels[tf.newaxis], rule)
    return tf.stack([tf.reshape(offset, []), tf.reshape(scale, [])])

  maps = tf.map_fn(map_of, scene['captures'], fn_output_signature=tf.float32)
  return dict(scene, maps=maps)


def with_maps_when_cached(scenes, config, cache, decode=tfrecord.decode_pixels):
  """(scenes, True) with each capture's percentile map (with_capture_maps) for a
  --normalization=percentile run with the cache: every capture is sorted once,
  before the cache. Else (scenes, False): without the cache only the input
  capture a visit decodes anyway is sorted (on_input_scale), not all N of them
  at every visit."""
  rule = normalization.rule_of(config)
  if not (rule.per_image and cache):
    return scenes, False
  dtype = tf.as_dtype(config.data.dtype)
  return scenes.map(traced.as_written(
      lambda scene: with_capture_maps(scene, dtype, config.data.channels, rule, decode)),
                    num_parallel_calls=tf.data.AUTOTUNE), True


def on_input_scale(crops, scene, first, input_pixels, rule, precomputed_maps):
  """Native crops -> float32 on the input capture's percentile scale (target
  channels too: the network answers in the map denoising undoes with the
  input's own percentiles).

  Args:
    crops: [N, ..., C'] native crops of the scene.
    scene: the scene dict, with 'maps' where precomputed_maps (with_capture_maps).
    first: the input capture's index in the scene.
    input_pixels: that capture, native ([H, W, C] or [D, H, W, C]); read only
      without precomputed maps.
    rule: normalization.Rule with kind PERCENTILE.
  """
  if precomputed_maps:
    offset, scale = scene['maps'][first][0], scene['maps'][first][1]
  else:
    offset, scale = normalization.percentile_maps_tf(
        tf.cast(input_pixels, tf.float32)[tf.newaxis], rule)
  return (tf.cast(crops, tf.float32) - offset) / scale


def build_scene_dataset(config, per_replica_batch, cache, start_step=0, input_context=None):
  """The training dataset of a scene dataset (--noise=none) for one input pipeline.

  Two captures of one scene (or a capture and the reference, --target=clean),
  the same crop window and augmentation for both, no synthetic noise.

  Args:
    config: config.TrainConfig with the data's dtype, channels and white level
      resolved (config.resolve_data).
    per_replica_batch, cache, start_step, input_context: as
      input_pipeline.build_train_dataset.

  Returns:
    tf.data.Dataset of {'input', 'target'}: [B, S, S, C] float32, C the
    model's channels, 1.0 at the white level.
  """
  records, pipeline_id = input_pipeline.read_records(config.data.train_data, input_context)
  scenes = records.map(traced.as_written(tfrecord.parse_scene), num_parallel_calls=tf.data.AUTOTUNE)
  dtype = tf.as_dtype(config.data.dtype)
  rule = normalization.rule_of(config)
  scenes, precomputed_maps = with_maps_when_cached(scenes, config, cache)
  scenes = input_pipeline.usable_items(scenes, config, cache,
                                      height_width=lambda scene: scene['shape'][:2])
  crop_size = config.data.crop_size
  pick_seed, crop_seed, pair_seed = input_pipeline.stream_seeds(config, pipeline_id, start_step,
                                                                3)
  channels = config_lib.model_channels(config)

  def crops_of(index, scene):
    pick = tf.random.experimental.stateless_fold_in(pick_seed, index)
    # Cropped at native bit depth: only the crops are converted to float.
    stacked, first = scene_pair(scene, config.method.target, dtype, config.data.channels, pick)
    crops = input_pipeline.random_crops(
        stacked, crop_size, config.data.crops_per_image,
        tf.random.experimental.stateless_fold_in(crop_seed, index))
    if not rule.per_image:
      return crops
    return on_input_scale(crops, scene, first, stacked[..., :config.data.channels], rule,
                          precomputed_maps)

  crops = input_pipeline.shuffled_crops(scenes, crops_of, per_replica_batch, config,
                                        pipeline_id, start_step)

  def pairs_of(index, crops):
    seed = tf.random.experimental.stateless_fold_in(pair_seed, index)
    # Input and target are stacked along channels: one flip, rotation and
    # channel order moves both, so the pair stays a Noise2Noise pair. Without
    # permutations a model knows only its training scenes' colours and turns
    # others (saturated greens) towards them (issue 20).
    both = augmentation.augment_crops(crops, config.data.augment, seed,
                                      divisor=1.0 if rule.per_image else config.data.white_level,
                                      channel_groups=2)
    data_channels = config.data.channels
    return {'input': rgb_images.convert_channels_tf(both[..., :data_channels], channels),
            'target': rgb_images.convert_channels_tf(both[..., data_channels:], channels)}

  batches = crops.batch(per_replica_batch, drop_remainder=True).enumerate()
  return batches.map(traced.as_written(pairs_of), num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
