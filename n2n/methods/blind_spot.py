"""Blind-spot training (Noise2Void, Krull et al., CVPR 2019, with N2V2's
replacement, Hoeck et al. 2022): a small fraction of pixels is replaced by the
median of its 5x5 neighbourhood without the pixel itself
(n2n/data/single_image_pairs.py), and the loss is taken at those pixels only
(masked L2), so the network cannot learn the identity.

For spatially correlated noise: pixel-shuffle strides (AP-BSN, with its
random-replacing refinement at inference; n2n/methods/single_image.py) for
noise correlated over a few pixels, structN2V lines (Broaddus et al., ISBI
2020) for noise correlated along rows or columns.

N2V2's network (--downsampling=max_blur_pool --notop_skip) avoids its
checkerboard artefacts; it is the user's choice, not forced.
"""

import dataclasses

from n2n import noise_kinds
from n2n.methods import single_image
from n2n.settings import setting

# The loss at the masked pixels only; the only loss blind-spot training takes.
MASKED_LOSS = 'masked_l2'
# structN2V lines ('rows' and 'columns' last); 'auto' is chosen from the
# diagnosis of the training data.
LINE_AXES = ('auto', 'none', 'rows', 'columns')
# --blind_spot_line_span 0: chosen with the line, this long where the crop allows.
CHOSEN_SPAN = 0
LONGEST_CHOSEN_SPAN = 63


@dataclasses.dataclass(frozen=True)
class Settings(single_image.ShuffleSettings):
  """--blind_spot_* flags."""
  fraction: float = setting(
      0.002, 'Blind-spot: share of pixels masked per crop, 0-0.5 (Noise2Void masks 0.198%).',
      minimum=1e-6, maximum=0.5)
  line: str = setting(
      'auto', 'Blind-spot: structN2V mask line through each masked pixel, for noise '
      'correlated along rows or columns (sCMOS line noise); auto: chosen from the diagnosis '
      'of the training data (none for other noise).', choices=LINE_AXES)
  line_span: int = setting(
      CHOSEN_SPAN, 'Blind-spot: length of the structN2V line in pixels, odd (CAREamics\' '
      'default is 5); 0: chosen with the line, 63 or the crop less one if shorter (noise '
      'correlated along whole rows needs a line as long as the network sees).',
      minimum=0, maximum=1023)

  def __post_init__(self):
    if self.line_span and self.line_span % 2 == 0:
      raise ValueError(f'--blind_spot_line_span={self.line_span} must be odd (the masked pixel '
                       'is its centre)')


def chosen_span(crop_size):
  """The line span chosen where none is given: LONGEST_CHOSEN_SPAN, or the
  longest odd span inside the crop."""
  return min(LONGEST_CHOSEN_SPAN, crop_size - 1 if crop_size % 2 == 0 else crop_size)


def line_span_of(settings):
  """The span as the run uses it: an unchosen 0 (a config from before the
  spans were chosen) is CAREamics' 5."""
  return settings.line_span or 5


def line_of(settings):
  """The structN2V line axis as the run uses it: None for 'none' and an
  unchosen 'auto' (a config from before the lines)."""
  return settings.line if settings.line in LINE_AXES[2:] else None


class BlindSpot(single_image.SingleImageMethod):
  name = 'blind_spot'
  summary = ('from single noisy images: masked pixels predicted from their neighbourhood '
             '(Noise2Void, N2V2), as neighbor2neighbor from fixed captures or scenes.')
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

  # Training stride 4, inference 1 on correlated noise: on the results page's
  # camera simulator (docs/results.md, 1200 steps) it gained +1.68 dB over the
  # input on the photographs trained on where the plain method gained +0.00
  # (with JPEG +1.10 against +0.58). At 600 steps (docs/bench/correlated_schemes.md)
  # the plain method was ahead by 0.5 dB: the longer it trains, the more of the
  # correlated noise it learns to keep. Inference at 2 (AP-BSN's) and the
  # refinement lost there, so neither is chosen.
  correlated_strides = (4, 1)
  line_noise_advice = ('Leave --blind_spot_line at auto to let the diagnosis choose a structN2V '
                       'line along the noise')

  def assumes_independent_pixels(self, config):
    return super().assumes_independent_pixels(config) and line_of(self.settings(config)) is None

  def defaults_for_noise(self, config, kind):
    chosen = super().defaults_for_noise(config, kind)
    settings = self.settings(config)
    if settings.line == 'auto':
      # The line diagnose.py recommends for line noise (one per masked pixel:
      # noise along rows and columns gets the rows', the column noise stays).
      chosen['blind_spot_line'] = noise_kinds.LINE_MASKS.get(kind, 'none')
    line = chosen.get('blind_spot_line', settings.line)
    if settings.line_span == CHOSEN_SPAN and line in LINE_AXES[2:]:
      chosen['blind_spot_line_span'] = chosen_span(config.data.crop_size)
    return chosen


METHOD = BlindSpot()
