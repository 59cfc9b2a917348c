"""Each kind of bad input a user can give, and the message they see."""

import json
import os
import shutil
import subprocess
import sys

import imageio.v3 as iio
import numpy as np
import pytest
import tensorflow as tf

from bench.recipes.images import smooth_image
from n2n import config as config_lib
from n2n import errors
from n2n.data import dataset_writer
from n2n.data import rgb_images
from n2n.evaluation import validation
from n2n.training import distribute
from n2n.training import launch
from tests.conftest import REPO_ROOT
from tests.conftest import pillow_bytes


def _run(script, *flags, timeout=300, env=None):
  return subprocess.run([sys.executable, os.path.join(REPO_ROOT, *script.split('/')), *flags],
                        capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT, env=env)


def _last_line(result):
  return result.stderr.strip().splitlines()[-1]


# Dataset tool ------------------------------------------------------------------------------

def test_dataset_tool_handles_every_odd_file_a_real_folder_holds_and_leaves_the_temp_folder(
    tmp_path):
  rng = np.random.default_rng(0)
  folder = tmp_path / 'in'
  (folder / 'sub').mkdir(parents=True)
  rgb = smooth_image(rng, 300, 320)
  iio.imwrite(folder / 'rgb.jpg', rgb)
  iio.imwrite(folder / 'gray16.png', (rgb[:, :, 0].astype(np.uint16) * 257))
  (folder / 'rgb16.png').write_bytes(tf.io.encode_png(rgb.astype(np.uint16) * 257).numpy())
  iio.imwrite(folder / 'sub' / 'gray.png', rgb[:, :, 1])
  iio.imwrite(folder / 'rgba.png', np.concatenate([rgb, rgb[:, :, :1]], -1))
  (folder / 'palette.png').write_bytes(pillow_bytes(rgb, 'P', 'PNG'))
  (folder / 'cmyk.jpg').write_bytes(pillow_bytes(rgb, 'CMYK', 'JPEG'))
  (folder / 'zero.png').write_bytes(b'')
  (folder / 'truncated.png').write_bytes(rgb_images.encode_png(rgb)[:2000])
  (folder / 'text.jpg').write_text('not an image')
  (folder / 'notes.txt').write_text('hello')
  iio.imwrite(folder / 'small.png', rgb[:100, :100])
  os.symlink(tmp_path / 'missing.png', folder / 'dangling.png')
  # Its own temp folder, empty, to see that the program leaves it as it found it.
  (tmp_path / 'temp').mkdir()
  result = _run('datasets/make_tfrecords.py', f'--input_dir={folder}',
                f'--output_dir={tmp_path / "out"}',
                env={**os.environ, 'TMPDIR': str(tmp_path / 'temp')})
  assert result.returncode == 0, result.stderr[-3000:]
  assert not list((tmp_path / 'temp').iterdir())
  manifest = json.loads((tmp_path / 'out' / 'manifest.json').read_text())
  assert manifest['num_images'] == 7
  reasons = {entry['file']: entry['reason'] for entry in manifest['skipped']}
  assert reasons['zero.png'] == 'empty file'
  assert reasons['truncated.png'].startswith('not a readable image: ')
  assert reasons['text.jpg'].startswith('not a readable image: ')
  assert reasons['notes.txt'].startswith('not a readable image: ')
  assert reasons['small.png'] == 'smaller than --min_size=256 (100x100)'
  assert reasons['dangling.png'].startswith('unreadable: ')
  for name in reasons:  # one warning line per skipped file, naming it
    assert any(f'Skipping {folder / name}: ' in line for line in result.stderr.splitlines())
  assert 'Wrote 7 images to 1 shard(s)' in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason='root reads files whatever their permissions')
def test_dataset_tool_skips_unreadable_permissions(tmp_path):
  iio.imwrite(tmp_path / 'locked.png', np.zeros((300, 300, 3), np.uint8))
  os.chmod(tmp_path / 'locked.png', 0)
  with pytest.raises(ValueError, match=r'has no usable image \(1 files: 1 unreadable\)'):
    dataset_writer.write_dataset(str(tmp_path), str(tmp_path / 'out'))


def test_dataset_tool_converts_a_very_large_image(tmp_path):
  (tmp_path / 'in').mkdir()
  iio.imwrite(tmp_path / 'in' / 'huge.png', np.full((9000, 12000), 77, np.uint8))
  manifest = dataset_writer.write_dataset(str(tmp_path / 'in'), str(tmp_path / 'out'))
  assert manifest['num_images'] == 1 and manifest['width']['max'] == 12000


def test_dataset_tool_refuses_an_unwritable_output(image_folder, tmp_path):
  (tmp_path / 'file').write_text('a file, not a folder')
  result = _run('datasets/make_tfrecords.py', f'--input_dir={image_folder}',
                f'--output_dir={tmp_path / "file" / "out"}', '--min_size=32')
  assert result.returncode == 1
  assert _last_line(result).startswith('make_tfrecords.py: error: ')
  assert 'Traceback' not in result.stderr


def test_dataset_tool_refuses_a_missing_input(tmp_path):
  # What make_tfrecords.py prints after 'make_tfrecords.py: error: ', from the call its
  # main makes, without a process (the test above runs the program for that form).
  with pytest.raises(ValueError) as refused:
    dataset_writer.write_dataset(str(tmp_path / 'nope'), str(tmp_path / 'out'))
  assert errors.first_line(refused.value) == f"--input_dir='{tmp_path / 'nope'}' is not a folder"


# train.py ----------------------------------------------------------------------------------

def _train(tfrecord_glob, model_dir, *extra):
  return _run('train.py', f'--train_data={tfrecord_glob}', f'--model_dir={model_dir}',
              '--crop_size=32', '--batch_size=2', '--train_steps=4', '--steps_per_loop=2',
              '--log_every=2', '--precision=float32', *extra)


def _train_refusal(tfrecord_glob, model_dir):
  """The line train.py prints after 'train.py: error: ' for _train's flags, from the
  call its main makes (launch.train), without a process: the one-line form and exit
  status 1 are the program's (tests/test_cli.py; a process here: the truncated shard,
  the unwritable model_dir)."""
  config = config_lib.train_config(train_data=str(tfrecord_glob), model_dir=str(model_dir),
                                   crop_size=32, batch_size=2, train_steps=4, steps_per_loop=2,
                                   log_every=2, precision='float32')
  with pytest.raises(ValueError) as refused:
    launch.train(config, distribute.create_strategy('default'))
  return errors.first_line(refused.value)


def _validate_refusal(**flags):
  """The same for validate.py (validation.validate_once; a process here: the checkpoint
  of another architecture)."""
  with pytest.raises(ValueError) as refused:
    validation.validate_once(config_lib.ValidateConfig(**flags))
  return errors.first_line(refused.value)


@pytest.mark.slow
def test_scene_tool_refuses_bad_scenes_in_one_line_with_nothing_written(tmp_path):
  def write(path, array):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(tf.io.encode_png(array[:, :, np.newaxis]).numpy())

  capture = np.full((40, 40), 3000, np.uint16)
  write(tmp_path / 'in' / 'good' / 'a.png', capture)
  write(tmp_path / 'in' / 'good' / 'b.png', capture + 1000)
  output = tmp_path / 'out'
  result = _run('datasets/make_tfrecords.py', '--scenes', f'--input_dir={tmp_path / "in"}',
                f'--output_dir={output}', '--white_level=3500')
  assert result.returncode != 0
  assert _last_line(result).endswith('b.png holds values up to 4000, above --white_level=3500; '
                                     "pass the sensor's white level"), result.stderr
  write(tmp_path / 'in' / 'lonely' / 'only.png', capture)
  result = _run('datasets/make_tfrecords.py', '--scenes', f'--input_dir={tmp_path / "in"}',
                f'--output_dir={output}')
  assert result.returncode != 0 and 'only.png' in _last_line(result)
  assert 'a scene needs two or more noisy captures' in _last_line(result)
  assert not output.exists() or not list(output.iterdir())


@pytest.mark.slow
def test_truncated_shard_is_named_or_skipped(tfrecord_dir, tmp_path):
  records = tmp_path / 'records'
  shutil.copytree(tfrecord_dir, records)
  shard = sorted(records.glob('*.tfrecord'))[1]
  data = shard.read_bytes()
  shard.write_bytes(data[:len(data) // 2])
  result = _train(f'{records}/*.tfrecord', tmp_path / 'run')
  assert result.returncode == 1
  assert _last_line(result).startswith(f'train.py: error: --train_data: {shard} is corrupt')
  assert '--skip_corrupt_records' in _last_line(result)
  # With the flag the same records train (launch.train, what train.py's main calls).
  skipped = launch.train(config_lib.train_config(
      train_data=f'{records}/*.tfrecord', model_dir=str(tmp_path / 'run2'), crop_size=32,
      batch_size=2, train_steps=4, steps_per_loop=2, log_every=2, precision='float32',
      skip_corrupt_records=True), distribute.create_strategy('default'))
  assert skipped.step == 4


def test_records_of_another_schema_are_refused(tmp_path):
  path = tmp_path / 'other.tfrecord'
  with tf.io.TFRecordWriter(str(path)) as writer:
    feature = {'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}
    writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
  assert _train_refusal(path, tmp_path / 'run').startswith(
      f'{path} does not hold n2n image records')


def test_a_file_that_is_not_a_tfrecord_is_refused(tmp_path):
  path = tmp_path / 'photo.tfrecord'
  path.write_bytes(b'\x89PNG not a record file at all' * 10)
  assert _train_refusal(path, tmp_path / 'run') == f'{path} is corrupt or not a TFRecord file'


def test_model_dir_that_cannot_be_written_is_refused(tfrecord_dir, tmp_path):
  (tmp_path / 'file').write_text('a file, not a folder')
  result = _train(f'{tfrecord_dir}/*.tfrecord', tmp_path / 'file' / 'run')
  assert result.returncode == 1
  assert _last_line(result).startswith('train.py: error: ')
  assert 'Traceback' not in result.stderr


def test_model_dir_with_a_corrupt_config_is_refused(tfrecord_dir, tmp_path):
  (tmp_path / 'config.json').write_text('{not json')
  assert _train_refusal(f'{tfrecord_dir}/*.tfrecord', tmp_path).startswith(
      f'{tmp_path / "config.json"} is not valid JSON')


# validate.py -------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def small_run(tfrecord_dir, tmp_path_factory):
  model_dir = tmp_path_factory.mktemp('small_run')
  result = _train(f'{tfrecord_dir}/*.tfrecord', model_dir)
  assert result.returncode == 0, result.stderr[-2000:]
  return model_dir


def test_validate_refuses_a_partial_checkpoint(small_run, tmp_path, image_folder):
  partial = tmp_path / 'partial'
  shutil.copytree(small_run, partial)
  for data_file in partial.glob('ckpt-4.data-*'):
    data_file.unlink()
  assert _validate_refusal(checkpoint=str(partial), data=str(image_folder)) == (
      f"--checkpoint: '{partial / 'ckpt-4'}' is incomplete (no .data files)")


def test_validate_refuses_a_checkpoint_of_another_architecture(small_run, tmp_path, image_folder):
  other = tmp_path / 'other'
  shutil.copytree(small_run, other)
  config = json.loads((other / 'config.json').read_text())
  config['model']['channels'] = 1
  (other / 'config.json').write_text(json.dumps(config))
  result = _run('validate.py', f'--checkpoint={other}', f'--data={image_folder}')
  assert _last_line(result).startswith(f"validate.py: error: --checkpoint: '{other / 'ckpt-4'}' "
                                       'does not fit the network in config.json')
  # Not buried under the half-restored checkpoint's "unrestored value" warnings.
  assert len(result.stderr.strip().splitlines()) < 5, result.stderr[-3000:]


def test_validate_skips_non_images_handles_gray_and_odd_sizes_and_leaves_the_temp_folder(
    small_run, tmp_path):
  rng = np.random.default_rng(1)
  iio.imwrite(tmp_path / 'odd.png', smooth_image(rng, 37, 53))
  iio.imwrite(tmp_path / 'gray.png', smooth_image(rng, 45, 31, 1)[:, :, 0])
  (tmp_path / 'readme.txt').write_text('not an image')
  # Its own temp folder, empty, to see that the program leaves it as it found it.
  temp = tmp_path.parent / f'{tmp_path.name}_temp'
  temp.mkdir()
  result = _run('validate.py', f'--checkpoint={small_run}', f'--data={tmp_path}',
                f'--output_dir={tmp_path / "out"}', env={**os.environ, 'TMPDIR': str(temp)})
  assert result.returncode == 0, result.stderr[-2000:]
  assert not list(temp.iterdir())
  assert f'Skipping {tmp_path / "readme.txt"}' in result.stderr
  assert iio.imread(tmp_path / 'out' / 'gaussian_25' / 'odd.png').shape == (37, 53, 3)
  assert iio.imread(tmp_path / 'out' / 'gaussian_25' / 'gray.png').shape == (45, 31, 3)


def test_validate_refuses_a_folder_without_images(small_run, tmp_path):
  (tmp_path / 'readme.txt').write_text('not an image')
  assert _validate_refusal(checkpoint=str(small_run), data=str(tmp_path)) == (
      f"--data: no readable image in '{tmp_path}'")
