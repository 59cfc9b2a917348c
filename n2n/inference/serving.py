"""What serving a trained run needs, resolved once from its configuration.

Validation, denoising and every export run a run's network alike: at its
spatial dimensions, on the values its normalisation rule makes of the pixels,
through its method's inference scheme, on inputs padded to what its pooling
needs. Serving holds those, and the facts about the run's training data that
denoising asks of each page (white level, dtype, noise correlation). It is
resolved where a network is loaded (restore.restore_model for a checkpoint,
exported_model.load_export for an export or a package) and handed down: the
per-page code and the export writers read it rather than asking the
configuration, the normalisation rules and the method registry again.
"""

import dataclasses

from n2n import config as config_lib
from n2n import shipped
from n2n.data import normalization
from n2n.methods import base as methods_base
from n2n.methods import registry as methods_registry
from n2n.model import unet


@dataclasses.dataclass(frozen=True)
class Serving:
  """A run as it is served.

  Attributes:
    run_config: the run's TrainConfig (what config.json records), or None for
      a bare network (without_run).
    spatial_dims: 2 (images) or 3 (volumes).
    channels: the network's channels, 1 or 3.
    rule: normalization.Rule: how pixels become network values.
    scheme: the method's methods_base.InferenceScheme.
    multiples: what each spatial axis of the network's input must be a
      multiple of: (32, 32), or (2**z_pools, 32, 32) for a 3D network.
    volume_depth: a 3D run's training crops' depth (tiles and packages are
      as deep), None in 2D.
    trained_as: one line: the method (and any non-default network) and the
      training data ('' without a run).
    citations: ((text, doi), ...) of the method's own papers.
    white_level: the training data's white level (what maps to 1.0 for
      pixels of data_dtype), or None: the dtype's full range.
    data_dtype: the training data's dtype name ('uint8', 'uint16', ...), or
      None without a run.
    noise_correlation: the lag-1 correlation of the noise the run trained on
      (config.training_noise_correlation), -1.0 where unknown.
    shipped_model: (name, shipped.ShippedModel) of a model n2n ships, whose
      data other images are refused (check_pixels), or None.
  """
  run_config: config_lib.TrainConfig
  spatial_dims: int
  channels: int
  rule: normalization.Rule
  scheme: methods_base.InferenceScheme
  multiples: tuple
  volume_depth: object
  trained_as: str
  citations: tuple
  white_level: object = None
  data_dtype: object = None
  noise_correlation: float = -1.0
  shipped_model: object = None

  @property
  def is_volume(self):
    """True for a run whose network is 3D (it denoises volumes [D, H, W, C])."""
    return self.spatial_dims == 3

  def white_level_for(self, dtype, override=0.0):
    """The value that maps to 1.0 for the network for pixels of dtype (a numpy
    dtype): override (--white_level) when not 0, for every file; else the run's
    white level when dtype is the training data's own (e.g. 4095 for 12-bit
    data in 16-bit files); else None (the dtype's full range)."""
    if override:
      return override
    if self.white_level is None or dtype.name != self.data_dtype:
      return None
    return self.white_level

  def check_pixels(self, pixels):
    """Raises ValueError (one line) where a shipped model is served and pixels (an
    image [H, W] or [H, W, C], or a volume [D, H, W] or [D, H, W, C] for a 3D run)
    are not of a pixel type and channel count it takes; other runs take any."""
    channels = pixels.shape[-1] if pixels.ndim == self.spatial_dims + 1 else 1
    self.check_pixel_type(pixels.dtype.name, channels)

  def check_pixel_type(self, pixel_type, channels):
    """check_pixels of images of pixel_type (a numpy dtype name) with `channels`
    channels, where the pixels are not read yet (an OME-Zarr's chunks)."""
    if self.shipped_model is None:
      return
    reason = shipped.refusal(*self.shipped_model, pixel_type, channels)
    if reason:
      raise ValueError(reason)

  def whole_image_tta(self, tta):
    """Whether asking for test-time augmentation (tta) adds passes over the
    whole image: not where the run's inference scheme already averages the 8
    orientations (the mean of those means is the same mean, at 8 times the time)."""
    return bool(tta) and self.scheme.orientations == 1


def of_run(run_config):
  """The Serving of a run's (data-resolved) TrainConfig."""
  method = methods_registry.get(run_config.method.name)
  spatial_dims = config_lib.model_spatial_dims(run_config)
  if spatial_dims == 3:
    multiples = (unet.depth_multiple(run_config.model.z_pools),) + (unet.SIZE_MULTIPLE,) * 2
  else:
    multiples = (unet.SIZE_MULTIPLE,) * 2
  return Serving(
      run_config, spatial_dims, config_lib.model_channels(run_config),
      normalization.rule_of(run_config), method.inference_scheme(run_config), multiples,
      run_config.data.crop_depth if spatial_dims == 3 else None,
      trained_as(run_config, method, spatial_dims), tuple(method.citations),
      white_level=run_config.data.white_level or None, data_dtype=run_config.data.dtype,
      noise_correlation=float(config_lib.training_noise_correlation(run_config)),
      shipped_model=shipped.of_run(run_config.run.model_dir))


def without_run(channels):
  """The Serving of a bare network of `channels` channels whose run is not
  known (a denoise function handed in by tests and benches, or a network
  evaluated without its config): 2D, as it is (the plain scheme), pixels
  mapped by the default rule (normalization.DEFAULT_RULE) at their dtype's
  full range, the training noise unknown."""
  return Serving(None, 2, channels, normalization.DEFAULT_RULE, methods_base.InferenceScheme(),
                 (unet.SIZE_MULTIPLE,) * 2, None, '', ())


def trained_as(run_config, method, spatial_dims):
  """'Neighbor2Neighbor (single noisy images), gaussian noise, level range 0-50':
  the method (and any non-default network) and the training data, one line."""
  kind = method.describe(run_config)
  model = run_config.model
  if (model.downsampling, model.top_skip) != ('max_pool', True):
    kind += (f'; network: {model.downsampling} downsampling, '
             f'{"with" if model.top_skip else "without"} the top skip connection')
  if model.network_width != config_lib.PAPER_NETWORK_WIDTH:
    kind += (f'; network width {model.network_width} '
             f'(the paper\'s {config_lib.PAPER_NETWORK_WIDTH})')
  if spatial_dims == 3 and model.xy_conv_levels:
    kind += (f'; 3D network with in-plane (1x3x3) convolutions at its finest '
             f'{model.xy_conv_levels} resolution levels')
  if run_config.corruption.noise == config_lib.NO_NOISE:
    trained_on = 'scenes of real noisy captures (no synthetic noise)'
  else:
    low, high = run_config.corruption.noise_range
    trained_on = f'{run_config.corruption.noise} noise, level range {low:g}-{high:g}'
  return f'{kind}, {trained_on}'
