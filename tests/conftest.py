"""Shared fixtures. Splits the CPU into two logical devices before TF starts,
so MirroredStrategy runs for real with two replicas on one CPU."""

import collections
import gc
import io
import os
import sys

import pytest

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '1')
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)
# The scripts under datasets/ import n2n as installed (pip install -e .): the ones a test
# starts by their path import this checkout's n2n, installed or not.
os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, (REPO_ROOT, os.environ.get('PYTHONPATH'))))

# As the programs start (n2n/cli.prepare_startup): oneDNN's kernels on hosts where
# TensorFlow leaves them off (AVX2), before TensorFlow loads; programs the tests
# run inherit it.
from n2n import cli  # pylint: disable=g-import-not-at-top  (imports no TensorFlow)
cli.use_onednn_kernels()

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

# AutoGraph's generated modules leave the temp folder as soon as they are imported, as in
# the programs (their own start does it for the ones the tests run): a worker that ends
# without its exit hooks would otherwise leave them there.
from n2n import autograph_files  # pylint: disable=g-import-not-at-top
autograph_files.install()

from bench import recipes  # pylint: disable=g-import-not-at-top  (imports no TensorFlow)
recipes.two_logical_cpus()
from bench.recipes import images  # pylint: disable=g-import-not-at-top

# The environment every test starts from, taken after TensorFlow's own import
# (which adds its keys) and after every plugin's configuration (pytest-xvfb
# sets DISPLAY to its virtual X server: pytest_configure below), before any
# test module is imported. Libraries change os.environ at import or when
# called (tf2onnx sets TF_CPP_MIN_LOG_LEVEL=3 when imported; bioimageio.core's
# model test set TF_ENABLE_ONEDNN_OPTS=0 before it ran in a process of its
# own), and every subprocess a later test starts inherits it: a test's outcome
# would then depend on what ran before it (a train.py without oneDNN runs
# bfloat16 emulated, several times slower, with other numerics).
_ENVIRONMENT = dict(os.environ)


@pytest.fixture
def session_environment():
  """The environment the session started with (what fresh_environment restores)."""
  return dict(_ENVIRONMENT)


@pytest.fixture(autouse=True, scope='module')
def fresh_keras_state():
  """After each file, Keras forgets the models it built (and Python collects
  them). Under xdist a worker runs dozens of files in one process: there, a
  file that traces a model ran 3x slower than alone (the two-replica float16
  test: 50.6 s after tests/model, data and inference in one process, 17 s
  alone, 2026-11-27); with this reset it ran as fast as alone."""
  yield
  keras.utils.clear_session(free_memory=True)
  # What survives that collection stays out of every later one: a full collection walks
  # every object the process holds, and a worker's heap grows file by file (1.4-1.9
  # million objects at the end of a suite, 2026-11-28); Keras, restore.load_weights and
  # Python itself run dozens of full collections in a worker, about 1 s each late in the
  # run: 227 s of the suite's 1154 s of test time went to them.
  gc.freeze()


@pytest.fixture(autouse=True)
def fresh_environment():
  """Each test starts with the environment the session started with."""
  os.environ.clear()
  os.environ.update(_ENVIRONMENT)
  yield


QUALITY_OPTION = '--quality'
EVIDENCE_OPTION = '--evidence'
# The tiers CI leaves out: marker -> (the option that runs them, what they are).
OPTIONAL_TIERS = {
    'quality': (QUALITY_OPTION, 'compares how well two trainings denoise, for minutes each, '
                'against a margin measured over seeds'),
    'evidence': (EVIDENCE_OPTION, 'runs a measuring tool of the evidence package (bench/) end '
                 'to end; run before publishing its figures'),
}


def pytest_addoption(parser):
  for marker, (option, what) in OPTIONAL_TIERS.items():
    parser.addoption(option, action='store_true', default=False,
                     help=f'also run the {marker} tests: each {what}')


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
  # Last of every plugin's configure hook: pytest-xvfb's DISPLAY is in the environment
  # the tests start from (without it, the first Qt application of a worker aborted).
  _ENVIRONMENT.clear()
  _ENVIRONMENT.update(os.environ)
  config.addinivalue_line('markers', 'slow: trains a model, or runs programs or exports, for '
                          'several seconds or more; pytest -m "not slow" leaves these out')
  for marker, (option, what) in OPTIONAL_TIERS.items():
    config.addinivalue_line('markers', f'{marker}: {what}; skipped unless pytest is given '
                            f'{option}')
  # pytest-xdist's --dist loadfile hands out the files with the most tests first
  # unless told not to (its --loadscope-reorder, on by default), which would undo
  # the order pytest_collection_modifyitems gives: most files of slow tests hold
  # one to three, and they came last. The setting is read from xdist 3.8.0
  # (requirements-test.txt asks for it), and is inert without xdist.
  config.option.loadscopereorder = False


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
  """What this file's imports printed while pytest held the process's output
  (TensorFlow's start-up lines: oneDNN's notice, no CUDA driver) comes out now,
  less those lines: pytest would print it after the run's summary, whose line
  should be the last a user reads."""
  capture = session.config.pluginmanager.getplugin('capturemanager')
  if capture is None or not capture.is_globally_capturing():
    return
  out, err = capture.read_global_capture()
  with capture.global_and_fixture_disabled():
    sys.stdout.write(out)
    sys.stderr.write(cli.drop_startup_noise(err))


def pytest_terminal_summary(terminalreporter):
  """One line per test file that skipped itself for want of something this host
  lacks (an X server, an extra), with what to do: -q would show only a count.
  The optional tiers' skips (--quality, --evidence) are asked for and not listed."""
  tiers = tuple(f'a {marker} test' for marker in OPTIONAL_TIERS)
  reasons = [(os.path.relpath(path, REPO_ROOT), reason.removeprefix('Skipped: '))
             for path, _, reason in (report.longrepr
                                     for report in terminalreporter.stats.get('skipped', [])
                                     if isinstance(report.longrepr, tuple))]
  missing = collections.Counter((path, reason) for path, reason in reasons
                                if not reason.startswith(tiers))
  for (path, reason), count in sorted(missing.items()):
    terminalreporter.write_line(f'not run here: {path} ({count} skipped): {reason}')


def slow_files_first(items):
  """items (pytest items, or anything with .path and get_closest_marker) with
  the files that hold slow tests first, each file's tests in their own order
  (a stable sort on one key: is the item's file without slow tests)."""
  with_slow_tests = {item.path for item in items if item.get_closest_marker('slow')}
  return sorted(items, key=lambda item: item.path not in with_slow_tests)


def skip_tier(items, marker):
  """Marks every test of items that carries marker (an OPTIONAL_TIERS key) skipped."""
  skip = pytest.mark.skip(reason=f'a {marker} test: run with {OPTIONAL_TIERS[marker][0]}')
  for item in items:
    if item.get_closest_marker(marker):
      item.add_marker(skip)


def pytest_collection_modifyitems(config, items):
  """Files that hold slow tests run first, each file's tests in their own order.
  Under -n 2 --dist loadfile each worker takes the next file when it is free,
  so a file of several minutes taken last ran alone while the other worker sat
  idle (the suite took 41.6 min where its two halves would have taken 38.5);
  taken first, the many short files even out the end.

  The optional tiers are skipped unless asked for: quality tests (what they
  check, one trained model denoising better than another by a margin, is
  measured over seeds by the bench/ spread tools; CI keeps a learning test for
  every method and scheme) and the evidence package's end-to-end runs."""
  items[:] = slow_files_first(items)
  for marker, (option, _) in OPTIONAL_TIERS.items():
    if not config.getoption(option):
      skip_tier(items, marker)


def pillow_bytes(image, mode, fmt):
  """image [H, W, 3] uint8 converted to a Pillow mode (P, CMYK, LA...) and encoded as fmt.

  Pillow is imageio's own backend; tests use it only to make the odd files real folders hold.
  """
  from PIL import Image  # pylint: disable=g-import-not-at-top
  buffer = io.BytesIO()
  Image.fromarray(image).convert(mode).save(buffer, fmt)
  return buffer.getvalue()


@pytest.fixture(scope='session')
def image_folder(tmp_path_factory):
  """A folder of 6 small PNGs (one grayscale, one RGBA) plus a corrupt file."""
  return images.write_image_folder(tmp_path_factory.mktemp('images'))


@pytest.fixture(scope='session')
def tfrecord_dir(image_folder, tmp_path_factory):
  """TFRecords of image_folder written by the dataset tool's library (2 shards)."""
  return images.write_image_records(image_folder, tmp_path_factory.mktemp('records'))


# The untrained runs' U-Net width (the paper's is 48): what the tests that share
# them check (file layouts, tiling, schemes, devices, shards, exports matching the
# checkpoint) does not depend on the width, and at 8 the network costs about 1/30 of
# the paper's per pixel (export.py --bioimageio runs it on 384 x 384 test images).
UNTRAINED_RUN_WIDTH = 8


def _untrained_run(tmp_path_factory, **flags):
  """A run folder with config.json and one checkpoint of a seeded, untrained RGB
  U-Net of UNTRAINED_RUN_WIDTH."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from n2n import config as config_lib  # pylint: disable=g-import-not-at-top
  from n2n import run_dir  # pylint: disable=g-import-not-at-top
  from n2n.training import trainer as trainer_lib  # pylint: disable=g-import-not-at-top
  folder = tmp_path_factory.mktemp('run')
  config = config_lib.train_config(train_data='unused', model_dir=str(folder), seed=3,
                                  precision='float32', network_width=UNTRAINED_RUN_WIDTH,
                                  **flags)
  trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'float32',
                                checkpoint_dir=str(folder))
  trainer.save(1)
  run_dir.write_config(str(folder), config)
  return folder


@pytest.fixture(scope='session')
def denoise_model_dir(tmp_path_factory):
  """A run folder with config.json and one checkpoint of a seeded, untrained RGB U-Net."""
  return _untrained_run(tmp_path_factory)


@pytest.fixture(scope='session')
def orientations_model_dir(tmp_path_factory):
  """The same for Neighbor2Neighbor through pixel-shuffle 2/2 that denoises over
  the 8 orientations (what train.py chooses for correlated noise)."""
  return _untrained_run(tmp_path_factory, method='neighbor2neighbor', noise='gaussian',
                        neighbor2neighbor_stride=2, neighbor2neighbor_inference_stride=2,
                        neighbor2neighbor_inference_orientations=8)


@pytest.fixture(scope='session')
def scheme_model_dir(tmp_path_factory):
  """The same for blind-spot training through pixel-shuffle (stride 4) that
  denoises at stride 2 with two refinement passes (n2n/inference/schemes.py)."""
  return _untrained_run(tmp_path_factory, method='blind_spot', noise='gaussian',
                        blind_spot_stride=4, blind_spot_inference_stride=2,
                        blind_spot_refinement_passes=2, blind_spot_line='none')
