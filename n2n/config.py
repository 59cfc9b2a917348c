"""Small frozen configuration objects with value checks.

Library code takes these (or plain values), never absl FLAGS. Checks raise
ValueError with the flag name and the offending value in the message.
"""

import dataclasses
import json

from n2n.corruptions import noise as noise_lib

PRECISIONS = ('auto', 'float32', 'mixed_bfloat16', 'mixed_float16')
STRATEGIES = ('auto', 'default', 'mirrored', 'multi_worker', 'tpu')
TARGETS = ('noisy', 'clean')
LOSSES = ('l2', 'l1', 'annealed_l0', 'masked_l2')
CACHE_MODES = ('auto', 'true', 'false')


@dataclasses.dataclass(frozen=True)
class ModelConfig:
  """What defines the network's weights; a model_dir never changes these."""
  architecture: str = 'n2n_unet'
  channels: int = 3


@dataclasses.dataclass(frozen=True)
class AugmentConfig:
  """Augmentations of the clean crop, applied before it is corrupted.

  They keep Noise2Noise valid because input and target are corrupted after
  the same augmented clean crop is drawn.
  """
  flips: bool = True
  rotations: bool = True
  channel_permutations: bool = True


@dataclasses.dataclass(frozen=True)
class TrainConfig:
  """The resolved configuration of one training run (written to config.json)."""
  train_data: str
  val_data: str
  model_dir: str
  train_images_dir: str = ''
  noise: str = 'gaussian'
  noise_range: tuple = ()  # () = the corruption's default
  eval_noise_levels: tuple = ()  # () = the corruption's default
  target: str = 'noisy'
  loss: str = 'auto'  # auto = the paper's loss for the corruption
  crop_size: int = 256
  batch_size: int = 4
  train_steps: int = 300000
  learning_rate: float = 3e-4
  rampdown_fraction: float = 0.3
  precision: str = 'auto'
  strategy: str = 'auto'
  tpu: str = ''
  steps_per_loop: int = 10
  checkpoint_every: int = 1000
  keep_checkpoints: int = 3
  eval_every: int = 5000
  log_every: int = 100
  seed: int = 0
  cache: str = 'auto'
  cache_budget_mb: int = 2048
  crops_per_image: int = 4
  max_eval_images: int = 0
  eval_image_summaries: int = 3
  skip_corrupt_records: bool = False
  deterministic: bool = False
  jit_compile: bool = False
  profile_steps: tuple = ()  # (start, end): TensorBoard profiler trace of those steps
  model: ModelConfig = ModelConfig()
  augment: AugmentConfig = AugmentConfig()

  def __post_init__(self):
    corruption = noise_lib.get_corruption(self.noise)
    # Resolve corruption-dependent defaults so config.json records real values.
    if not self.noise_range:
      object.__setattr__(self, 'noise_range', corruption.default_range)
    if not self.eval_noise_levels:
      object.__setattr__(self, 'eval_noise_levels', corruption.default_eval_levels)
    if self.loss == 'auto':
      object.__setattr__(self, 'loss', corruption.default_loss)
    if len(self.noise_range) != 2:
      raise ValueError(f'--noise_range={self.noise_range} needs exactly two numbers: low,high')
    object.__setattr__(self, 'noise_range', tuple(float(v) for v in self.noise_range))
    object.__setattr__(self, 'eval_noise_levels', tuple(float(v) for v in self.eval_noise_levels))
    low, high = self.noise_range
    lowest, highest = corruption.bounds
    if not lowest <= low <= high <= highest:
      raise ValueError(
          f'--noise_range={low:g},{high:g} is invalid for --noise={self.noise}: need '
          f'{lowest:g} <= low <= high <= {highest:g} ({corruption.level_name})')
    for level in self.eval_noise_levels:
      if not lowest <= level <= highest:
        raise ValueError(f'--eval_noise_levels value {level:g} is outside {lowest:g}..{highest:g} '
                         f'for --noise={self.noise}')
    _check_choice('target', self.target, TARGETS)
    _check_choice('loss', self.loss, LOSSES)
    _check_choice('precision', self.precision, PRECISIONS)
    _check_choice('strategy', self.strategy, STRATEGIES)
    _check_choice('cache', self.cache, CACHE_MODES)
    if self.crop_size <= 0 or self.crop_size % 32:
      raise ValueError(f'--crop_size={self.crop_size} must be a positive multiple of 32 '
                       '(the U-Net pools five times)')
    for name in ('batch_size', 'train_steps', 'steps_per_loop', 'checkpoint_every',
                 'keep_checkpoints', 'eval_every', 'log_every', 'crops_per_image'):
      if getattr(self, name) <= 0:
        raise ValueError(f'--{name}={getattr(self, name)} must be positive')
    if self.learning_rate <= 0:
      raise ValueError(f'--learning_rate={self.learning_rate} must be positive')
    if not 0.0 <= self.rampdown_fraction <= 1.0:
      raise ValueError(f'--rampdown_fraction={self.rampdown_fraction} must be in [0, 1]')
    if self.model.channels not in (1, 3):
      raise ValueError(f'--channels={self.model.channels} must be 1 or 3')
    if self.profile_steps and not (len(self.profile_steps) == 2
                                   and 0 <= self.profile_steps[0] < self.profile_steps[1]):
      raise ValueError(f'--profile_steps={self.profile_steps} must be START,END with '
                       '0 <= START < END')
    if self.strategy == 'tpu' and not self.tpu:
      raise ValueError('--strategy=tpu needs --tpu (a TPU name, grpc:// address or "local")')

  def to_json(self):
    """The configuration as a JSON string (tuples become lists)."""
    return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)


def _check_choice(flag, value, choices):
  if value not in choices:
    raise ValueError(f'--{flag}={value!r} is not one of {", ".join(choices)}')


def model_config_from_dict(config_dict):
  """Reads the network part of a config.json dict; ValueError if it is missing."""
  model = config_dict.get('model')
  if not isinstance(model, dict):
    raise ValueError('config.json has no "model" section')
  known = {field.name for field in dataclasses.fields(ModelConfig)}
  return ModelConfig(**{key: value for key, value in model.items() if key in known})


def differing_model_fields(saved, requested):
  """Names of ModelConfig fields that differ, as 'field: saved -> requested'."""
  return [
      f'{field.name}: {getattr(saved, field.name)!r} -> {getattr(requested, field.name)!r}'
      for field in dataclasses.fields(ModelConfig)
      if getattr(saved, field.name) != getattr(requested, field.name)
  ]
