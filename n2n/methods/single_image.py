"""What the methods that train from one noisy capture of each scene share:
their refusals, fixed captures for synthetic noise, and their pipeline (noisy
crops, n2n/data/noisy_crops.py, turned into the method's elements)."""

import abc

from n2n.methods import base


class SingleImageMethod(base.Method):
  """A method trained on single noisy images; subclasses give elements()."""
  single_image = True
  # What describe() says the model was trained as, before the data.
  title = ''

  def describe(self, config):
    return self.title

  def resolve_captures(self, noise_captures):
    # One fixed capture per image, as a user with one noisy image has.
    return noise_captures or 1

  def check(self, config):
    if config.method.target == 'clean':
      raise ValueError(f'--target=clean trains on clean targets; --method={self.name} trains '
                       'from single noisy images (use --method=pairs for the clean baseline)')
    if config.corruption.noise == 'bernoulli':
      raise ValueError(f'--noise=bernoulli needs the target\'s kept-pixel mask, which '
                       f'--method={self.name} has no second copy to give')

  @abc.abstractmethod
  def elements(self, noisy, seed, config):
    """One batch's training element: noisy [B, S, S, C] float32 crops, seed [2]
    int32 (per batch) -> dict with 'input' and 'target' at least."""

  def build_dataset(self, config, per_replica_batch, cache, start_step, input_context):
    # pylint: disable=g-import-not-at-top  (tensor code; see n2n/methods/base.py)
    from n2n.data import noisy_crops
    crops = noisy_crops.build_noisy_crops_dataset(config, per_replica_batch, cache, start_step,
                                                  input_context)
    pipeline_id = input_context.input_pipeline_id if input_context else 0
    seed = noisy_crops.stream_seeds(config, pipeline_id, start_step)[noisy_crops.METHOD_STREAM]
    return self.elements_dataset(crops, seed, config)

  def elements_dataset(self, noisy_batches, seed, config):
    """tf.data.Dataset of [B, S, S, C] float32 noisy crops -> of elements().

    seed: [2] int64 stateless seed of the pipeline and resume step; every batch
    folds its index in, so draws differ per image and per step and repeat
    exactly for the same seed.
    """
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    def element(index, noisy):
      batch_seed = tf.cast(tf.random.experimental.stateless_fold_in(seed, index), tf.int32)
      return self.elements(noisy, batch_seed, config)

    return noisy_batches.enumerate().map(element, num_parallel_calls=tf.data.AUTOTUNE).prefetch(
        tf.data.AUTOTUNE)
