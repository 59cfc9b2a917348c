"""What the trainer and evaluation ask of a method's pipeline."""

import abc


class Pipeline(abc.ABC):
  """A method's tensors. Subclasses set method and override what differs.

  Attributes:
    method: the method's declaration (a n2n/methods/ base.Method).
  """
  method = None

  @abc.abstractmethod
  def build_dataset(self, config, per_replica_batch, cache, start_step, input_context):
    """The training tf.data.Dataset of one input pipeline: dicts with 'input',
    'target' ([B, S, S, C] float32) and optionally 'target_mask' and whatever
    regulariser() reads.

    Args:
      config: config.TrainConfig (data resolved).
      per_replica_batch: crops per batch of this pipeline.
      cache: keep the decoded training data in memory.
      start_step: the step training resumes at (keys the random streams).
      input_context: tf.distribute.InputContext, or None for one pipeline.
    """

  def regulariser(self, config):
    """None, or fn(prediction, batch, predict_without_gradient, step_fraction) ->
    [B] float32 added to the per-example loss; predict_without_gradient(images)
    runs the network outside the gradient tape."""
    return None

  def held_out_loss(self, denoise, noisy, seed, config=None):
    """The method's own loss on a held-out noisy image (a score without any
    reference), or None for methods that have references to score against.

    Args:
      denoise: fn([h, w, C] float32) -> [h, w, C] float32, any size: the
        network as it trains (without the InferenceScheme).
      noisy: [H, W, C] float32 on the network's scale.
      seed: [2] int32 tensor, fixed per image.
      config: the run's TrainConfig (its method's settings), or None for the
        method's defaults.
    """
    return None
