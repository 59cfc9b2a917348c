"""n2n/data/training_arrays.py and array_records.py: a caller's arrays laid out
as scenes, fingerprinted, cut into blocks where a record cannot hold them, and
written as the dataset writers write files (training on them: tests/test_arrays.py)."""

import json

import numpy as np
import pytest
import tensorflow as tf

from n2n.data import array_records
from n2n.data import tfrecord
from n2n.data import training_arrays


def _stack(seed, shape=(6, 40, 50)):
  return np.random.default_rng(seed).integers(0, 1000, shape, dtype=np.uint16)


def test_the_fingerprint_is_of_values_layout_and_settings_not_of_memory_order():
  stack = _stack(0)
  fingerprint = lambda items, **settings: training_arrays.check_arrays(
      'noisy', 'noisy', items, **{'axes': 'ZYX', **settings}).fingerprint
  same_values = np.asfortranarray(stack)  # another memory order, the same array
  assert fingerprint([stack]) == fingerprint([same_values]) == fingerprint([stack.copy()])
  changed = stack.copy()
  changed[3, 7, 9] += 1
  assert len({fingerprint([stack]), fingerprint([changed]), fingerprint([stack, stack]),
              fingerprint([stack], white_level=1000), fingerprint([stack], network_dims=2),
              fingerprint([stack.astype(np.float32)])}) == 6


def test_a_z_stack_over_time_is_a_volume_per_time_point_and_a_movie_one_volume():
  movie = _stack(1, (2, 6, 40, 50))
  data = training_arrays.check_arrays('captures', 'captures', [(movie, movie + 1)], 'TZYX')
  assert [scene.name for scene in data.scenes] == ['captures[0] t0', 'captures[0] t1']
  assert data.scenes[1].labels == ('captures[0][0] t1', 'captures[0][1] t1')
  np.testing.assert_array_equal(data.scenes[1].captures[1][..., 0], movie[1] + 1)
  frames = training_arrays.check_arrays('noisy', 'noisy', [movie[0]], 'TYX')
  assert frames.stacks and frames.spatial_dims == 3 and len(frames.scenes) == 1
  assert frames.scenes[0].captures[0].shape == (6, 40, 50, 1)


def test_scenes_larger_than_a_record_are_cut_into_blocks_that_cover_them(tmp_path):
  stack = _stack(2)
  # Two captures of a block must fit in 15000 bytes: the 24000-byte stack in 2 x 2 blocks.
  data = training_arrays.check_arrays('noisy', 'noisy', [stack], 'ZYX', min_size=16,
                                      max_record_bytes=15000)
  names = [scene.name for scene in data.scenes]
  assert names == ['noisy[0] y0 x0', 'noisy[0] y0 x1', 'noisy[0] y1 x0', 'noisy[0] y1 x1']
  top = np.concatenate([data.scenes[0].captures[0], data.scenes[1].captures[0]], axis=2)
  bottom = np.concatenate([data.scenes[2].captures[0], data.scenes[3].captures[0]], axis=2)
  np.testing.assert_array_equal(np.concatenate([top, bottom], axis=1)[..., 0], stack)
  manifest = array_records.write_records(data, str(tmp_path / 'records'))
  assert (manifest['kind'], manifest['num_images'], manifest['spatial_dims']) == (
      'noisy_images', 4, 3)
  with pytest.raises(ValueError, match=r'^noisy\[0\] is too large for one record and its blocks '
                     r'of 25x20 would be smaller than crop_size=32$'):
    training_arrays.check_arrays('noisy', 'noisy', [stack], 'ZYX', min_size=32,
                                 max_record_bytes=15000)


def test_clean_stacks_are_clean_stack_records_and_their_planes_8_bit_images(tmp_path):
  stack = _stack(3)
  volumes = training_arrays.check_arrays('clean', 'clean', [stack], 'ZYX', white_level=1000)
  manifest = array_records.write_records(volumes, str(tmp_path / 'volumes'))
  assert (manifest['kind'], manifest['spatial_dims'], manifest['white_level']) == (
      'clean_stacks', 3, 1000.0)
  planes = training_arrays.check_arrays('clean', 'clean', [stack], 'ZYX', white_level=1000,
                                        network_dims=2)
  manifest = array_records.write_records(planes, str(tmp_path / 'planes'))
  assert (manifest['kind'], manifest['num_images']) == ('images', 6)
  records = [tfrecord.parse_image(record) for record in tf.data.TFRecordDataset(
      tf.io.gfile.glob(str(tmp_path / 'planes' / '*.tfrecord')))]
  plane = {record['name'].numpy().decode(): record['image'].numpy() for record in records}
  expected = np.round(stack[4] / 1000 * 255).astype(np.uint8)
  np.testing.assert_array_equal(plane['clean[0] z0004'][..., 1],
                                expected)
  saved = json.loads((tmp_path / 'planes' / 'arrays.json').read_text())
  assert saved['fingerprint'] == planes.fingerprint and saved['spatial_dims'] == 2


def test_integer_arrays_default_to_their_brightest_value_in_whole_bits_of_the_training_arrays():
  level = training_arrays.default_white_level
  assert level('noisy', [np.array([[3, 255]], np.uint8)]) == 255.0
  assert level('noisy', [np.array([[100, 400]], np.uint16)]) == 511.0
  assert level('noisy', [np.array([[256]], np.uint16)]) == 511.0
  assert level('captures', [(np.array([[4000]], np.uint16), np.array([[4095]], np.uint16))]) == (
      4095.0)
  # Floats keep 1.0 (0: the dtype's maximum); zeros, and unchecked items, are left to
  # check_arrays.
  assert level('noisy', [np.ones((4, 4), np.float32)]) == 0.0
  assert level('noisy', [np.zeros((4, 4), np.uint16)]) == 0.0
  assert level('noisy', [[[1, 2]]]) == 0.0


def test_a_run_on_integer_arrays_resumes_without_its_validation_arrays(tmp_path):
  """The white level comes from the training arrays alone, so their fingerprint,
  which a started run checks, does not depend on val=."""
  from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
  from n2n import run_dir  # pylint: disable=g-import-not-at-top
  from n2n.training import array_runs  # pylint: disable=g-import-not-at-top
  train = [_stack(seed, (64, 70)) for seed in (3, 4)]
  val = [_stack(5, (64, 70)) + 5]
  config = config_lib.train_config(model_dir=str(tmp_path), noise='none',
                                   method='neighbor2neighbor', crop_size=64)
  with_val = array_runs.with_array_data(config, array_runs.TrainingArrays(noisy=train, val=val),
                                        None)
  run_dir.write_config(str(tmp_path), with_val)  # the run has started
  resumed = array_runs.with_array_data(config, array_runs.TrainingArrays(noisy=train), None)
  assert resumed.data.train_data == with_val.data.train_data and not resumed.data.val_data
  manifest = json.loads((tmp_path / 'arrays' / 'train' / 'manifest.json').read_text())
  assert manifest['white_level'] == 1023.0  # the brightest, 999, in whole bits


def test_records_of_many_captures_stay_within_the_bound_blocks_are_cut_for(tmp_path):
  # Five captures of 24000 bytes and a bound two of them fit in: no blocks, and the
  # writer must group the captures two or three to a record, not all five in one.
  captures = tuple(_stack(seed) for seed in range(5))
  data = training_arrays.check_arrays('captures', 'captures', [captures], 'ZYX',
                                      max_record_bytes=50000)
  assert [scene.name for scene in data.scenes] == ['captures[0]']
  array_records.write_records(data, str(tmp_path / 'records'))
  files = [str(path) for path in (tmp_path / 'records').iterdir() if 'tfrecord' in path.name]
  sizes = [len(record.numpy()) for record in tf.data.TFRecordDataset(files)]
  assert len(sizes) >= 2 and max(sizes) <= 50000, sizes


@pytest.mark.parametrize('frames', [1, 3])
def test_captures_of_one_scene_with_other_frame_counts_are_refused_by_index(frames):
  movie = _stack(4, (2, 6, 40, 50))
  other = _stack(5, (frames, 6, 40, 50))
  with pytest.raises(ValueError, match=r'^captures\[1\]\[1\] has shape \(' + str(frames)
                     + r', 6, 40, 50\) but captures\[1\]\[0\] has \(2, 6, 40, 50\) '
                     r"\(axes='TZYX'\); the captures of one scene share their frames and "
                     r'planes$'):
    training_arrays.check_arrays('captures', 'captures', [(movie, movie), (movie, other)],
                                 'TZYX')
