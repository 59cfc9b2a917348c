import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from n2n.data import dataset_writer
from n2n.data import file_lists
from n2n.data import tfrecord
from tests.conftest import REPO_ROOT


def _read_all(directory):
  files = sorted(tf.io.gfile.glob(os.path.join(directory, '*.tfrecord')))
  return [tfrecord.parse_image(record) for record in tf.data.TFRecordDataset(files)]


def test_round_trip_converts_grayscale_and_rgba_and_skips_the_corrupt_file(tfrecord_dir):
  manifest = json.loads((tfrecord_dir / 'manifest.json').read_text())
  assert manifest['num_images'] == 6
  assert [entry['file'] for entry in manifest['skipped']] == ['broken.png']
  assert 'not a readable image' in manifest['skipped'][0]['reason']
  assert sum(shard['count'] for shard in manifest['shards']) == 6
  assert len(manifest['shards']) == 2
  assert manifest['shortest_side'] == {'min': 64, 'median': 80.0, 'max': 96}
  records = _read_all(tfrecord_dir)
  names = sorted(record['name'].numpy().decode() for record in records)
  assert names == ['alpha.png', 'gray.png', 'rgb0.png', 'rgb1.png', 'rgb2.png', 'rgb3.png']
  for record in records:
    assert record['image'].shape[-1] == 3
  gray = next(r['image'].numpy() for r in records if r['name'].numpy() == b'gray.png')
  np.testing.assert_array_equal(gray[:, :, 0], gray[:, :, 1])


def test_small_images_are_skipped_and_counted(image_folder, tmp_path):
  manifest = dataset_writer.write_dataset(str(image_folder), str(tmp_path), min_size=80)
  small = [entry for entry in manifest['skipped'] if 'smaller than --min_size=80' in entry['reason']]
  assert len(small) == 2  # alpha.png (64 high) and rgb0.png (72 high)
  assert manifest['num_images'] == 4


def test_same_seed_same_order(image_folder, tmp_path):
  dataset_writer.write_dataset(str(image_folder), str(tmp_path / 'a'), num_shards=1, min_size=32)
  dataset_writer.write_dataset(str(image_folder), str(tmp_path / 'b'), num_shards=1, min_size=32)
  order = lambda d: [r['name'].numpy() for r in _read_all(d)]
  assert order(tmp_path / 'a') == order(tmp_path / 'b')


def test_existing_output_is_refused_without_overwrite(image_folder, tmp_path):
  dataset_writer.write_dataset(str(image_folder), str(tmp_path), min_size=32)
  with pytest.raises(ValueError, match='already holds shards; pass --overwrite'):
    dataset_writer.write_dataset(str(image_folder), str(tmp_path), min_size=32)
  manifest = dataset_writer.write_dataset(str(image_folder), str(tmp_path), min_size=32,
                                          overwrite=True)
  assert manifest['num_images'] == 6


def test_empty_folder_exits_non_zero_with_one_clear_line(tmp_path):
  (tmp_path / 'empty').mkdir()
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'datasets', 'make_tfrecords.py'),
       f'--input_dir={tmp_path / "empty"}', f'--output_dir={tmp_path / "out"}'],
      capture_output=True, text=True, timeout=120)
  assert result.returncode != 0
  assert result.stderr.strip().splitlines()[-1] == (
      f"make_tfrecords.py: error: --input_dir='{tmp_path / 'empty'}' has no usable image "
      '(it is empty)')
  assert not tf.io.gfile.glob(str(tmp_path / 'out' / '*.tfrecord'))


def test_folder_of_non_images_is_refused(tmp_path):
  (tmp_path / 'notes.txt').write_text('hello')
  (tmp_path / 'fake.jpg').write_bytes(b'')
  with pytest.raises(ValueError, match=r'has no usable image \(2 files: 1 empty file, 1 not a '
                                       'readable image\\)'):
    dataset_writer.write_dataset(str(tmp_path), str(tmp_path / 'out'))


def test_on_a_cluster_only_the_chief_builds_and_the_others_wait_for_its_manifest(
    image_folder, tmp_path, monkeypatch):
  import threading  # pylint: disable=g-import-not-at-top
  train_data = str(tmp_path / 'records' / 'train-*.tfrecord')
  real_write = dataset_writer.write_dataset
  writers = []

  def recording_write(*args, **kwargs):
    writers.append(threading.current_thread().name)
    return real_write(*args, **kwargs)

  monkeypatch.setattr(dataset_writer, 'write_dataset', recording_write)
  worker = threading.Thread(name='worker-1', target=dataset_writer.build_if_missing, args=(
      train_data, str(image_folder), 32), kwargs=dict(is_chief=False, poll_seconds=0.05))
  worker.start()
  time.sleep(0.3)
  assert worker.is_alive() and not writers  # waiting, writing nothing
  dataset_writer.build_if_missing(train_data, str(image_folder), 32, is_chief=True)
  worker.join(timeout=30)
  assert not worker.is_alive() and writers == ['MainThread']
  # Without a chief's dataset a worker gives up with one line, after its wait.
  with pytest.raises(ValueError, match=r'the chief built no dataset from --train_images_dir='):
    dataset_writer.build_if_missing(str(tmp_path / 'other' / '*.tfrecord'), str(image_folder),
                                    32, is_chief=False, wait_seconds=0.2, poll_seconds=0.05)


@pytest.mark.parametrize('existing', [False, True], ids=['new_folder', 'empty_folder'])
def test_a_folder_train_data_is_built_into_that_folder(image_folder, tmp_path, existing):
  # A folder --train_data is a dataset folder (shards + manifest.json, as
  # make_tfrecords.py writes): the build once went into its parent (new
  # folder) or was skipped (empty folder), and training then found nothing.
  folder = tmp_path / 'records'
  if existing:
    folder.mkdir()
  dataset_writer.build_if_missing(str(folder), str(image_folder), 32)
  manifest = json.loads((folder / 'manifest.json').read_text())
  assert manifest['num_images'] == 6
  assert not tf.io.gfile.glob(str(tmp_path / '*.tfrecord'))
  assert len(file_lists.record_files(str(folder))) == len(manifest['shards'])
  # Built once: a second call finds the shards and leaves them alone.
  before = {path: os.path.getmtime(path) for path in file_lists.record_files(str(folder))}
  dataset_writer.build_if_missing(str(folder), str(image_folder), 32)
  assert {path: os.path.getmtime(path) for path in before} == before


@pytest.mark.parametrize('train_data, reason', [
    ('records/photos.tfrecord', 'the shards it builds are named train-NNNNN-of-NNNNN.tfrecord'),
    ('*/train-*.tfrecord', 'a folder to build into, not a glob of folders'),
])
def test_a_glob_the_built_shards_would_not_match_is_refused_before_writing(
    image_folder, tmp_path, train_data, reason):
  with pytest.raises(ValueError, match=r'^--train_images_dir needs .*' + re.escape(reason)):
    dataset_writer.build_if_missing(str(tmp_path / train_data), str(image_folder), 32)
  assert not [path for path in tmp_path.rglob('*')]


def test_a_failure_while_writing_leaves_no_temporary_shard(image_folder, tmp_path, monkeypatch):
  calls = []
  serialize = tfrecord.serialize_image

  def failing_serialize(*args):
    calls.append(args)
    if len(calls) == 3:  # the third image, after two were written
      raise OSError('disk full')
    return serialize(*args)

  monkeypatch.setattr(dataset_writer.tfrecord, 'serialize_image', failing_serialize)
  with pytest.raises(OSError, match='disk full'):
    dataset_writer.write_dataset(str(image_folder), str(tmp_path), num_shards=2, min_size=32)
  assert len(calls) == 3 and not list(tmp_path.iterdir())
