"""Flags derived from the config declarations."""

from absl import flags
import pytest

from n2n import config as config_lib
from n2n import config_flags
from n2n import settings as settings_lib


def _parse(config_class, *argv):
  flag_values = flags.FlagValues()
  config_flags.define_flags(config_class, flag_values)
  flag_values(['program', *argv])
  return flag_values


def test_every_setting_becomes_one_flag_with_its_default_and_help():
  flag_values = _parse(config_lib.TrainConfig)
  settings = settings_lib.settings_of(config_lib.TrainConfig)
  assert {spec.flag for spec in settings} <= set(flag_values)
  assert len({spec.flag for spec in settings}) == len(settings)
  # Nested sections keep their historical flag names.
  assert flag_values['channels'].value == 0 and flag_values['augment_flips'].value is True
  assert flag_values['crop_size'].value == 256 and flag_values['learning_rate'].value == 0.0
  assert 'One of: gaussian, poisson, text, impulse, bernoulli, none.' in flag_values['noise'].help
  assert 'data_dtype' not in flag_values and 'white_level' not in flag_values


def test_flags_build_the_config_with_lists_and_sections():
  flag_values = _parse(config_lib.TrainConfig, '--train_data=a', '--model_dir=b', '--channels=1',
                       '--noise_range=0,20', '--noaugment_flips', '--profile_steps=1,3')
  config = config_flags.config_from_flags(config_lib.TrainConfig, flag_values)
  assert config.corruption.noise_range == (0.0, 20.0) and config.run.profile_steps == (1, 3)
  augment = config.data.augment
  assert config.model.channels == 1 and not augment.flips and augment.rotations


@pytest.mark.parametrize('argv,message', [
    ((), '--train_data is required'),
    (('--train_data=a', '--model_dir=b', '--profile_steps=1.5,3'),
     "--profile_steps='1.5,3' is not a comma-separated list of integers"),
    (('--train_data=a', '--model_dir=b', '--noise_range=low,high'),
     "--noise_range='low,high' is not a comma-separated list of numbers"),
    (('--train_data=a', '--model_dir=b', '--precision=fp8'),
     "--precision='fp8' is not one of auto, float32, mixed_bfloat16, mixed_float16"),
    (('--train_data=a', '--model_dir=b', '--eval_every=-1'), '--eval_every=-1 must be >= 0'),
])
def test_bad_flags_name_the_flag(argv, message):
  flag_values = _parse(config_lib.TrainConfig, *argv)
  with pytest.raises(ValueError, match=message.replace('(', r'\(').replace(')', r'\)')):
    config_flags.config_from_flags(config_lib.TrainConfig, flag_values)


def test_validate_flags_default_to_the_run():
  config = config_flags.config_from_flags(config_lib.ValidateConfig,
                                       _parse(config_lib.ValidateConfig, '--checkpoint=r'))
  assert (config.seed, config.precision, config.data, config.noise) == (-1, 'run', '', '')
