import pytest

from n2n import config as config_lib

BASE = dict(train_data='x', val_data='', model_dir='m')


@pytest.mark.parametrize('overrides,message', [
    (dict(crop_size=100), r'--crop_size=100 must be a positive multiple of 32'),
    (dict(noise_range=(50.0, 10.0)), r'--noise_range=50,10 is invalid for --noise=gaussian'),
    (dict(noise_range=(0.0, 300.0)), r'--noise_range=0,300 is invalid'),
    (dict(noise='speckle'), r"unknown corruption 'speckle'"),
    (dict(batch_size=0), r'--batch_size=0 must be positive'),
    (dict(target='both'), r"--target='both' is not one of noisy, clean"),
    (dict(strategy='tpu'), r'--strategy=tpu needs --tpu'),
    (dict(eval_noise_levels=(-1.0,)), r'--eval_noise_levels value -1 is outside'),
])
def test_bad_values_name_the_flag(overrides, message):
  with pytest.raises(ValueError, match=message):
    config_lib.TrainConfig(**{**BASE, **overrides})


def test_differing_model_fields():
  saved = config_lib.ModelConfig(channels=3)
  assert config_lib.differing_model_fields(saved, config_lib.ModelConfig(channels=1)) == [
      'channels: 3 -> 1']
  assert not config_lib.differing_model_fields(saved, saved)
