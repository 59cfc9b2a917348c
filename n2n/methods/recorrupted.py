"""Recorrupted-to-Recorrupted (R2R; Pang et al., CVPR 2021): Noise2Noise on two
recorruptions of one noisy image, input y + alpha * n and target y - n / alpha,
with n drawn afresh at every step with the noise's own covariance
(n2n/noise_model.py; the pipeline: n2n/pipelines/recorrupted.py).

Unlike the neighbour sub-images of Neighbor2Neighbor or a blind spot, nothing
assumes the noise independent between pixels: the noise model carries its
correlation up to lag 4, between channels and its level against the signal.
It comes from the diagnosis of the training data when training starts (from
two captures where the records hold them, else the single-image estimate) and
is kept in the run's config; a part of the
noise's covariance the model lacks stays shared between input and target, and
the network learns to keep that part.
"""

import dataclasses

from n2n.corruptions import catalog
from n2n import noise_model
from n2n.methods import base
from n2n.methods import single_image
from n2n.settings import setting

# --recorrupted_noise_model '': estimated from the training data when training starts.
CHOSEN_MODEL = ''
# --recorrupted_level_scale 0: chosen with the model (ESTIMATED_LEVEL_SCALE for one read
# from single images at start, 1 for one given or measured from two captures; a run's
# config.json from before the setting reads as 0, a given model, and keeps its scale of 1).
CHOSEN_SCALE = 0.0
# A model estimated from single images is drawn at this share of its level. A level read
# too high makes the target's noise anti-correlated with the input's (their covariance is
# the noise's minus the drawn noise's); one read too low leaves a small part shared, which
# the network keeps. The single-image estimate reads textured patches as noise and errs
# high in some signal bins (docs/bench/noise_model_levels_*_median.json); what 0.85 and 1
# gained (0.85 ahead on each of three seeds): docs/correlated_noise.md, "What recorruptions
# gain". That page also says why y is denoised as it is, with the 8 orientations, rather
# than as the mean over recorrupted inputs (the paper's inference): the orientations led.
ESTIMATED_LEVEL_SCALE = 0.85


def scaled(model, scale):
  """noise_model.NoiseModel model with its level (sigma) times scale."""
  return dataclasses.replace(model, sigma=model.sigma * scale)


def level_scale(settings, source):
  """The share of a model's level recorruptions are drawn at: settings.level_scale, or
  where it is CHOSEN_SCALE, ESTIMATED_LEVEL_SCALE for a model estimated from single
  images (source 'single', NoiseProfile.source) and 1 for any other (two captures'
  'pairs', or None: given by the user)."""
  if settings.level_scale != CHOSEN_SCALE:
    return settings.level_scale
  return ESTIMATED_LEVEL_SCALE if source == 'single' else 1.0


@dataclasses.dataclass(frozen=True)
class Settings:
  """--recorrupted_* flags."""
  alpha: float = setting(
      1.0, 'R2R\'s alpha: the network maps y + alpha * n to y - n / alpha (1: both as noisy; '
      'smaller: an input closer to the image, a noisier target).', minimum=0.05, maximum=20.0)
  noise_model: str = setting(
      CHOSEN_MODEL, 'The noise recorruptions are drawn from, as the JSON a run\'s config.json '
      'keeps (its correlation at lags up to 4, between channels and its level against the '
      'signal); empty: estimated from the training data when training starts.')
  level_scale: float = setting(
      CHOSEN_SCALE, 'The recorruptions are drawn at this share of the noise model\'s level '
      '(1: the model as it is); 0: chosen, 0.85 for a model read from single images at start '
      '(their estimate errs high, and a level too high costs more than one too low), 1 for one '
      'given or measured from two captures.', minimum=0.0, maximum=2.0)
  inference_orientations: int = setting(
      single_image.CHOSEN, 'Test-time augmentation inside the inference scheme: 8 averages it '
      'over the image\'s 8 flips and rotations (8 times the time, everywhere the model runs); '
      '1: off; 0: chosen (8 for spatially correlated noise, else 1).', minimum=0, maximum=8)


class Recorrupted(single_image.SingleImageMethod):
  name = 'recorrupted'
  summary = ('from single noisy images: the network maps the image plus noise drawn like its '
             'own to the image minus that noise (Recorrupted-to-Recorrupted), the noise '
             'model read from the training data.')
  settings_class = Settings
  flag_prefix = 'recorrupted_'
  volumes = False
  title = 'Recorrupted-to-Recorrupted (single noisy images)'
  citations = (('Pang et al. Recorrupted-to-Recorrupted: Unsupervised Deep Learning for Image '
                'Denoising. CVPR 2021.', '10.1109/CVPR46437.2021.00208'),)
  line_noise_advice = ('Its noise model reaches lag 4 only, not whole lines; --method=blind_spot '
                       'trains with a structN2V line chosen for it')
  noise_assumption = 'noise correlated over 4 pixels at most'

  def training_stride(self, config):
    return 1

  def assumes_independent_pixels(self, config):
    return False

  def inference_scheme(self, config):
    return base.InferenceScheme(
        orientations=max(1, self.settings(config).inference_orientations))

  def noise_advice(self, config, kind):
    return None if kind in ('independent', 'correlated') else self.line_noise_advice

  def defaults_for_noise(self, config, kind):
    if self.settings(config).inference_orientations != single_image.CHOSEN:
      return {}
    return {f'{self.flag_prefix}inference_orientations': 8 if kind == 'correlated' else 1}

  def defaults_for_profile(self, config, profile):
    settings = self.settings(config)
    if (settings.noise_model != CHOSEN_MODEL or profile is None
        or profile.samples < noise_model.MIN_SAMPLES):
      return {}
    model = noise_model.model_of_profile(profile)
    if model.sigma.shape[1] != config.data.channels:
      raise ValueError(f'--method={self.name}: the training data\'s noise was read with '
                       f'{model.sigma.shape[1]} channel(s), the data have '
                       f'{config.data.channels}')
    chosen = {f'{self.flag_prefix}noise_model': model.to_json()}
    if settings.level_scale == CHOSEN_SCALE:
      chosen[f'{self.flag_prefix}level_scale'] = level_scale(settings, profile.source)
    return chosen

  def check_resolved(self, config):
    model = self.noise_model(config)
    if model.sigma.shape[1] != config.data.channels:
      raise ValueError(f'--{self.flag_prefix}noise_model has {model.sigma.shape[1]} '
                       f'channel(s); the training data have {config.data.channels}')

  def recorruption_model(self, config):
    """The run's noise_model.NoiseModel at --recorrupted_level_scale of its level:
    what the recorruptions are drawn from."""
    # A model in the config at CHOSEN_SCALE was given (the start writes the scale it
    # chooses beside a model it reads).
    return scaled(self.noise_model(config), level_scale(self.settings(config), None))

  def noise_model(self, config):
    """The run's noise_model.NoiseModel; ValueError where it has none."""
    text = self.settings(config).noise_model
    if text == CHOSEN_MODEL:
      raise ValueError(f'--method={self.name} has no noise model: the training data\'s noise '
                       'was not diagnosed, or read from fewer than '
                       f'{noise_model.MIN_SAMPLES} pixels of flat patches (images clipped at black '
                       'or white, or textured everywhere); give --recorrupted_noise_model')
    return noise_model.NoiseModel.from_json(text, f'--{self.flag_prefix}noise_model')

  def check(self, config):
    self.check_single_image(config)
    settings = self.settings(config)
    if config.corruption.noise != catalog.NO_NOISE and settings.noise_model == CHOSEN_MODEL:
      raise ValueError(f'--method={self.name} draws its recorruptions like the noise of real '
                       f'captures, diagnosed when training starts (--noise=none); for '
                       f'--noise={config.corruption.noise} give --recorrupted_noise_model')
    if settings.noise_model != CHOSEN_MODEL:
      self.noise_model(config)  # refuses text that is no model
    self.check_crop(config)

METHOD = Recorrupted()
