import json
import os
import subprocess
import sys

import pytest

from n2n import config as config_lib
from n2n import settings as settings_lib
from n2n.corruptions import catalog
from n2n.methods import registry as methods_registry
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
    (dict(method='neighbor2neighbor', crop_size=64, neighbor2neighbor_cells='xyz',
          spatial_dims=2), r'^--neighbor2neighbor_cells=xyz samples 2x2x2 cells of stacks'),
    (dict(network_width=0), r'^--network_width=0 must be'),
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
  # A run of another width has other weights' shapes: resuming into it is refused.
  assert config_lib.differing_model_fields(
      saved, config_lib.ModelConfig(channels=3, network_width=24)) == ['network_width: 48 -> 24']
  # In-plane levels shape the 3D network's kernels; a 2D network has none.
  volume = config_lib.ModelConfig(channels=1, spatial_dims=3)
  assert config_lib.differing_model_fields(
      volume, config_lib.ModelConfig(channels=1, spatial_dims=3, xy_conv_levels=2)) == [
          'xy_conv_levels: 0 -> 2']
  assert not config_lib.differing_model_fields(
      saved, config_lib.ModelConfig(channels=3, spatial_dims=2, xy_conv_levels=2))


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
  del saved['model']['network_width']  # runs before the setting: the paper's network
  del saved['model']['xy_conv_levels']  # runs before the setting: 3x3x3 everywhere
  config = config_lib.read_train_config(saved)
  assert config.run.jit_compile is False and config.run.model_dir == 'm'
  assert (config.data.dtype, config.data.white_level) == ('uint8', 255.0)
  assert config.model.network_width == 48 and config.model.xy_conv_levels == 0


def _sections(**sections):
  """{(section, ..., field): value} from {section: {field: value or {field: value}}}."""
  leaves = {}
  for name, fields in sections.items():
    for field, value in fields.items():
      if isinstance(value, dict):
        leaves.update({(name, field) + path: item
                       for path, item in _sections(**{'': value}).items()
                       for path in [path[1:]]})
      else:
        leaves[(name, field)] = value
  return leaves


def _leaf(config, path):
  for name in path:
    config = getattr(config, name)
  return config


def _assert_every_leaf(config, expected):
  """config holds expected's value at every place, and expected names every place."""
  places = {leaf.path for leaf in settings_lib.leaves_of(config_lib.TrainConfig)}
  assert set(expected) == places, set(expected) ^ places
  wrong = {path: (_leaf(config, path), value) for path, value in expected.items()
           if _leaf(config, path) != value or type(_leaf(config, path)) is not type(value)}
  assert not wrong, wrong


def _legacy(name):
  with open(os.path.join(REPO_ROOT, 'tests', 'legacy', name)) as file:
    return json.load(file)


# Files from before the pixel-shuffle strides and structN2V lines hold none:
# they read as never chosen, which runs as the plain method (stride 1, no line;
# test_a_config_from_before_the_schemes_runs_without_one).
_NO_SCHEME = dict(stride=0, inference_stride=0, refinement_passes=0, inference_orientations=0)
_NO_BLIND_SPOT_SCHEME = dict(_NO_SCHEME, line='auto', line_span=0)
# A method added after both files: its defaults.
_RECORRUPTED_DEFAULTS = dict(alpha=1.0, noise_model='', level_scale=0.0, inference_orientations=0)


def test_a_config_from_before_the_schemes_runs_without_one():
  for name, method in (('config_daa6c09_blind_spot.json', 'blind_spot'),
                       ('config_d35cebd_neighbor2neighbor.json', 'neighbor2neighbor')):
    config = config_lib.read_train_config(_legacy(name))
    single_image_method = methods_registry.get(method)
    assert single_image_method.training_stride(config) == 1
    assert single_image_method.inference_scheme(config).plain
    assert single_image_method.assumes_independent_pixels(config)


def test_a_flat_config_json_from_before_any_section_loads_every_value_in_its_place():
  """tests/legacy/config_daa6c09_blind_spot.json was written by main at daa6c09
  (every setting flat but for model and augment); the table is read off the
  file by hand."""
  saved = _legacy('config_daa6c09_blind_spot.json')
  assert 'methods' not in saved and 'data' not in saved and saved['blind_spot_fraction'] == 0.01
  _assert_every_leaf(config_lib.read_train_config(saved), _sections(
      data=dict(train_data='data/records', val_data='', train_images_dir='', crop_size=64,
                crops_per_image=4, cache='auto', cache_budget_mb=2048,
                skip_corrupt_records=False, normalization='white_level', percentile_low=1.0,
                percentile_high=99.8,
                augment=dict(flips=True, rotations=True, channel_permutations=True),
                dtype='uint8', channels=3, white_level=255.0, noise_correlation=-1.0,
                crop_depth=16, spatial_dims=2, arrays='', array_axes=''),
      corruption=dict(noise='gaussian', noise_range=(0.0, 50.0), eval_noise_levels=(25.0,),
                      noise_captures=1),
      method=dict(name='blind_spot', target='noisy', loss='masked_l2',
                  neighbor2neighbor=dict(gamma=1.5, cells='xy', **_NO_SCHEME),
                  blind_spot=dict(fraction=0.01, **_NO_BLIND_SPOT_SCHEME),
                  recorrupted=_RECORRUPTED_DEFAULTS),
      model=dict(architecture='n2n_unet', channels=3, downsampling='max_blur_pool',
                 top_skip=False, network_width=48, spatial_dims=0, z_pools=3,
                 xy_conv_levels=0),
      optimisation=dict(batch_size=8, train_steps=1600, learning_rate=0.0003,
                        rampdown_fraction=0.3, gradient_clip_multiple=4.0),
      evaluation=dict(eval_every=5000, max_eval_images=0, eval_image_summaries=3,
                      keep_best=True, psnr_drop_warning_db=1.0, colour_shift_warning=0.03),
      run=dict(model_dir='runs/old_blind_spot', seed=0, init_from='', precision='auto',
               strategy='auto',
               tpu='', steps_per_loop=10, checkpoint_every=1000, keep_checkpoints=3,
               log_every=100, deterministic=False, jit_compile=False, profile_steps=())))


def test_a_config_json_of_the_flat_layout_with_a_methods_section_loads_every_value_in_its_place():
  """tests/legacy/config_d35cebd_neighbor2neighbor.json was written by main at
  d35cebd (flat but for model, augment and methods), from flags that set
  nearly every setting away from its default, for a 12-bit grayscale dataset;
  the table is read off the file by hand. Its loss (l1) is not what
  resolution would derive (l2), so a loss not read from the file shows."""
  saved = _legacy('config_d35cebd_neighbor2neighbor.json')
  assert saved['methods']['neighbor2neighbor'] == {'gamma': 1.0} and saved['crop_size'] == 128
  config = config_lib.read_train_config(saved)
  _assert_every_leaf(config, _sections(
      data=dict(train_data='data/noisy', val_data='data/val_scenes', train_images_dir='',
                crop_size=128, crops_per_image=2, cache='false', cache_budget_mb=512,
                skip_corrupt_records=True, normalization='percentile', percentile_low=2.0,
                percentile_high=99.5,
                augment=dict(flips=True, rotations=True, channel_permutations=False),
                dtype='uint16', channels=1, white_level=4095.0, noise_correlation=-1.0,
                crop_depth=16, spatial_dims=2, arrays='', array_axes=''),
      corruption=dict(noise='none', noise_range=(), eval_noise_levels=(), noise_captures=0),
      method=dict(name='neighbor2neighbor', target='noisy', loss='l1',
                  neighbor2neighbor=dict(gamma=1.0, cells='xy', **_NO_SCHEME),
                  blind_spot=dict(fraction=0.004, **_NO_BLIND_SPOT_SCHEME),
                  recorrupted=_RECORRUPTED_DEFAULTS),
      model=dict(architecture='n2n_unet', channels=1, downsampling='max_blur_pool',
                 top_skip=False, network_width=48, spatial_dims=0, z_pools=3,
                 xy_conv_levels=0),
      optimisation=dict(batch_size=8, train_steps=1200, learning_rate=0.0005,
                        rampdown_fraction=0.2, gradient_clip_multiple=2.0),
      evaluation=dict(eval_every=200, max_eval_images=5, eval_image_summaries=1,
                      keep_best=False, psnr_drop_warning_db=0.5, colour_shift_warning=0.05),
      run=dict(model_dir='runs/old_n2n', seed=7, init_from='', precision='float32',
               strategy='default',
               tpu='', steps_per_loop=5, checkpoint_every=300, keep_checkpoints=2, log_every=7,
               deterministic=True, jit_compile=True, profile_steps=(2, 4))))
  # Written in today's layout, it reads back the same.
  assert config_lib.read_train_config(json.loads(config.to_json())) == config


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
  derived = {('corruption', 'noise_range'), ('corruption', 'eval_noise_levels'),
             ('corruption', 'noise_captures'), ('method', 'loss')}
  changed = {leaf.path for leaf in settings_lib.leaves_of(config_lib.TrainConfig)
             if _leaf(given, leaf.path) != _leaf(resolved, leaf.path)}
  assert changed == derived


@pytest.mark.parametrize('start,change,expected', [
    (dict(), dict(noise='text'), dict(noise_range=(0.0, 0.5), eval_noise_levels=(0.25,),
                                      loss='l1')),
    (dict(), dict(noise='poisson'), dict(noise_range=(0.0, 50.0), eval_noise_levels=(30.0,),
                                         loss='l2')),
    (dict(), dict(method='blind_spot'), dict(loss='masked_l2', noise_captures=1)),
    (dict(method='blind_spot'), dict(method='pairs'), dict(loss='l2', noise_captures=0)),
    (dict(method='blind_spot'), dict(method='neighbor2neighbor'),
     dict(loss='l2', noise_captures=1)),
    (dict(noise_range=(5.0, 5.0)), dict(train_steps=10), dict(noise_range=(5.0, 5.0))),
    (dict(), dict(noise='poisson', noise_range=(1.0, 2.0)),
     dict(noise_range=(1.0, 2.0), eval_noise_levels=(30.0,))),
])
def test_replacing_noise_or_method_derives_their_values_anew(start, change, expected):
  config = config_lib.replace_settings(config_lib.train_config(**BASE, **start), **change)
  for name, value in expected.items():
    section = 'method' if name == 'loss' else 'corruption'
    assert getattr(getattr(config, section), name) == value, name
  assert config == config_lib.train_config(**BASE, **{**start, **change})


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
      '--eval_noise_levels=0.25, --noise_captures=1, --loss=l1, --learning_rate=0.0003, '
      '--channels=1, '
      '--normalization=white_level, data uint16, 1 channel(s), white level 4095')
  scenes = config_lib.train_config(train_data='x', model_dir='y', noise='none',
                                  method='blind_spot')
  assert '--loss=masked_l2' in config_lib.resolved_summary(scenes)
  assert '--noise_range' not in config_lib.resolved_summary(scenes)


def test_3d_tiles_are_as_deep_as_the_training_crops_unless_given_and_overlap_at_most_half():
  defaults = config_lib.DenoiseConfig(model='m', input='i', output_dir='o')
  assert config_lib.volume_tiling(defaults, 16) == ((16, 128, 128), (8, 32, 32))
  assert config_lib.volume_tiling(defaults, 8) == ((8, 128, 128), (4, 32, 32))
  given = config_lib.DenoiseConfig(model='m', input='i', output_dir='o', volume_tile='24,64,96',
                                   volume_overlap='12,8,0')
  assert config_lib.volume_tiling(given, 8) == ((24, 64, 96), (12, 8, 0))
  with pytest.raises(ValueError, match=r'--volume_overlap=8,40,8: the y overlap 40 must be at '
                                       r'most half of the tile\'s 64'):
    config_lib.DenoiseConfig(model='m', input='i', output_dir='o', volume_tile='16,64,64',
                             volume_overlap='8,40,8')
  # The z overlap of a depth taken from the run is checked once the run is known.
  from_run = config_lib.DenoiseConfig(model='m', input='i', output_dir='o', volume_overlap='6,8,8')
  with pytest.raises(ValueError, match=r'the z overlap 6 must be at most half of the tile\'s 8'):
    config_lib.volume_tiling(from_run, 8)


def test_2x2x2_cells_are_refused_once_the_data_turn_out_to_be_images():
  # --spatial_dims left at 0 (as the data): the refusal comes when images resolve it to 2.
  config = config_lib.train_config(**{**BASE, 'method': 'neighbor2neighbor', 'crop_size': 64,
                                      'neighbor2neighbor_cells': 'xyz'})
  assert config_lib.resolve_data(config, 1, 'uint16', 4095, data_spatial_dims=3)
  with pytest.raises(ValueError, match=r'^--neighbor2neighbor_cells=xyz samples 2x2x2 cells of '
                                       r'stacks; leave it out for --spatial_dims=2$'):
    config_lib.resolve_data(config, 1, 'uint16', 4095, data_spatial_dims=2)


def test_a_learning_rate_of_zero_is_chosen_by_the_run_and_a_given_one_is_kept():
  at = lambda **flags: config_lib.peak_learning_rate(config_lib.train_config(**BASE, **flags))
  assert at(train_steps=5000) == 1e-3 and at(train_steps=5001) == 3e-4
  assert at() == 3e-4  # the paper's 300000 steps
  assert at(train_steps=600, spatial_dims=3) == 3e-4  # 3D runs train at the paper's
  assert at(train_steps=600, learning_rate=5e-4) == 5e-4
  # Fine-tuning (--init_from) starts at the measured 1e-4, whatever the steps; a given one stays.
  assert at(train_steps=600, init_from='camera_srgb') == 1e-4
  assert at(init_from='some/run') == 1e-4
  assert at(train_steps=600, spatial_dims=3, init_from='some/run') == 3e-4  # 3D: not measured
  assert at(train_steps=600, init_from='camera_srgb', learning_rate=5e-4) == 5e-4
  # A 3D run found from its data (spatial_dims 0 resolved to 3) too.
  resolved = config_lib.resolve_data(config_lib.train_config(**BASE, train_steps=600), 1,
                                     'uint16', 65535.0, 3)
  assert config_lib.peak_learning_rate(resolved) == 3e-4
  # config.json keeps the 0: a run resumed with more steps chooses anew, a given rate stays.
  short = config_lib.train_config(**BASE, train_steps=600)
  assert short.optimisation.learning_rate == 0.0
  assert config_lib.peak_learning_rate(config_lib.replace_settings(short, train_steps=20000)) == (
      3e-4)
  given = config_lib.train_config(**BASE, train_steps=1000, learning_rate=5e-4)
  assert config_lib.peak_learning_rate(config_lib.replace_settings(given, train_steps=2000)) == (
      5e-4)
