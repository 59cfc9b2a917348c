import dataclasses
import json
import os
import subprocess
import sys

import pytest

from n2n import config as config_lib
from n2n import settings as settings_lib
from n2n.corruptions import catalog
from tests.conftest import REPO_ROOT

BASE = dict(train_data='x', val_data='', model_dir='m')


@pytest.mark.parametrize('overrides,message', [
    (dict(crop_size=100), r'--crop_size=100 must be a positive multiple of 32'),
    (dict(noise_range=(50.0, 10.0)), r'--noise_range=50,10 is invalid for --noise=gaussian'),
    (dict(noise_range=(0.0, 300.0)), r'--noise_range=0,300 is invalid'),
    (dict(noise='speckle'), r"--noise='speckle' is not one of gaussian, poisson, "),
    (dict(batch_size=0), r'--batch_size=0 must be positive'),
    (dict(target='both'), r"--target='both' is not one of noisy, clean"),
    (dict(strategy='tpu'), r'--strategy=tpu needs --tpu'),
    (dict(eval_noise_levels=(-1.0,)), r'--eval_noise_levels value -1 is outside'),
    (dict(rampdown_fraction=1.5), r'--rampdown_fraction=1.5 must be <= 1'),
    (dict(eval_every=-1), r'--eval_every=-1 must be >= 0'),
    (dict(profile_steps=(5, 2)), r'--profile_steps=5,2 must be START,END'),
    (dict(normalization='percentile'), r'^--normalization=percentile applies to real noisy '
     r'captures \(--noise=none\); --noise=gaussian adds its noise on the white-level scale'),
    (dict(normalization='percentile', noise='none', percentile_low=99.0, percentile_high=50.0),
     r'^--percentile_low=99 must be below --percentile_high=50$'),
    (dict(noise='none', percentile_high=120.0), r'--percentile_high=120.0 must be <= 100'),
    (dict(normalization='minmax'), r"--normalization='minmax' is not one of white_level, "),
])
def test_bad_values_name_the_flag(overrides, message):
  with pytest.raises(ValueError, match=message):
    config_lib.train_config(**{**BASE, **overrides})


def test_channels_are_1_or_3_or_0_for_as_the_data():
  for channels in (2, 4, -1):
    with pytest.raises(ValueError, match=f'--channels={channels} must be'):
      config_lib.ModelConfig(channels=channels)
  unresolved = config_lib.train_config(**BASE)
  assert unresolved.model.channels == 0 and config_lib.model_channels(unresolved) == 3
  resolved = config_lib.resolve_data(unresolved, 1, 'uint16', 4095)
  assert (resolved.model.channels, resolved.data.channels, resolved.data.dtype,
          resolved.data.white_level) == (1, 1, 'uint16', 4095.0)
  converting = config_lib.resolve_data(
      config_lib.train_config(**BASE, channels=3), 1, 'uint16', 4095)
  assert (converting.model.channels, converting.data.channels) == (3, 1)


def test_noise_none_takes_no_levels_and_defaults_to_l2():
  config = config_lib.train_config(**{**BASE, 'noise': 'none'})
  assert (config.method.loss, config.corruption.noise_range,
          config.corruption.eval_noise_levels) == ('l2', (), ())
  for overrides, message in (({'noise_range': (0, 50)}, '--noise_range does not apply'),
                             ({'eval_noise_levels': (25,)}, '--eval_noise_levels does not apply'),
                             ({'loss': 'masked_l2'}, '--loss=masked_l2 needs')):
    with pytest.raises(ValueError, match=message):
      config_lib.train_config(**{**BASE, 'noise': 'none', **overrides})


def test_differing_model_fields():
  saved = config_lib.ModelConfig(channels=3)
  assert config_lib.differing_model_fields(saved, config_lib.ModelConfig(channels=1)) == [
      'channels: 3 -> 1']
  assert not config_lib.differing_model_fields(saved, saved)


def test_reading_a_config_does_not_import_tensorflow():
  code = ('import sys; from n2n import config; '
          "config.train_config(train_data='x', model_dir='m', noise='poisson'); "
          "assert 'tensorflow' not in sys.modules, 'tensorflow imported'")
  result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=60)
  assert result.returncode == 0, result.stderr


def test_corruption_defaults_are_resolved_and_written_to_json():
  config = config_lib.train_config(**BASE, noise='impulse')
  assert config.corruption.noise_range == (0.0,
                                           0.95) and config.corruption.eval_noise_levels == (0.5,
                                                                                             0.7)
  assert config.method.loss == 'annealed_l0'
  saved = json.loads(config.to_json())
  assert saved['corruption']['noise_range'] == [0.0, 0.95] and saved['model']['channels'] == 0
  assert config_lib.read_train_config(saved) == config
  resolved = json.loads(config_lib.resolve_data(config, 3, 'uint8', 255).to_json())
  assert resolved['model']['channels'] == 3 and resolved['data']['white_level'] == 255


def test_an_older_or_newer_config_json_still_reads():
  saved = json.loads(config_lib.train_config(**BASE).to_json())
  saved['a_setting_from_the_future'] = 1
  del saved['run']['jit_compile']
  del saved['data']['white_level'], saved['data']['dtype']  # runs before scene datasets
  config = config_lib.read_train_config(saved)
  assert config.run.jit_compile is False and config.run.model_dir == 'm'
  assert (config.data.dtype, config.data.white_level) == ('uint8', 255.0)


def test_a_config_json_of_the_flat_layout_with_a_methods_section_still_loads():
  """tests/legacy/config_d35cebd_neighbor2neighbor.json was written by main at
  d35cebd (settings flat but for model, augment and methods) from the flags
  below, with a 12-bit grayscale dataset: read now, it equals the
  configuration the same flags make."""
  with open(os.path.join(REPO_ROOT, 'tests', 'legacy',
                         'config_d35cebd_neighbor2neighbor.json')) as file:
    saved = json.load(file)
  assert saved['methods']['neighbor2neighbor'] == {'gamma': 1.0} and saved['crop_size'] == 128
  expected = config_lib.resolve_data(config_lib.train_config(
      train_data='data/noisy', model_dir='runs/old_n2n', noise='none', method='neighbor2neighbor',
      neighbor2neighbor_gamma=1.0, crop_size=128, batch_size=8, train_steps=1200,
      augment_channel_permutations=False, learning_rate=5e-4, seed=7,
      blind_spot_fraction=0.004), 1, 'uint16', 4095.0)
  assert config_lib.read_train_config(saved) == expected
  assert expected != config_lib.resolve_data(config_lib.train_config(
      train_data='data/noisy', model_dir='runs/old_n2n', noise='none'), 1, 'uint16', 4095.0)


def test_every_setting_has_one_place_and_a_flag_of_its_own():
  specs = settings_lib.settings_of(config_lib.TrainConfig)
  flags = [spec.flag for spec in specs]
  assert len(flags) == len(set(flags))
  assert {spec.path[0] for spec in specs} == {
      'data', 'corruption', 'method', 'model', 'optimisation', 'evaluation', 'run'}
  assert {spec.flag: spec.path for spec in specs}['method'] == ('method', 'name')
  assert {spec.flag: spec.path for spec in specs}['augment_flips'] == ('data', 'augment', 'flips')


def test_resolving_fills_in_what_the_run_derives_and_changes_nothing_else():
  given = settings_lib.from_flag_values(config_lib.TrainConfig, dict(
      train_data='x', model_dir='m', noise='poisson', method='neighbor2neighbor'))
  assert (given.corruption.noise_range, given.method.loss, given.corruption.noise_captures) == (
      (), 'auto', 0)
  resolved = given.resolved()
  assert (resolved.corruption.noise_range, resolved.corruption.eval_noise_levels) == (
      (0.0, 50.0), (30.0,))
  assert (resolved.method.loss, resolved.corruption.noise_captures) == ('l2', 1)
  assert resolved.resolved() == resolved
  assert dataclasses.replace(resolved, corruption=given.corruption,
                             method=given.method) == given


def test_name_lists_agree_with_the_code_that_implements_them():
  from n2n.corruptions import noise  # pylint: disable=g-import-not-at-top
  from n2n.training import losses  # pylint: disable=g-import-not-at-top
  assert set(config_lib.LOSSES) - {'auto'} == set(losses.LOSSES)
  assert set(noise.CORRUPTIONS) == set(catalog.NAMES)
  for spec in catalog.SPECS.values():
    assert spec.default_loss in losses.LOSSES


@pytest.mark.parametrize('overrides,message', [
    (dict(seed=-2), r'--seed=-2 must be >= -1'),
    (dict(precision='fp8'), r"--precision='fp8' is not one of run, auto"),
    (dict(noise='speckle'), r"--noise='speckle' is not one of '', gaussian"),
    (dict(follow_timeout=0), r'--follow_timeout=0 must be positive'),
])
def test_bad_validate_values_name_the_flag(overrides, message):
  with pytest.raises(ValueError, match=message):
    config_lib.ValidateConfig(checkpoint='m', **overrides)


@pytest.mark.parametrize('multiple', [0.5, 1.0])
def test_a_clip_multiple_of_one_or_less_is_refused(multiple):
  # Below 1 the running average shrinks every step and training stalls.
  with pytest.raises(ValueError, match=rf'--gradient_clip_multiple={multiple:g} must be 0 '
                     r'\(no clipping\) or above 1'):
    config_lib.train_config(train_data='x', model_dir='y', gradient_clip_multiple=multiple)
  for allowed in (0.0, 1.5):
    assert config_lib.train_config(
        train_data='x', model_dir='y',
        gradient_clip_multiple=allowed).optimisation.gradient_clip_multiple == allowed


def test_the_start_up_line_names_every_derived_value():
  """--loss auto, the paper's ranges and one fixed capture for a single-image
  method are derived, not given: the line train.py logs says what they became."""
  config = config_lib.resolve_data(
      config_lib.train_config(train_data='x', model_dir='y', noise='text',
                             method='neighbor2neighbor', crop_size=64), 1, 'uint16', 4095.0)
  assert config_lib.resolved_summary(config) == (
      'Resolved settings: --method=neighbor2neighbor, --noise=text, --noise_range=0,0.5, '
      '--eval_noise_levels=0.25, --noise_captures=1, --loss=l1, --channels=1, '
      '--normalization=white_level, data uint16, 1 channel(s), white level 4095')
  scenes = config_lib.train_config(train_data='x', model_dir='y', noise='none',
                                  method='blind_spot')
  assert '--loss=masked_l2' in config_lib.resolved_summary(scenes)
  assert '--noise_range' not in config_lib.resolved_summary(scenes)
