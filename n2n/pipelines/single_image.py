"""What the single-image methods' pipelines share (n2n/methods/single_image.py):
noisy crops (n2n/data/noisy_crops.py, or stacks' crops) through the training
pixel-shuffle stride, turned into the method's elements, and the held-out loss
taken on the stride's sub-images."""

import abc

import tensorflow as tf

from n2n.data import noisy_crops
from n2n.data import pixel_shuffle
from n2n.data import traced
from n2n.data import volume_pipeline
from n2n.pipelines import base


class SingleImagePipeline(base.Pipeline):
  """A single-image method's pipeline; subclasses give elements() and
  held_out_view_loss()."""

  @abc.abstractmethod
  def elements(self, noisy, seed, config):
    """One batch's training element: noisy [B, S, S, C] float32 crops (volumes:
    [B, D, S, S, C]), seed [2] int32 (per batch) -> dict with 'input' and
    'target' at least."""

  @abc.abstractmethod
  def held_out_view_loss(self, denoise, noisy, seed, config=None):
    """The method's own loss on one held-out [H, W, C] float32 image (see
    base.Pipeline.held_out_loss), a python float; config None: the method's
    default settings."""

  def crops_config(self, config):
    """The config the noisy crops are drawn with (the run's own, unless the method
    augments otherwise)."""
    return config

  def build_dataset(self, config, per_replica_batch, cache, start_step, input_context):
    if config.model.spatial_dims == 3:
      build = volume_pipeline.build_noisy_volume_dataset
    else:
      build = noisy_crops.build_noisy_crops_dataset
    crops = build(self.crops_config(config), per_replica_batch, cache, start_step, input_context)
    pipeline_id = input_context.input_pipeline_id if input_context else 0
    seed = noisy_crops.stream_seeds(config, pipeline_id, start_step)[noisy_crops.METHOD_STREAM]
    return self.elements_dataset(crops, seed, config)

  def elements_dataset(self, noisy_batches, seed, config):
    """tf.data.Dataset of [B, S, S, C] float32 noisy crops -> of elements().

    seed: [2] int64 stateless seed of the pipeline and resume step; every batch
    folds its index in, so draws differ per image and per step and repeat
    exactly for the same seed.

    With a training stride s each batch of B crops becomes s * s * B
    sub-images (n2n/data/pixel_shuffle.py) before elements().
    """
    stride = self.method.training_stride(config)

    def element(index, noisy):
      batch_seed = tf.cast(tf.random.experimental.stateless_fold_in(seed, index), tf.int32)
      return self.elements(pixel_shuffle.shuffle_down(noisy, stride), batch_seed, config)

    return noisy_batches.enumerate().map(traced.as_written(element), num_parallel_calls=tf.data.AUTOTUNE).prefetch(
        tf.data.AUTOTUNE)

  def held_out_loss(self, denoise, noisy, seed, config=None):
    """The method's loss on a held-out image as it trains: on the stride x
    stride sub-images of the image (cropped to a multiple of the training
    stride), each scored by held_out_view_loss with its own seed, averaged. At
    stride 1 the image itself, with the seed as given."""
    stride = self.method.training_stride(config) if config else 1
    if stride == 1:
      return self.held_out_view_loss(denoise, noisy, seed, config)
    height, width = noisy.shape[0] // stride * stride, noisy.shape[1] // stride * stride
    losses = [self.held_out_view_loss(
        denoise, noisy[row:height:stride, column:width:stride],
        tf.cast(tf.random.experimental.stateless_fold_in(seed, row * stride + column), tf.int32),
        config)
              for row in range(stride) for column in range(stride)]
    return float(sum(losses) / len(losses))
