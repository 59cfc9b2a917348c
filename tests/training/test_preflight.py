"""Checks that run before the first step: each bad input fails with one line."""

import dataclasses
import json
import os

import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.data import scene_writer
from n2n.data import simulated_scenes
from n2n.training import preflight
from tests.conftest import REPO_ROOT


def _config(train_data, **overrides):
  values = dict(train_data=str(train_data), model_dir='unused', crop_size=32, batch_size=2,
                precision='float32')
  values.update(overrides)
  return config_lib.train_config(**values)


def test_good_inputs_resolve_precision_batch_files_and_cache(tfrecord_dir, image_folder):
  checked = preflight.check_training_inputs(
      _config(tfrecord_dir, val_data=str(image_folder), max_eval_images=2),
      tf.distribute.get_strategy())
  assert checked.precision == 'float32' and checked.per_replica_batch == 2
  assert len(checked.train_files) == 2 and checked.cache  # the manifest says they fit
  assert len(checked.eval_images) == 2


def test_no_evaluation_images_are_loaded_when_evaluation_is_off(tfrecord_dir, image_folder):
  checked = preflight.check_training_inputs(
      _config(tfrecord_dir, val_data=str(image_folder), eval_every=0),
      tf.distribute.get_strategy())
  assert checked.eval_images == []


def test_cache_follows_the_budget_and_the_flag(tfrecord_dir):
  strategy = tf.distribute.get_strategy()
  assert not preflight.check_training_inputs(_config(tfrecord_dir, cache_budget_mb=0),
                                             strategy).cache
  assert not preflight.check_training_inputs(_config(tfrecord_dir, cache='false'), strategy).cache


def test_crop_larger_than_every_image_is_refused(tfrecord_dir):
  with pytest.raises(ValueError, match=r'--crop_size=128 is larger than every image'):
    preflight.check_training_inputs(_config(tfrecord_dir, crop_size=128),
                                    tf.distribute.get_strategy())


def test_in_plane_levels_on_images_are_refused_naming_the_flag(tfrecord_dir):
  with pytest.raises(ValueError, match=r'^--xy_conv_levels=2 shapes the 3D network only'):
    preflight.check_training_inputs(_config(tfrecord_dir, xy_conv_levels=2),
                                    tf.distribute.get_strategy())


def test_a_file_of_another_schema_is_named(tmp_path):
  path = tmp_path / 'other.tfrecord'
  with tf.io.TFRecordWriter(str(path)) as writer:
    writer.write(tf.train.Example().SerializeToString())
  with pytest.raises(ValueError, match=r'other.tfrecord does not hold n2n image records'):
    preflight.check_record_schema(str(path))


def test_find_corrupt_shard_names_the_truncated_one(tfrecord_dir, tmp_path):
  shards = sorted(tfrecord_dir.glob('*.tfrecord'))
  broken = tmp_path / 'broken.tfrecord'
  broken.write_bytes(shards[0].read_bytes()[:-7])
  assert preflight.find_corrupt_shard([str(shards[1])]) is None
  path, reason = preflight.find_corrupt_shard([str(shards[1]), str(broken)])
  assert path == str(broken) and reason and '\n' not in reason


def test_a_model_dir_of_another_network_is_refused(tfrecord_dir, tmp_path):
  (tmp_path / 'config.json').write_text(json.dumps({'model': {'architecture': 'n2n_unet',
                                                             'channels': 1}}))
  with pytest.raises(ValueError, match=r'holds a different network \(channels: 1 -> 3\)'):
    preflight.check_training_inputs(_config(tfrecord_dir, model_dir=str(tmp_path)),
                                    tf.distribute.get_strategy())


def test_the_training_noise_is_diagnosed_and_recorded(tfrecord_dir, tmp_path):
  """Real captures: their diagnosis (camera noise, correlated) is what the run
  records; synthetic noise: 0 where it is pixel-independent, -1 (unknown) for text."""
  photos = os.path.join(REPO_ROOT, 'datasets', 'demo', 'val')
  simulated_scenes.write_scenes(photos, str(tmp_path / 'raw'), captures=2, pipeline='camera',
                                crop=192)
  scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'records'))
  strategy = tf.distribute.get_strategy()
  checked = preflight.check_training_inputs(_config(tmp_path / 'records', noise='none'), strategy)
  profile, records = checked.noise_profile
  assert records == 2 and profile.source == 'pairs' and profile.correlation_lag1 > 0.3
  assert checked.config.data.noise_correlation == round(profile.correlation_lag1, 2)
  assert 'noise correlation at lag 1 0.' in config_lib.resolved_summary(checked.config)
  for noise, recorded in (('gaussian', 0.0), ('impulse', 0.0), ('text', -1.0)):
    checked = preflight.check_training_inputs(_config(tfrecord_dir, noise=noise), strategy)
    assert checked.config.data.noise_correlation == recorded and checked.noise_profile is None


def test_the_diagnosis_chooses_the_scheme_unless_resuming_or_undiagnosed(tmp_path, monkeypatch):
  """Camera captures (correlated): a single-image run gets its pixel-shuffle
  strides; a run resumed from a config.json of before the choice keeps what it
  trained with (stride 1); captures the diagnosis cannot read get nothing chosen."""
  photos = os.path.join(REPO_ROOT, 'datasets', 'demo', 'val')
  simulated_scenes.write_scenes(photos, str(tmp_path / 'raw'), captures=2, pipeline='camera',
                                crop=192)
  scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'records'))
  strategy = tf.distribute.get_strategy()
  config = _config(tmp_path / 'records', noise='none', method='neighbor2neighbor',
                   crop_size=128, model_dir=str(tmp_path / 'run'))
  checked = preflight.check_training_inputs(config, strategy)
  assert checked.chosen_settings == {'neighbor2neighbor_stride': 2,
                                     'neighbor2neighbor_inference_stride': 2,
                                     'neighbor2neighbor_inference_orientations': 8}
  assert checked.config.method.neighbor2neighbor.stride == 2
  # Resuming a run whose config.json predates the strides: it trained at stride 1, and
  # denoises as it did, in one orientation.
  (tmp_path / 'run').mkdir()
  legacy = json.loads(open(os.path.join(REPO_ROOT, 'tests', 'legacy',
                                        'config_d35cebd_neighbor2neighbor.json')).read())
  saved = config_lib.replace_settings(config_lib.read_train_config(legacy),
                                      crop_size=128, model_dir=str(tmp_path / 'run'))
  (tmp_path / 'run' / 'config.json').write_text(saved.to_json())
  monkeypatch.setattr(preflight.run_dir, 'check_compatible', lambda *args: None)
  checked = preflight.check_training_inputs(config, strategy)
  assert checked.chosen_settings == {'neighbor2neighbor_stride': 1,
                                     'neighbor2neighbor_inference_stride': 1,
                                     'neighbor2neighbor_inference_orientations': 1}
  monkeypatch.setattr(preflight.training_data, 'diagnose_records', lambda *args: (None, 0))
  config = _config(tmp_path / 'records', noise='none', method='neighbor2neighbor',
                   crop_size=128, model_dir=str(tmp_path / 'other'))
  checked = preflight.check_training_inputs(config, strategy)
  assert checked.chosen_settings == {} and checked.config.method.neighbor2neighbor.stride == 0


def test_recorruptions_take_the_noise_model_of_the_diagnosis_and_keep_it_when_resumed(
    tmp_path, monkeypatch):
  """Camera captures: --method=recorrupted gets the noise model the diagnosis
  measures (two captures here: their correlation, channels and levels), kept
  in its config; a resumed run keeps the model it trained with; undiagnosed
  data, or data read from too few pixels, get none, and the start refuses in
  one line before writing anything."""
  from n2n import noise_model  # pylint: disable=g-import-not-at-top
  from n2n.methods import recorrupted  # pylint: disable=g-import-not-at-top
  photos = os.path.join(REPO_ROOT, 'datasets', 'demo', 'val')
  simulated_scenes.write_scenes(photos, str(tmp_path / 'raw'), captures=2, pipeline='camera',
                                crop=192)
  scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'records'))
  strategy = tf.distribute.get_strategy()
  config = _config(tmp_path / 'records', noise='none', method='recorrupted', crop_size=64,
                   model_dir=str(tmp_path / 'run'))
  checked = preflight.check_training_inputs(config, strategy)
  profile, _ = checked.noise_profile
  assert checked.chosen_settings['recorrupted_inference_orientations'] == 8
  # Measured from two captures, the model is drawn at its own level.
  assert checked.chosen_settings['recorrupted_level_scale'] == 1.0
  model = recorrupted.METHOD.noise_model(checked.config)
  lag = noise_model.MAX_LAG
  assert model.correlation[lag, lag + 1] == pytest.approx(profile.correlation_x[0], abs=1e-5)
  assert model.correlation[lag, lag + 1] > 0.3
  assert model.sigma.shape == (len(profile.signal), 3)
  assert model.sigma[0, 0] == pytest.approx(profile.sigma[0, 0], abs=1e-5)
  # Resumed with other data, the run keeps the model it trained with.
  (tmp_path / 'run').mkdir()
  (tmp_path / 'run' / 'config.json').write_text(checked.config.to_json())
  monkeypatch.setattr(preflight.run_dir, 'check_compatible', lambda *args: None)
  other = noise_model.NoiseModel(model.correlation, model.channel_correlation, model.signal,
                                  model.sigma * 2)
  monkeypatch.setattr(noise_model, 'model_of_profile', lambda *args, **kwargs: other)
  resumed = preflight.check_training_inputs(config, strategy)
  assert resumed.config.method.recorrupted.noise_model == checked.config.method.recorrupted.noise_model
  assert resumed.config.method.recorrupted.level_scale == 1.0
  # Estimated from single images, it is drawn at the estimate's share of its level.
  single = dataclasses.replace(profile, source='single')
  monkeypatch.setattr(preflight.training_data, 'diagnose_records', lambda *args: (single, 2))
  estimated = preflight.check_training_inputs(
      _config(tmp_path / 'records', noise='none', method='recorrupted', crop_size=64,
              model_dir=str(tmp_path / 'estimated')), strategy)
  assert estimated.chosen_settings['recorrupted_level_scale'] == recorrupted.ESTIMATED_LEVEL_SCALE
  # A profile read from too few pixels (clipped or textured images) makes no model.
  few = dataclasses.replace(profile, samples=noise_model.MIN_SAMPLES - 1)
  for diagnosis, folder in (((few, 2), 'few'), ((None, 0), 'undiagnosed')):
    monkeypatch.setattr(preflight.training_data, 'diagnose_records',
                        lambda *args, diagnosis=diagnosis: diagnosis)
    # Refused before the run's config is written: nothing to resume from.
    with pytest.raises(ValueError, match='^--method=recorrupted has no noise model: .*fewer '
                                         'than 4096 pixels.*give --recorrupted_noise_model$'):
      preflight.check_training_inputs(
          _config(tmp_path / 'records', noise='none', method='recorrupted', crop_size=64,
                  model_dir=str(tmp_path / folder)), strategy)
    assert not (tmp_path / folder / 'config.json').exists()
