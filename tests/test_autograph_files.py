"""AutoGraph's generated modules (n2n/autograph_files.py): a program or the
Python front door leaves the temp folder as it found it, even when the process
ends without running its exit hooks; the converted code keeps its source. And
what n2n traces for training is traced as written (n2n/data/traced.py), with
no AutoGraph conversion to pay at a process's start."""

import inspect
import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from n2n import autograph_files
from tests.conftest import REPO_ROOT

GENERATED_PREFIX = '__autograph_generated_file'

# Converts one function with AutoGraph and ends without running exit hooks (run
# from a file: AutoGraph reads the source of what it converts, which `-c` has not).
_TENSORFLOW_ALONE = """
import os
import tensorflow as tf

@tf.function
def halve_if_positive(x):
  if x > 0:
    x = x / 2
  return x

halve_if_positive(tf.constant(1.0))
os._exit(0)
"""

# n2n.train in a process that goes on afterwards (a notebook), then ends
# without running exit hooks; prints what the temp folder held after training.
_TRAIN_THROUGH_THE_API = """
import os, sys
import n2n
n2n.train(n2n.train_config(train_data=sys.argv[1], model_dir=sys.argv[2], val_data='',
                           train_steps=2, steps_per_loop=1, crop_size=32, batch_size=2,
                           network_width=8, precision='float32'))
print('after training:', sorted(os.listdir(os.environ['TMPDIR'])), flush=True)
os._exit(0)
"""


# A fresh process's 2-step training (argv: records, model_dir, validation images, then
# train_config's keywords as JSON), which prints the module and name of every function
# AutoGraph converted (api._convert_actual is where AutoGraph converts one function). One
# n2n function traced with AutoGraph first shows that the count sees n2n's functions.
_TRAIN_COUNTING_CONVERSIONS = """
import json
import sys
import tensorflow as tf
from tensorflow.python.autograph.impl import api
import n2n
from n2n.training import losses
convert = api._convert_actual
def counted(entity, program_ctx):
  print('converted', getattr(entity, '__module__', '?'), getattr(entity, '__qualname__', '?'))
  return convert(entity, program_ctx)
api._convert_actual = counted
tf.function(losses.get_loss('l2'))(tf.zeros([1, 4, 4, 1]), tf.zeros([1, 4, 4, 1]), None, 0.0)
print('control done')
settings = dict(train_data=sys.argv[1], model_dir=sys.argv[2], val_data=sys.argv[3],
                train_steps=2, steps_per_loop=1, crop_size=32, batch_size=2, network_width=8,
                precision='float32', eval_every=2, max_eval_images=1)
settings.update(json.loads(sys.argv[4]))
n2n.train(n2n.train_config(**settings), progress_bar=False)
print('trained')
"""


def _empty_temp_folder(tmp_path):
  temp = tmp_path / 'temp'
  temp.mkdir()
  return temp, {**os.environ, 'TMPDIR': str(temp), 'PYTHONPATH': REPO_ROOT}


def test_tensorflow_alone_leaves_its_files_where_exit_hooks_do_not_run(tmp_path):
  """What the other tests guard against, seen through the same TMPDIR."""
  temp, environment = _empty_temp_folder(tmp_path)
  script = tmp_path / 'convert.py'
  script.write_text(_TENSORFLOW_ALONE)
  result = subprocess.run([sys.executable, str(script)], env=environment, capture_output=True,
                          text=True, timeout=120)
  assert result.returncode == 0, result.stderr[-3000:]
  assert [name for name in os.listdir(temp) if name.startswith(GENERATED_PREFIX)]


@pytest.mark.slow
def test_a_killed_train_py_leaves_the_temp_folder_as_found(tfrecord_dir, tmp_path):
  temp, environment = _empty_temp_folder(tmp_path)
  process = subprocess.Popen(
      [sys.executable, os.path.join(REPO_ROOT, 'train.py'),
       f'--train_data={tfrecord_dir}/*.tfrecord', f'--model_dir={tmp_path / "run"}',
       '--val_data=', '--crop_size=32', '--batch_size=2', '--network_width=8',
       '--precision=float32', '--steps_per_loop=1', '--log_every=1', '--train_steps=100000'],
      stderr=subprocess.PIPE, text=True, env=environment, cwd=REPO_ROOT)
  try:
    # By the first step the training step, the crops and the noise are converted.
    for line in process.stderr:
      if 'step 1/' in line:
        break
  finally:
    process.kill()
    process.communicate(timeout=60)
  assert process.returncode == -9
  assert not os.listdir(temp)


@pytest.mark.slow
def test_the_api_leaves_the_temp_folder_as_found_during_and_after_training(tfrecord_dir,
                                                                           tmp_path):
  temp, environment = _empty_temp_folder(tmp_path)
  result = subprocess.run(
      [sys.executable, '-c', _TRAIN_THROUGH_THE_API, f'{tfrecord_dir}/*.tfrecord',
       str(tmp_path / 'run')], env=environment, capture_output=True, text=True, timeout=300)
  assert result.returncode == 0, result.stderr[-3000:]
  assert 'after training: []' in result.stdout, result.stdout
  assert not os.listdir(temp)


def test_converted_code_keeps_its_source_once_its_file_is_gone():
  autograph_files.install()

  def clip_if_large(x):
    if x > 3:
      x = x * 0
    return x

  converted = tf.autograph.to_graph(clip_if_large)
  assert not os.path.exists(inspect.getsourcefile(converted))
  assert 'def tf__clip_if_large' in inspect.getsource(converted)


@pytest.mark.slow
@pytest.mark.parametrize('settings', [
    {},  # Noise2Noise on two synthetic corruptions, validated on images
    {'method': 'neighbor2neighbor', 'neighbor2neighbor_stride': 1, 'crop_size': 64},
    {'method': 'blind_spot', 'blind_spot_line': 'rows', 'blind_spot_line_span': 5,
     'jit_compile': True},
], ids=['pairs', 'neighbor2neighbor', 'blind_spot_rows_jit'])
def test_training_converts_no_n2n_function_with_autograph(tfrecord_dir, image_folder, tmp_path,
                                                          settings):
  # Converting the training step and the input pipeline took about 1.5 s of a 4-step
  # train.py's 6 (bench/autograph_startup.py); a function given to tf.data without
  # traced.as_written, or a tf.function without autograph=False, shows here.
  script = tmp_path / 'count.py'
  script.write_text(_TRAIN_COUNTING_CONVERSIONS)
  result = subprocess.run(
      [sys.executable, str(script), f'{tfrecord_dir}/*.tfrecord', str(tmp_path / 'run'),
       str(image_folder), json.dumps(settings)],
      env={**os.environ, 'PYTHONPATH': REPO_ROOT}, capture_output=True, text=True, timeout=300)
  assert result.returncode == 0 and 'trained' in result.stdout, result.stderr[-3000:]
  control, training = result.stdout.split('control done')
  assert 'converted n2n.training.losses' in control, control
  converted = [line for line in training.splitlines() if line.startswith('converted')]
  assert not [line for line in converted if line.startswith('converted n2n')], converted
