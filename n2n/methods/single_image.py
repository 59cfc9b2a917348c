"""What the methods that train from one noisy capture of each scene share:
their refusals, fixed captures for synthetic noise, and pixel-shuffle
downsampling for noise correlated between neighbouring pixels (their pipeline,
noisy crops turned into the method's elements: n2n/pipelines/single_image.py).

Pixel-shuffle (Zhou et al. 2020; AP-BSN, Lee et al., CVPR 2022): with a
training stride s every crop becomes its s x s sub-images of every s-th pixel
(n2n/data/pixel_shuffle.py), in which noise correlated over fewer than s pixels
is nearly independent between neighbours, and the method trains on those. The
network then denoises whole images through the same rearrangement at the
inference stride (InferenceScheme), AP-BSN's asymmetric scheme when it is
smaller than the training stride: sub-images closer to the image keep more of
its detail, at the price of more of the noise's correlation.
"""

import dataclasses

from n2n.methods import base
from n2n.settings import setting

# Strides past 8 leave sub-images of a 512 crop too small for the U-Net's pooling.
MAX_STRIDE = 8
# Chosen from the diagnosis where the user gives no stride: 0 in the settings.
CHOSEN = 0


@dataclasses.dataclass(frozen=True)
class ShuffleSettings:
  """The pixel-shuffle strides every single-image method has (--<method>_stride...)."""
  stride: int = setting(
      CHOSEN, 'Pixel-shuffle stride of training: the network trains on the stride x stride '
      'sub-images of every crop (AP-BSN), in which noise correlated over fewer pixels is '
      'independent between neighbours. 1: off; 0: chosen from the diagnosis of the training '
      'data (1 for pixel-independent noise).', minimum=0, maximum=MAX_STRIDE)
  inference_stride: int = setting(
      CHOSEN, 'Pixel-shuffle stride at inference, usually smaller than the training stride '
      '(AP-BSN\'s asymmetric scheme keeps more detail). 1: off; 0: chosen with the training '
      'stride.', minimum=0, maximum=MAX_STRIDE)
  inference_orientations: int = setting(
      CHOSEN, 'Test-time augmentation inside the inference scheme: 8 averages it over the '
      'image\'s 8 flips and rotations (8 times the time, in denoise.py, n2n.Denoiser, '
      'validation and every export alike); 1: off; 0: chosen with the strides (8 for '
      'correlated noise in 2D, where it gained 0.16-0.35 dB in 8 of 8 runs on the calibrated '
      'camera simulator, one seed, docs/diagnosis.md; else 1).', minimum=0, maximum=8)
  refinement_passes: int = setting(
      0, 'Passes of AP-BSN\'s random-replacing refinement at inference, each the network at '
      'stride 1 on the denoised image with a share of its pixels put back to their noisy '
      'values, averaged (AP-BSN uses 8); 0: off.', minimum=0, maximum=16)


def stride_of(value):
  """A stride setting as the run uses it: one never chosen (0: a config from
  before the strides, or one not through train.py's preflight) is 1."""
  return max(1, value)


class SingleImageMethod(base.Method):
  """A method trained on single noisy images; subclasses give elements().

  In 3D (stacks of one acquisition, or each acquisition of a scene of stacks)
  the same elements() take [B, D, S, S, C] crops; pixel-shuffle strides are
  2D only.
  """
  single_image = True
  volumes = True
  # What describe() says the model was trained as, before the data.
  title = ''
  # Why training crops are multiples of crop_multiple, for the refusal.
  crop_note = 'the network\'s input must pass the U-Net\'s five poolings'

  def describe(self, config):
    return self.title

  # What train.py's start-up warning advises for noise shared by whole rows or
  # columns, which no pixel-shuffle stride separates.
  line_noise_advice = ('No stride separates noise shared by whole lines; --method=blind_spot '
                       'trains with a structN2V line chosen for it')
  # (training stride, inference stride) for spatially correlated noise, where
  # the diagnosis chooses them (n2n/diagnosis/report.py kinds 'correlated').
  correlated_strides = (1, 1)

  def training_stride(self, config):
    return stride_of(self.settings(config).stride)

  def examples_per_crop(self, config):
    return self.training_stride(config) ** 2

  def inference_scheme(self, config):
    settings = self.settings(config)
    return base.InferenceScheme(stride=stride_of(settings.inference_stride),
                                refinement_passes=settings.refinement_passes,
                                orientations=max(1, settings.inference_orientations))

  def noise_advice(self, config, kind):
    if kind == 'independent' or not self.assumes_independent_pixels(config):
      return None
    if kind != 'correlated':
      return self.line_noise_advice
    if self.correlated_strides[0] > 1:
      return (f'Leave --{self.flag_prefix}stride at 0 with crops a multiple of '
              f'{self.crop_multiple * self.correlated_strides[0]} to let the diagnosis choose '
              'pixel-shuffle strides')
    return ('--method=neighbor2neighbor trains through pixel-shuffle strides chosen for it '
            '(docs/correlated_noise.md)')

  def assumes_independent_pixels(self, config):
    """True when the run trains as if the noise were independent between
    neighbouring pixels (no scheme against correlated noise)."""
    return self.training_stride(config) == 1

  def crop_multiple_of(self, config):
    """Training crops must be a multiple of this: the sub-images of the stride
    must still be a multiple of crop_multiple."""
    return self.crop_multiple * self.training_stride(config)

  def defaults_for_noise(self, config, kind):
    settings = self.settings(config)
    chosen = {}
    three_d = config.model.spatial_dims == 3
    strides = self.correlated_strides if kind == 'correlated' and not three_d else (1, 1)
    # The largest training stride the crop allows, at most the chosen one.
    stride = next(value for value in range(strides[0], 0, -1)
                  if config.data.crop_size % (self.crop_multiple * value) == 0)
    if settings.stride == CHOSEN:
      chosen[f'{self.flag_prefix}stride'] = stride
    if settings.inference_stride == CHOSEN:
      chosen[f'{self.flag_prefix}inference_stride'] = min(
          strides[1], stride if settings.stride == CHOSEN else settings.stride)
    if settings.inference_orientations == CHOSEN:
      # On the calibrated camera simulator (bench/camera_calibration.py, issue 52) the
      # mean over the 8 orientations gained 0.16-0.35 dB for both methods on every set.
      chosen[f'{self.flag_prefix}inference_orientations'] = (
          8 if kind == 'correlated' and not three_d else 1)
    return chosen

  def resolve_captures(self, noise_captures):
    # One fixed capture per image, as a user with one noisy image has.
    return noise_captures or 1

  def check(self, config):
    self.check_single_image(config)
    settings = self.settings(config)
    if config.model.spatial_dims == 3:
      if settings.inference_orientations > 1:
        raise ValueError(f'--{self.flag_prefix}inference_orientations='
                         f'{settings.inference_orientations}: the inference scheme is 2D only; '
                         'leave it at 0 for --spatial_dims=3 (denoise.py --tta turns volumes)')
      for flag in ('stride', 'inference_stride'):
        if getattr(settings, flag) > 1:
          raise ValueError(f'--{self.flag_prefix}{flag}={getattr(settings, flag)}: pixel-shuffle '
                           'strides are 2D only; leave it at 0 for --spatial_dims=3')
      # The refinement wraps the network in a 2D inference scheme (schemes.py).
      passes = settings.refinement_passes
      if passes:
        raise ValueError(f'--{self.flag_prefix}refinement_passes={passes}: the refinement is 2D '
                         'only; leave it at 0 for --spatial_dims=3')
    self.check_crop(config)

  def check_single_image(self, config):
    """The refusals every single-image method shares: clean targets, a synthetic
    noise that needs a second copy, and an orientation count the scheme lacks."""
    if config.method.target == 'clean':
      raise ValueError(f'--target=clean trains on clean targets; --method={self.name} trains '
                       'from single noisy images (use --method=pairs for the clean baseline)')
    if config.corruption.noise == 'bernoulli':
      raise ValueError(f'--noise=bernoulli needs the target\'s kept-pixel mask, which '
                       f'--method={self.name} has no second copy to give')
    orientations = self.settings(config).inference_orientations
    if orientations not in (CHOSEN, 1, 8):
      raise ValueError(f'--{self.flag_prefix}inference_orientations={orientations}: 1 (off), '
                       '8 (every flip and rotation) or 0 (chosen)')

  def check_crop(self, config):
    """Refuses a crop the training stride's sub-images cannot pass the U-Net with."""
    multiple = self.crop_multiple_of(config)
    if config.data.crop_size % multiple:
      stride = self.training_stride(config)
      shuffled = (f' with --{self.flag_prefix}stride={stride} (sub-images of 1/{stride} the crop)'
                  if stride > 1 else '')
      raise ValueError(f'--crop_size={config.data.crop_size}: --method={self.name}{shuffled} '
                       f'needs a multiple of {multiple}: {self.crop_note}')
