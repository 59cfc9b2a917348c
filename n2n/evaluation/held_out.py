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
  image denoised, the squared error at the masked pixels. HELD_OUT_MASK_FRACTION
  of the pixels, more than in training: one pass over an image then gives
  thousands of terms, and the masks stay sparse enough that a median almost
  never includes another masked pixel.

Each is the method's own loss, so it judges what the method trains: the
network on half-resolution sub-images (Neighbor2Neighbor), a blind-spot
network's prediction of pixels it cannot see (blind-spot; a network that sees
the pixel is not scored fairly by it). bench/held_out_correlation.py measures
how well it tracks the true PSNR over a training run.

Positions and masks are a pure function of (seed, image index), so every
checkpoint is scored on the same draws and differences between checkpoints are
the network's.
"""

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import single_image_pairs

HELD_OUT_MASK_FRACTION = 0.01
# Mixed into the held-out seeds, so they differ from the evaluation noise's.
_HELD_OUT_KEY = 0x4E1D


def held_out_seed(seed, index):
  """The [2] int32 seed of one held-out image's positions or mask."""
  return tf.cast(tf.random.experimental.stateless_fold_in(
      tf.constant([seed, _HELD_OUT_KEY], tf.int64), index), tf.int32)


def neighbor2neighbor_loss(denoise, noisy, seed):
  """Mean squared error of f(g1(y)) against g2(y) on the whole image.

  Args:
    denoise: fn([h, w, C] float32) -> [h, w, C] float32, any size.
    noisy: [H, W, C] float32 (H, W >= 2; an odd last row or column is dropped).
    seed: [2] int32.
  """
  even = single_image_pairs.even_crop(tf.constant(noisy[np.newaxis], tf.float32))
  positions = single_image_pairs.neighbour_positions(1, even.shape[1], even.shape[2], seed)
  first = single_image_pairs.subsample(even, positions[..., 0])[0].numpy()
  second = single_image_pairs.subsample(even, positions[..., 1])[0].numpy()
  return float(np.mean(np.square(denoise(first) - second)))


def blind_spot_loss(denoise, noisy, seed, fraction=HELD_OUT_MASK_FRACTION):
  """Mean squared error at masked pixels of the denoised masked image.

  Args: as neighbor2neighbor_loss; fraction: the share of pixels masked.
  """
  pair = single_image_pairs.blind_spot_pair(tf.constant(noisy[np.newaxis], tf.float32),
                                            fraction, seed)
  mask = pair['target_mask'][0].numpy()
  error = np.square(denoise(pair['input'][0].numpy()) - noisy) * mask
  return float(error.sum() / (mask.sum() * noisy.shape[-1]))


def make_held_out_loss(method, denoise, seed):
  """fn(noisy [H, W, C] float32, image index) -> float: the method's held-out
  loss on the [0, 1] scale; None for --method=pairs (which has its own scores)."""
  if method not in config_lib.SINGLE_IMAGE_METHODS:
    return None
  loss = neighbor2neighbor_loss if method == 'neighbor2neighbor' else blind_spot_loss
  return lambda noisy, index: loss(denoise, noisy, held_out_seed(seed, index))
