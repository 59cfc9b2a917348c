"""One training run's configuration: its sections together, their rules
between sections, what the run derives (resolved()), and the ways to build one
(from flag names, from a config.json)."""

import dataclasses

from n2n import settings as settings_lib
from n2n.config import legacy
from n2n.config import run as run_lib
from n2n.config.corruption import CorruptionConfig
from n2n.config.corruption import NO_NOISE
from n2n.config.data import DataConfig
from n2n.config.method import MethodConfig
from n2n.config.method import default_loss
from n2n.config.network import ModelConfig
from n2n.config.network import model_channels
from n2n.config.run import EvaluationConfig
from n2n.config.run import OptimisationConfig
from n2n.config.run import RunConfig
from n2n.methods import registry as methods_registry
from n2n.settings import format_value
from n2n.settings import section
from n2n.settings import to_json

@dataclasses.dataclass(frozen=True)
class TrainConfig:
  """The configuration of one training run, in sections (written to config.json).

  Flags stay flat (--crop_size is config.data.crop_size); each section checks
  its own values, and __post_init__ the rules between sections. Nothing here
  changes a value: resolved() returns the configuration with what the run
  derives (the paper's noise levels, the loss for auto, the fixed captures of
  a single-image method), which train.py logs (resolved_summary) and
  config.json records.
  """
  data: DataConfig = section(DataConfig, '')
  corruption: CorruptionConfig = section(CorruptionConfig, '')
  method: MethodConfig = section(MethodConfig, '')
  model: ModelConfig = section(ModelConfig, '')
  optimisation: OptimisationConfig = section(OptimisationConfig, '')
  evaluation: EvaluationConfig = section(EvaluationConfig, '')
  run: RunConfig = section(RunConfig, '')

  def __post_init__(self):
    method = methods_registry.get(self.method.name)
    noise = self.corruption.noise
    loss = self.method.loss
    if noise == NO_NOISE and loss == 'masked_l2' and not method.masks_targets:
      raise ValueError('--loss=masked_l2 needs --noise=bernoulli (it masks dropped pixels)')
    if self.data.normalization == 'percentile' and noise != NO_NOISE:
      # Synthetic noise levels are defined on the white-level scale, and the
      # percentiles of a clean image are not those of its noisy copy.
      raise ValueError(f'--normalization=percentile applies to real noisy captures '
                       f'(--noise=none); --noise={noise} adds its noise on the white-level '
                       'scale (use --normalization=white_level)')
    method.resolve_loss(loss, default_loss(noise))  # refuses a loss the method cannot take
    method.check(self)

  def resolved(self):
    """This configuration with every value the run derives filled in (the
    corruption's paper levels, the loss for auto, --noise_captures as the
    method uses it); a resolved configuration resolves to itself."""
    method = methods_registry.get(self.method.name)
    return dataclasses.replace(
        self, corruption=self.corruption.resolved(method.resolve_captures),
        method=dataclasses.replace(
            self.method, loss=method.resolve_loss(self.method.loss,
                                                  default_loss(self.corruption.noise))))

  def to_json(self):
    """The configuration as a JSON string (tuples become lists)."""
    return to_json(self)


def read_train_config(values):
  """The resolved TrainConfig of a parsed config.json, of this layout or an
  earlier one (settings.from_dict)."""
  return settings_lib.from_dict(TrainConfig, values, legacy.EARLIER_PLACES).resolved()


def train_config(**flag_values):
  """A TrainConfig from settings named as train.py's flags name them
  (blind_spot_fraction=0.01, channels=1, augment_flips=False); ValueError for
  a name that is no flag. Resolved (TrainConfig.resolved())."""
  return settings_lib.from_flag_values(TrainConfig, flag_values).resolved()


# What resolved() derives from --noise and --method: replacing either puts these
# back to their declared defaults (to be derived anew) unless given with it.
_DERIVED_FROM = {'noise': ('noise_range', 'eval_noise_levels', 'noise_captures', 'loss'),
                 'method': ('noise_captures', 'loss')}


def replace_settings(config, **flag_values):
  """config with the settings named as train.py's flags name them replaced
  (train_steps=10, blind_spot_fraction=0.01), checked and resolved again.

  Replacing noise or method also derives anew what was derived from them
  (_DERIVED_FROM: the paper's levels, the loss, the fixed captures) unless the
  same call gives those too: a Gaussian run's sigma range is no Poisson range.
  """
  specs = settings_lib.flag_specs(TrainConfig, flag_values)
  derived = {name for flag in flag_values for name in _DERIVED_FROM.get(flag, ())}
  defaults = {name: specs[name].default for name in derived - set(flag_values)}
  return settings_lib.with_flag_values(config, {**defaults, **flag_values}).resolved()


def resolved_summary(config):
  """One line with every value the run derived rather than took as given
  (--noise_range and --eval_noise_levels from the corruption's paper, --loss
  auto, --learning_rate 0, --noise_captures 0 for a single-image method,
  --channels 0, and the
  data's type and white level), as config.json records them: train.py logs it
  at start, so nothing is changed quietly."""
  corruption, data = config.corruption, config.data
  parts = [f'--method={config.method.name}', f'--noise={corruption.noise}']
  if corruption.noise != NO_NOISE:
    parts += [f'--noise_range={format_value(corruption.noise_range)}',
              f'--eval_noise_levels={format_value(corruption.eval_noise_levels)}',
              f'--noise_captures={corruption.noise_captures}']
  parts += [f'--loss={config.method.loss}',
            f'--learning_rate={peak_learning_rate(config):g}',
            f'--channels={model_channels(config)}',
            f'--normalization={data.normalization}',
            f'data {data.dtype}, {data.channels} channel(s), white level {data.white_level:g}']
  if data.noise_correlation >= 0:
    parts.append(f'noise correlation at lag 1 {data.noise_correlation:.2f}')
  return 'Resolved settings: ' + ', '.join(parts)


def flag_value(config, flag):
  """The value of the setting train.py's flag `flag` names in a TrainConfig."""
  return settings_lib.value_at(config, settings_lib.flag_specs(type(config), [flag])[flag].path)


def peak_learning_rate(config):
  """The peak learning rate a TrainConfig trains at: --learning_rate, or for 0
  FINE_TUNING_LEARNING_RATE for 2D runs that start from other weights (--init_from),
  SHORT_RUN_LEARNING_RATE for 2D runs (spatial_dims 2, or 0 not yet resolved)
  of at most SHORT_RUN_STEPS steps, else the paper's. config.json keeps the 0,
  so a run resumed with other train_steps (whose ramp-down moves with them
  anyway) chooses anew, and a rate the user gave is never replaced."""
  optimisation = config.optimisation
  if optimisation.learning_rate:
    return optimisation.learning_rate
  if config.run.init_from and config.model.spatial_dims != 3:
    return run_lib.FINE_TUNING_LEARNING_RATE
  short_2d = (optimisation.train_steps <= run_lib.SHORT_RUN_STEPS
              and config.model.spatial_dims != 3)
  return run_lib.SHORT_RUN_LEARNING_RATE if short_2d else run_lib.PAPER_LEARNING_RATE
