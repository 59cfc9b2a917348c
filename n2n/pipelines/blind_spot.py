"""Blind-spot training's tensors (n2n/methods/blind_spot.py): masked pixels
replaced by their neighbourhood's median (with structN2V lines), and the
held-out loss at masked pixels."""

import numpy as np
import tensorflow as tf

from n2n.data import single_image_pairs
from n2n.methods import blind_spot
from n2n.pipelines import single_image

# Held-out images mask more pixels than training does: one pass over an image
# then gives thousands of terms, and the masks stay sparse enough that a median
# almost never includes another masked pixel.
HELD_OUT_MASK_FRACTION = 0.01


class BlindSpotPipeline(single_image.SingleImagePipeline):
  method = blind_spot.METHOD

  def elements(self, noisy, seed, config):
    settings = self.method.settings(config)
    return single_image_pairs.blind_spot_pair(noisy, settings.fraction, seed,
                                              blind_spot.line_of(settings),
                                              blind_spot.line_span_of(settings))

  def held_out_view_loss(self, denoise, noisy, seed, config=None,
                         fraction=HELD_OUT_MASK_FRACTION):
    """Mean squared error at masked pixels of the denoised masked image (a
    blind-spot network's prediction of pixels it cannot see), with the run's
    structN2V lines."""
    settings = self.method.settings(config) if config else blind_spot.Settings()
    pair = single_image_pairs.blind_spot_pair(tf.constant(noisy[np.newaxis], tf.float32),
                                              fraction, seed, blind_spot.line_of(settings),
                                              blind_spot.line_span_of(settings))
    mask = pair['target_mask'][0].numpy()
    error = np.square(denoise(pair['input'][0].numpy()) - noisy) * mask
    return float(error.sum() / (mask.sum() * noisy.shape[-1]))


PIPELINE = BlindSpotPipeline()
