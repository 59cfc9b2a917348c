"""make_tfrecords.py --planes: stacks cut into their planes, each a 2D scene, for the 2D
network on the planes of the same stacks."""

import glob
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes import volumes as volume_helpers
from n2n.data import scene_writer

DEPTH, HEIGHT, WIDTH = 5, 24, 40


def _stack(seed):
  # Every voxel distinct within a stack, so a plane read from the wrong z or
  # capture cannot match.
  values = np.arange(DEPTH * HEIGHT * WIDTH, dtype=np.uint16).reshape(DEPTH, HEIGHT, WIDTH)
  return (values * 3 + seed) % 60000


def _records_by_name(folder):
  """{scene name: (captures [N, H, W, C], reference [H, W, C] or None)}, parsed with
  tf.train.Example and tf.io.parse_tensor directly (not n2n's parser)."""
  found = {}
  for path in sorted(glob.glob(os.path.join(folder, '*.tfrecord'))):
    for record in tf.data.TFRecordDataset(path):
      example = tf.train.Example.FromString(record.numpy())
      features = example.features.feature
      decode = lambda raw: tf.io.parse_tensor(raw, tf.uint16).numpy()
      name = features['scene/name'].bytes_list.value[0].decode()
      captures = np.stack([decode(raw) for raw in features['scene/captures'].bytes_list.value])
      references = [decode(raw) for raw in features['scene/reference'].bytes_list.value]
      assert name not in found  # each scene here fits one record
      found[name] = (captures, references[0] if references else None)
  return found


def test_each_plane_of_each_stack_becomes_a_2d_scene_of_that_planes_captures_and_reference(
    tmp_path):
  scenes = {}
  for index in range(2):
    folder = tmp_path / 'raw' / f'scene_{index}'
    folder.mkdir(parents=True)
    arrays = [_stack(10 * index + number) for number in range(3)]
    for number, array in enumerate(arrays[:2]):
      volume_helpers.write_stack(folder / f'acquisition_{number}.tif', array, 'ZYX')
    volume_helpers.write_stack(folder / 'reference.tif', arrays[2], 'ZYX')
    scenes[f'scene_{index}'] = arrays
  manifest = scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'records'),
                                              white_level=60000, planes=True)
  assert manifest['spatial_dims'] == 2 and 'depth' not in manifest
  assert manifest['num_scenes'] == 2 * DEPTH and manifest['num_captures'] == 2 * 2 * DEPTH
  assert manifest['num_references'] == 2 * DEPTH
  assert manifest['height']['min'] == HEIGHT and manifest['width']['max'] == WIDTH
  with open(tmp_path / 'records' / 'manifest.json') as written:
    assert json.load(written)['num_scenes'] == 2 * DEPTH
  records = _records_by_name(tmp_path / 'records')
  assert len(records) == 2 * DEPTH
  for name, arrays in scenes.items():
    for plane in range(DEPTH):
      captures, reference = records[f'{name} z{plane:04d}']
      assert captures.shape == (2, HEIGHT, WIDTH, 1)
      for number in range(2):
        np.testing.assert_array_equal(captures[number, ..., 0], arrays[number][plane])
      np.testing.assert_array_equal(reference[..., 0], arrays[2][plane])


def test_a_movie_of_noisy_frames_becomes_one_noisy_image_per_frame(tmp_path):
  (tmp_path / 'raw').mkdir()
  movie = _stack(7)
  volume_helpers.write_stack(tmp_path / 'raw' / 'movie.tif', movie, 'TYX')
  manifest = scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'records'),
                                              white_level=60000, noisy_images=True, planes=True)
  assert manifest['kind'] == 'noisy_images' and manifest['spatial_dims'] == 2
  assert manifest['num_images'] == DEPTH
  records = _records_by_name(tmp_path / 'records')
  for frame in range(DEPTH):
    captures, reference = records[f'movie.tif z{frame:04d}']
    assert reference is None
    np.testing.assert_array_equal(captures[0, ..., 0], movie[frame])


def test_planes_of_images_or_of_clean_stacks_are_refused_in_one_line(tmp_path):
  (tmp_path / 'images').mkdir()
  tf.io.write_file(str(tmp_path / 'images' / 'a.png'),
                   tf.io.encode_png(np.zeros([8, 8, 1], np.uint8)))
  with pytest.raises(ValueError, match=r'--planes: .*a\.png is an image, not a stack') as error:
    scene_writer.write_scene_dataset(str(tmp_path / 'images'), str(tmp_path / 'out'),
                                     noisy_images=True, planes=True)
  assert '\n' not in str(error.value)
  (tmp_path / 'stacks').mkdir()
  volume_helpers.write_stack(tmp_path / 'stacks' / 'clean.tif', _stack(1), 'ZYX')
  with pytest.raises(ValueError, match='--planes applies to --scenes and --noisy_images, not '
                     '--clean_stacks'):
    scene_writer.write_scene_dataset(str(tmp_path / 'stacks'), str(tmp_path / 'out'),
                                     clean_stacks=True, planes=True)
  assert not (tmp_path / 'out').exists() or not os.listdir(tmp_path / 'out')


def test_a_stack_too_large_for_one_record_fits_when_cut_into_planes(tmp_path):
  folder = tmp_path / 'raw' / 'scene'
  folder.mkdir(parents=True)
  for number in range(2):
    volume_helpers.write_stack(folder / f'acquisition_{number}.tif', _stack(number), 'ZYX')
  stack_bytes = DEPTH * HEIGHT * WIDTH * 2
  with pytest.raises(ValueError, match='crop the captures into tiles'):
    scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'whole'),
                                     white_level=60000, max_record_bytes=stack_bytes)
  manifest = scene_writer.write_scene_dataset(str(tmp_path / 'raw'), str(tmp_path / 'planes'),
                                              white_level=60000, planes=True,
                                              max_record_bytes=stack_bytes)
  assert manifest['num_scenes'] == DEPTH
  records = [record.numpy() for path in glob.glob(str(tmp_path / 'planes' / '*.tfrecord'))
             for record in tf.data.TFRecordDataset(path)]
  assert len(records) == DEPTH and max(len(record) for record in records) < stack_bytes
