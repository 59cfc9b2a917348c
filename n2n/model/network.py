"""The network a run's settings describe: unet.build_unet with its ModelConfig."""

from n2n import config as config_lib
from n2n.model import unet


def build_run_network(run_config, precision, **options):
  """The U-Net of a run, untrained.

  Args:
    run_config: config.TrainConfig (a run's config.json, or one about to train).
    precision: 'float32', 'mixed_bfloat16' or 'mixed_float16'.
    **options: what a run's settings leave open (unet.build_unet's seed,
      filter_gradient_mode, upsampling).

  Returns:
    keras.Model: unet.build_unet with the run's channels, downsampling, top
    skip, spatial dimensions, z pools, width and in-plane levels.
  """
  model = run_config.model
  return unet.build_unet(config_lib.model_channels(run_config), precision,
                         downsampling=model.downsampling, top_skip=model.top_skip,
                         spatial_dims=config_lib.model_spatial_dims(run_config),
                         z_pools=model.z_pools, width=model.network_width,
                         xy_conv_levels=model.xy_conv_levels, **options)
