"""train.py as a user runs it: the demo's data path, and one-line errors."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n.apps import train as train_app
from n2n.training import distribute
from n2n.training import launch
from n2n.training import train_lib
from n2n.training import trainer as trainer_lib
from tests.conftest import REPO_ROOT

DEMO = os.path.join(REPO_ROOT, 'datasets', 'demo')


def _train(*flags, timeout=300):
  return subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'train.py'), *flags],
                        capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)


@pytest.mark.slow
def test_demo_config_builds_records_on_first_use_and_trains(tmp_path):
  result = _train('--flagfile=configs/demo.cfg', f'--train_data={tmp_path}/records/train-*.tfrecord',
                  f'--model_dir={tmp_path}/run', '--train_steps=4', '--steps_per_loop=2',
                  '--log_every=2', '--max_eval_images=1')
  assert result.returncode == 0, result.stderr[-3000:]
  assert tf.io.gfile.glob(f'{tmp_path}/records/train-*.tfrecord')
  assert (tmp_path / 'records' / 'manifest.json').exists()
  assert 'step 4/4' in result.stderr
  assert 'Evaluation at step 4: gaussian 25:' in result.stderr
  assert tf.train.latest_checkpoint(str(tmp_path / 'run')).endswith('ckpt-4')
  # TensorFlow's own INFO lines at a checkpoint ("Sharding callback duration")
  # stay out of the log; n2n's own INFO lines are there (above).
  assert 'Sharding callback' not in result.stderr
  assert not [line for line in result.stderr.splitlines() if 'functional_saver' in line]


@pytest.mark.parametrize('flags,message', [
    ({'crop_size': 48}, '--crop_size=48 must be a positive multiple of 32'),
    ({'noise_range': (40.0, 10.0)}, '--noise_range=40,10 is invalid for --noise=gaussian'),
    ({'noise': 'speckle'}, "--noise='speckle' is not one of gaussian, "),
    ({'train_data': '/nonexistent/x-*.tfrecord'},
     "--train_data: no file matches '/nonexistent/x-*.tfrecord'"),
])
def test_bad_flags_are_refused_in_one_line_naming_the_flag(flags, message, tmp_path):
  """What train.py prints after 'train.py: error: ' (tests/test_cli.py runs the
  program for that form), from the calls its main makes, without a process each."""
  values = {'train_data': f'{tmp_path}/nothing-*', 'model_dir': str(tmp_path), **flags}
  with pytest.raises(ValueError) as refused:
    launch.train(config_lib.train_config(**values), distribute.create_strategy('default'))
  assert str(refused.value).startswith(message), str(refused.value)
  assert '\n' not in str(refused.value)
  assert not list(tmp_path.iterdir())  # nothing written


def test_crop_larger_than_every_image_is_refused(tfrecord_dir, tmp_path):
  config = config_lib.train_config(train_data=str(tfrecord_dir / '*.tfrecord'), val_data='',
                                  model_dir=str(tmp_path), crop_size=128)
  with pytest.raises(ValueError, match=r'--crop_size=128 is larger than every image in '
                                       r'--train_data \(the largest shortest side is 96 px\)'):
    train_lib.train_and_evaluate(config, distribute.create_strategy('default'))


def test_batch_not_divisible_by_replicas_is_refused(tfrecord_dir, tmp_path):
  config = config_lib.train_config(train_data=str(tfrecord_dir / '*.tfrecord'), val_data='',
                                  model_dir=str(tmp_path), crop_size=32, batch_size=3)
  with pytest.raises(ValueError, match=r'--batch_size=3 must be divisible by the number of '
                                       r'replicas \(2\)'):
    train_lib.train_and_evaluate(config, distribute.create_strategy('mirrored'))


@pytest.mark.slow
def test_mixed_float16_with_loss_scaling_trains(tfrecord_dir, tmp_path):
  config = config_lib.train_config(train_data=str(tfrecord_dir / '*.tfrecord'), val_data='',
                                  model_dir=str(tmp_path), crop_size=32, batch_size=2,
                                  train_steps=4, steps_per_loop=2, log_every=2,
                                  precision='mixed_float16', seed=2)
  run = train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith('ckpt-4')
  # The loss scaler may skip an overflowing step, not every step: the weights moved.
  initial = trainer_lib.build_model_and_optimizer(config, 'mixed_float16')[0]
  moved = [not np.array_equal(ours.numpy(), theirs.numpy())
           for ours, theirs in zip(run.model.trainable_variables, initial.trainable_variables)]
  assert all(moved)


def _train_in_process(train_data, image_folder, model_dir):
  """What train.py's main calls for a 2-step run that builds --train_data from
  image_folder first (launch.train), without a process: the demo test above runs
  the program on its first-use build."""
  return launch.train(config_lib.train_config(
      train_data=train_data, train_images_dir=str(image_folder), model_dir=str(model_dir),
      crop_size=32, batch_size=2, train_steps=2, steps_per_loop=2, log_every=2,
      precision='float32'), distribute.create_strategy('default'))


@pytest.mark.slow
def test_demo_build_keeps_images_as_small_as_the_crop(image_folder, tmp_path):
  # The demo's first-use build once kept its own 256-pixel minimum: with
  # 64-104 pixel images and 32-pixel crops it found "no usable image".
  run = _train_in_process(f'{tmp_path}/records/train-*.tfrecord', image_folder,
                          tmp_path / 'run')
  assert run.step == 2
  manifest = json.loads((tmp_path / 'records' / 'manifest.json').read_text())
  assert manifest['num_images'] == 6 and manifest['min_size'] == 32


@pytest.mark.slow
def test_a_folder_train_data_is_built_into_that_folder_and_trained_on(image_folder, tmp_path):
  # README: --train_data takes a dataset folder. With --train_images_dir the
  # shards once went into the folder's parent and training then stopped with
  # "--train_data: no file matches".
  _train_in_process(f'{tmp_path}/records', image_folder, tmp_path / 'run')
  assert json.loads((tmp_path / 'records' / 'manifest.json').read_text())['num_images'] == 6
  assert tf.io.gfile.glob(f'{tmp_path}/records/train-*.tfrecord')
  assert not tf.io.gfile.glob(f'{tmp_path}/*.tfrecord')
  assert tf.train.latest_checkpoint(str(tmp_path / 'run')).endswith('ckpt-2')


@pytest.mark.slow
def test_a_finished_run_ends_with_the_commands_that_use_its_folder(tfrecord_dir, tmp_path):
  run = tmp_path / 'my run'  # a space: the commands quote the folder
  result = _train(f'--train_data={tfrecord_dir}/*.tfrecord', f'--model_dir={run}', '--val_data=',
                  '--crop_size=32', '--batch_size=2', '--network_width=8', '--train_steps=2',
                  '--steps_per_loop=2', '--log_every=2', '--precision=float32')
  assert result.returncode == 0, result.stderr[-3000:]
  folder = f"'{run}'"
  # Stdout holds these lines only; the log stays on stderr as it was.
  assert result.stdout.splitlines() == [
      f'Finished {run}. Next:',
      f'  denoise:      python denoise.py --model={folder} --input=NOISY_IMAGES '
      '--output_dir=DENOISED',
      f'  TensorBoard:  tensorboard --logdir {folder}',
      # The run had no validation data: validate.py needs some.
      f'  validate:     python validate.py --checkpoint={folder} --data=VALIDATION_IMAGES',
  ]
  assert 'step 2/2' in result.stderr


def test_the_console_script_names_the_other_console_scripts():
  lines = train_app.next_steps('runs/demo', 'n2n-train', 'datasets/demo/val').splitlines()
  assert lines[1].split()[1:3] == ['n2n-denoise', '--model=runs/demo']
  assert lines[2].endswith('tensorboard --logdir runs/demo')
  assert lines[3].split()[1:] == ['n2n-validate', '--checkpoint=runs/demo']
