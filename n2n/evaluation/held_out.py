"""A score without any clean image or second capture: the single-image method's
own loss on held-out noisy images.

Training from single noisy images (--method=neighbor2neighbor|blind_spot)
often has no reference to compute PSNR against. The method's own loss,
computed on noisy images the network never trained on, still ranks
checkpoints: under the methods' assumptions (noise independent between
neighbouring pixels, zero-mean) its expectation is the true error of the
prediction plus a constant (the noise variance), as for the noisy-target error
of scenes (scoring.evaluate_scenes).

- neighbor2neighbor: the reconstruction term on the whole image, the network's
  output on one neighbour sub-image against the other (the regulariser is left
  out: it compares the network with itself, not with the data).
- blind_spot: masked pixels replaced by their neighbourhood median, the whole
  image denoised, the squared error at the masked pixels (1% of the pixels,
  more than in training).

Each method defines its loss (held_out_loss in n2n/pipelines/); this module
gives it the fixed draws of every image.

Each is the method's own loss, so it judges what the method trains: the
network on half-resolution sub-images (Neighbor2Neighbor), a blind-spot
network's prediction of pixels it cannot see (blind-spot; a network that sees
the pixel is not scored fairly by it). bench/reference_free_correlation.py measures
how well it tracks the true PSNR over a training run.

Positions and masks are a pure function of (seed, image index), so every
checkpoint is scored on the same draws and differences between checkpoints are
the network's.
"""

import tensorflow as tf

from n2n.methods import registry as methods_registry
from n2n.pipelines import registry as pipelines

# Mixed into the held-out seeds, so they differ from the evaluation noise's.
_HELD_OUT_KEY = 0x4E1D


def held_out_seed(seed, index):
  """The [2] int32 seed of one held-out image's positions or mask."""
  return tf.cast(tf.random.experimental.stateless_fold_in(
      tf.constant([seed, _HELD_OUT_KEY], tf.int64), index), tf.int32)


def make_held_out_loss(method_name, denoise, seed, run_config=None):
  """fn(noisy [H, W, C] float32, image index) -> float: the method's held-out
  loss on the [0, 1] scale; None for a method with references to score
  against (--method=pairs has its own scores).

  Args:
    denoise: the network as it trains, without its inference scheme
      (a pixel-shuffle run's held-out loss is taken on sub-images, as it trains).
    run_config: the run's TrainConfig (its strides and masks), or None for the
      method's defaults.
  """
  if not methods_registry.get(method_name).single_image:
    return None
  pipeline = pipelines.get(method_name)
  return lambda noisy, index: pipeline.held_out_loss(denoise, noisy, held_out_seed(seed, index),
                                                     run_config)
