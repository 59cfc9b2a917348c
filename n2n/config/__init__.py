"""Every setting of n2n, declared once: type, default, unit and range, help text.

The absl flags of every entry point (n2n/config_flags.py) and the checks of every
value are derived from the field declarations (machinery in n2n/settings.py),
so a new setting is one `setting(...)` line plus its use. Library code takes
these frozen objects (or plain values), never absl FLAGS. Checks raise
ValueError naming the flag and the offending value. Nothing here imports
TensorFlow, so reading a config.json costs nothing.

A training run's settings are in sections, one module each, while its flags
stay flat (--crop_size is config.data.crop_size):
  data.py        DataConfig, AugmentConfig: what it trains on, pixels to values
  corruption.py  CorruptionConfig: the synthetic noise, or none
  method.py      MethodConfig: the method, its target and loss, each method's
                 settings (declared in n2n/methods/)
  network.py     ModelConfig: the network's weights, and the paper's sizes
  run.py         OptimisationConfig, EvaluationConfig, RunConfig
  train.py       TrainConfig: the sections together, resolved(), from flags or JSON
  derive.py      what a run derives from its data before training
  legacy.py      where earlier config.json layouts held what moved
The other programs' settings: denoise.py (DenoiseConfig, volume tiles),
programs.py (ValidateConfig, ExportConfig, DiagnoseConfig).

This package's names are those of its modules, gathered here: callers write
config_lib.TrainConfig whichever module declares it.
"""

from n2n.config.corruption import CorruptionConfig
from n2n.config.corruption import NO_NOISE
from n2n.config.corruption import NOISES
from n2n.config.data import AugmentConfig
from n2n.config.data import CACHE_MODES
from n2n.config.data import CLEAN_IMAGE_CHANNELS
from n2n.config.data import DataConfig
from n2n.config.data import NORMALIZATIONS
from n2n.config.denoise import AUTO_VOLUME_OVERLAP_XY
from n2n.config.denoise import DenoiseConfig
from n2n.config.denoise import default_volume_tiling
from n2n.config.denoise import volume_tiling
from n2n.config.derive import resolve_data
from n2n.config.derive import training_noise_correlation
from n2n.config.derive import with_noise_correlation
from n2n.config.derive import with_settings_for_noise
from n2n.config.method import LOSSES
from n2n.config.method import METHODS
from n2n.config.method import MethodConfig
from n2n.config.method import TARGETS
from n2n.config.network import ModelConfig
from n2n.config.network import PAPER_NETWORK_WIDTH
from n2n.config.network import POOLING_STAGES
from n2n.config.network import RESOLUTION_LEVELS
from n2n.config.network import differing_model_fields
from n2n.config.network import model_channels
from n2n.config.network import model_config_from_dict
from n2n.config.network import model_spatial_dims
from n2n.config.programs import DiagnoseConfig
from n2n.config.programs import ExportConfig
from n2n.config.programs import ValidateConfig
from n2n.config.run import EvaluationConfig
from n2n.config.run import OptimisationConfig
from n2n.config.run import PRECISIONS
from n2n.config.run import RunConfig
from n2n.config.run import STRATEGIES
from n2n.config.train import TrainConfig
from n2n.config.train import flag_value
from n2n.config.train import peak_learning_rate
from n2n.config.train import read_train_config
from n2n.config.train import replace_settings
from n2n.config.train import resolved_summary
from n2n.config.train import train_config

__all__ = [
    'AUTO_VOLUME_OVERLAP_XY',
    'AugmentConfig',
    'CACHE_MODES',
    'CLEAN_IMAGE_CHANNELS',
    'CorruptionConfig',
    'DataConfig',
    'DenoiseConfig',
    'DiagnoseConfig',
    'EvaluationConfig',
    'ExportConfig',
    'LOSSES',
    'METHODS',
    'MethodConfig',
    'ModelConfig',
    'NOISES',
    'NORMALIZATIONS',
    'NO_NOISE',
    'OptimisationConfig',
    'PAPER_NETWORK_WIDTH',
    'POOLING_STAGES',
    'PRECISIONS',
    'RESOLUTION_LEVELS',
    'RunConfig',
    'STRATEGIES',
    'TARGETS',
    'TrainConfig',
    'ValidateConfig',
    'default_volume_tiling',
    'differing_model_fields',
    'flag_value',
    'model_channels',
    'model_config_from_dict',
    'model_spatial_dims',
    'peak_learning_rate',
    'read_train_config',
    'replace_settings',
    'resolve_data',
    'resolved_summary',
    'train_config',
    'training_noise_correlation',
    'volume_tiling',
    'with_noise_correlation',
    'with_settings_for_noise',
]
