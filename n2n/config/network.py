"""The network's settings: what defines its weights, and the paper's sizes."""

import dataclasses

from n2n.config.data import CLEAN_IMAGE_CHANNELS
from n2n.settings import check_settings
from n2n.settings import from_dict
from n2n.settings import setting

# Channels of the U-Net's encoder convolutions in the paper (appendix A.1): the default
# --network_width.
PAPER_NETWORK_WIDTH = 48

# The paper's U-Net pools five times, so it works at six resolution levels (the
# input's and one after each pooling stage): the bounds of --z_pools and
# --xy_conv_levels, and n2n/model/unet.py's STAGES and LEVELS.
POOLING_STAGES = 5
RESOLUTION_LEVELS = POOLING_STAGES + 1


@dataclasses.dataclass(frozen=True)
class ModelConfig:
  """What defines the network's weights; a model_dir never changes these."""
  architecture: str = 'n2n_unet'
  channels: int = setting(0, 'Image channels: 3 (RGB) or 1 (grayscale, luma). 0: as the '
                          'training data (RGB for clean-image datasets, the captures\' channels '
                          'for scene datasets); a value converts the data to it.', minimum=0,
                          maximum=3)

  downsampling: str = setting(
      'max_pool', "The U-Net's 2x downsampling. max_pool: the paper's; max_blur_pool: N2V2's "
      '(a stride-1 max, then a binomial blur at every second pixel), against checkerboard '
      'artefacts in blind-spot training.', choices=('max_pool', 'max_blur_pool'))
  top_skip: bool = setting(True, 'Concatenate the input before the last convolutions (the '
                           'paper). N2V2 leaves it out for blind-spot training, so the output '
                           'cannot copy the noisy input.')
  network_width: int = setting(PAPER_NETWORK_WIDTH, "Channels of the U-Net's encoder "
                               "convolutions: 48 is the paper's. The convolutions after it keep "
                               "the paper's ratios to it (decoder 2x, the two before the output "
                               '4/3 and 2/3, rounded), so they cost about the square of the '
                               'width: a training step at 24 took 2.9-4.0x less time than at 48 '
                               'on a 2-core CPU (docs/performance.md), with a quarter of the '
                               'weights.', minimum=1)
  spatial_dims: int = setting(0, '2: the image U-Net; 3: the same U-Net with 3x3x3 '
                              'convolutions, for volumes and movies (time as depth). 0: as the '
                              'training data (3 for datasets of TIFF stacks).', minimum=0,
                              maximum=3)
  z_pools: int = setting(3, '3D only: how many of the five pooling stages (the last ones) also '
                         'pool z; the first ones pool only y and x, so anisotropic data (z steps '
                         'coarser than xy pixels) reach even voxels first and thin crops pass '
                         'every stage. 3 suits z steps about 4x the pixel size (CARE pools z '
                         'less on anisotropic data too). Crop depths are multiples of '
                         '2**z_pools.', minimum=0, maximum=POOLING_STAGES)
  xy_conv_levels: int = setting(0, '3D only: the convolutions at the finest N of the '
                                "network's six resolution levels (the input's and one after "
                                'each pooling stage) convolve in y and x only (1x3x3 kernels); '
                                'the coarser levels convolve in z too. The finest levels hold '
                                "most of the network's work and a 3x3x3 kernel has three times "
                                'the taps of a 3x3 one, so a step costs less while the planes '
                                'still inform each other (docs/volumes.md). 0: every '
                                'convolution 3x3x3.', minimum=0,
                                maximum=RESOLUTION_LEVELS)

  def __post_init__(self):
    check_settings(self)
    if self.spatial_dims == 1:
      raise ValueError('--spatial_dims=1 must be 2 or 3 (0: as the training data)')
    if self.channels == 2:
      raise ValueError(f'--channels={self.channels} must be 1 or 3')


def model_channels(config):
  """The network's channel count; an unresolved 0 means clean-image data (RGB)."""
  return config.model.channels or CLEAN_IMAGE_CHANNELS


def model_spatial_dims(config_or_model):
  """2 or 3: the network's spatial dimensions (a TrainConfig or a ModelConfig);
  an unresolved 0 means 2 (every run from before 3D existed)."""
  model = getattr(config_or_model, 'model', config_or_model)
  return model.spatial_dims or 2


def model_config_from_dict(config_dict):
  """Reads the network part of a config.json dict; ValueError if it is missing."""
  model = config_dict.get('model')
  if not isinstance(model, dict):
    raise ValueError('config.json has no "model" section')
  return from_dict(ModelConfig, model)


def _effective_model(model):
  """model with what builds the same network written alike: spatial_dims 0
  (runs from before 3D) as 2, and z_pools and xy_conv_levels, which 2D
  networks do not have (preflight and build_unet refuse in-plane levels for
  them), as 0."""
  spatial_dims = model_spatial_dims(model)
  three_d = spatial_dims == 3
  return dataclasses.replace(model, spatial_dims=spatial_dims,
                             z_pools=model.z_pools if three_d else 0,
                             xy_conv_levels=model.xy_conv_levels if three_d else 0)


def differing_model_fields(saved, requested):
  """Names of ModelConfig fields that differ, as 'field: saved -> requested'."""
  saved, requested = _effective_model(saved), _effective_model(requested)
  return [
      f'{field.name}: {getattr(saved, field.name)!r} -> {getattr(requested, field.name)!r}'
      for field in dataclasses.fields(ModelConfig)
      if getattr(saved, field.name) != getattr(requested, field.name)
  ]
