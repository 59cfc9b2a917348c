"""What a run derives from its data before it trains: the data's format, the
noise's correlation, and the method's settings chosen for that noise."""

import dataclasses

from n2n import settings as settings_lib
from n2n.config.corruption import NO_NOISE
from n2n.corruptions import catalog
from n2n.methods import registry as methods_registry

def resolve_data(config, data_channels, data_dtype, white_level, data_spatial_dims=2):
  """config with what the training data decides: the model's channels and
  spatial dimensions (where --channels and --spatial_dims are 0), the data's
  channels, pixel type, white level and spatial dimensions."""
  model = dataclasses.replace(config.model, channels=config.model.channels or data_channels,
                              spatial_dims=config.model.spatial_dims or int(data_spatial_dims))
  data = dataclasses.replace(config.data, channels=int(data_channels), dtype=data_dtype,
                             white_level=float(white_level), spatial_dims=int(data_spatial_dims))
  return dataclasses.replace(config, model=model, data=data)


def with_noise_correlation(config, correlation):
  """config with data.noise_correlation (see DataConfig) set, rounded to 0.01;
  a measured correlation below 0 (independent noise reads -0.01 to -0.05
  sometimes) is recorded as 0, so that only -1 means unknown."""
  value = -1.0 if correlation == -1.0 else max(float(correlation), 0.0)
  return dataclasses.replace(config, data=dataclasses.replace(
      config.data, noise_correlation=round(value, 2)))


def with_settings_for_noise(config, kind, profile=None):
  """(config with the settings its method leaves to the diagnosis (a stride
  of 0, a line of auto, a noise model) set for noise of kind, {flag: value}
  of those set).

  kind: n2n/diagnosis/report.py's kind of the training data's noise
  ('independent' for pixel-independent synthetic noise).
  profile: the diagnosis's NoiseProfile, or None.
  """
  method = methods_registry.get(config.method.name)
  chosen = {**method.defaults_for_noise(config, kind),
            **method.defaults_for_profile(config, profile)}
  if not chosen:
    return config, {}
  return settings_lib.with_flag_values(config, chosen), chosen


def training_noise_correlation(config):
  """The lag-1 correlation of the noise the run trained on: what it recorded
  (data.noise_correlation), else 0 for pixel-independent synthetic noise (runs
  from before it was recorded knew that too), else -1 (unknown)."""
  if config.data.noise_correlation >= 0:
    return config.data.noise_correlation
  noise = config.corruption.noise
  if noise != NO_NOISE and catalog.get_spec(noise).pixel_independent:
    return 0.0
  return -1.0
