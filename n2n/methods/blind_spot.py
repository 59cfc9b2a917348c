"""Blind-spot training (Noise2Void, Krull et al., CVPR 2019, with N2V2's
replacement, Hoeck et al. 2022): a small fraction of pixels is replaced by the
median of its 5x5 neighbourhood without the pixel itself
(n2n/data/single_image_pairs.py), and the loss is taken at those pixels only
(masked L2), so the network cannot learn the identity.

N2V2's network (--downsampling=max_blur_pool --notop_skip) avoids its
checkerboard artefacts; it is the user's choice, not forced.
"""

import dataclasses

from n2n.methods import single_image
from n2n.settings import setting

# The loss at the masked pixels only; the only loss blind-spot training takes.
MASKED_LOSS = 'masked_l2'
# Held-out images mask more pixels than training does: one pass over an image
# then gives thousands of terms, and the masks stay sparse enough that a median
# almost never includes another masked pixel.
HELD_OUT_MASK_FRACTION = 0.01


@dataclasses.dataclass(frozen=True)
class Settings:
  """--blind_spot_* flags."""
  fraction: float = setting(
      0.002, 'Blind-spot: share of pixels masked per crop, 0-0.5 (Noise2Void masks 0.198%).',
      minimum=1e-6, maximum=0.5)


class BlindSpot(single_image.SingleImageMethod):
  name = 'blind_spot'
  settings_class = Settings
  flag_prefix = 'blind_spot_'
  title = 'blind-spot (single noisy images)'
  masks_targets = True
  network_note = '--downsampling=max_blur_pool --notop_skip (N2V2)'
  citations = (
      ('Krull et al. Noise2Void - Learning Denoising from Single Noisy Images. CVPR 2019.',
       '10.48550/arXiv.1811.10980'),
      ('Hoeck et al. N2V2 - Fixing Noise2Void Checkerboard Artifacts with Modified Sampling '
       'Strategies and a Tweaked Network Architecture. 2022.', '10.48550/arXiv.2211.08512'))

  def resolve_loss(self, loss, noise_loss):
    if loss not in ('auto', MASKED_LOSS):
      raise ValueError(f'--loss={loss}: --method=blind_spot takes the loss at the masked pixels '
                       f'only ({MASKED_LOSS}; leave --loss at auto)')
    return MASKED_LOSS

  def elements(self, noisy, seed, config):
    from n2n.data import single_image_pairs  # pylint: disable=g-import-not-at-top
    return single_image_pairs.blind_spot_pair(noisy, self.settings(config).fraction, seed)

  def held_out_loss(self, denoise, noisy, seed, fraction=HELD_OUT_MASK_FRACTION):
    """Mean squared error at masked pixels of the denoised masked image (a
    blind-spot network's prediction of pixels it cannot see)."""
    # pylint: disable=g-import-not-at-top  (see n2n/methods/base.py)
    import numpy as np
    import tensorflow as tf
    from n2n.data import single_image_pairs
    pair = single_image_pairs.blind_spot_pair(tf.constant(noisy[np.newaxis], tf.float32),
                                              fraction, seed)
    mask = pair['target_mask'][0].numpy()
    error = np.square(denoise(pair['input'][0].numpy()) - noisy) * mask
    return float(error.sum() / (mask.sum() * noisy.shape[-1]))


METHOD = BlindSpot()
