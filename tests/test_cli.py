"""The entry points' shared behaviour: a quiet start-up and one-line errors."""

import os
import subprocess
import sys

from n2n import cli
from tests.conftest import REPO_ROOT

NOISE = [
    'WARNING: All log messages before absl::InitializeLog() is called are written to STDERR',
    'I0000 00:00:1795401631.202356    2083 cudart_stub.cc:31] Could not find cuda drivers on '
    'your machine, GPU will not be used.',
    'I0000 00:00:1795401631.293360    2083 cpu_feature_guard.cc:227] This TensorFlow binary is '
    'optimized to use available CPU instructions in performance-critical operations.',
    'I0000 00:00:1795432630.936804   11950 port.cc:153] oneDNN custom operations are on. You may '
    'see slightly different numerical results due to floating-point round-off errors from '
    'different computation orders.',
]
CUINIT = ('E0000 00:00:1795401645.394869    2102 cuda_platform.cc:52] failed call to cuInit: '
          'INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)')


def test_startup_noise_is_recognised_and_real_errors_are_not():
  assert all(cli.is_startup_noise(line, machine_has_nvidia_device=False) for line in NOISE)
  assert cli.is_startup_noise(CUINIT, machine_has_nvidia_device=False)
  # On a machine with a GPU the same failure is a real error.
  assert not cli.is_startup_noise(CUINIT, machine_has_nvidia_device=True)
  for real in ('E0000 00:00:1.0 1 op_kernel.cc:1] OP_REQUIRES failed: out of memory',
               'W0000 00:00:1.0 1 loader.cc:1] could not load dynamic library',
               'train.py: error: --crop_size=48 must be a positive multiple of 32'):
    assert not cli.is_startup_noise(real, machine_has_nvidia_device=False)


def test_a_users_first_screen_shows_only_the_error():
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'train.py'), '--train_data=/nonexistent/*',
       '--model_dir=/tmp/unused', '--crop_size=48'],
      capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
  assert result.returncode == 1
  assert result.stderr.strip().splitlines() == [
      'train.py: error: --crop_size=48 must be a positive multiple of 32']


def test_importing_the_package_changes_nothing_in_the_process():
  """No import redirects stderr or loads TensorFlow: only a program's launcher
  quiets the start-up (cli.prepare_startup), explicitly."""
  code = ('import os, sys, threading\n'
          'before = os.fstat(2).st_ino\n'
          'import n2n, n2n.cli, n2n.apps, n2n.config\n'
          "assert os.fstat(2).st_ino == before, 'fd 2 was redirected'\n"
          "assert 'tensorflow' not in sys.modules, 'tensorflow imported'\n"
          "assert [t.name for t in threading.enumerate()] == ['MainThread']\n"
          "assert 'TF_ENABLE_ONEDNN_OPTS' not in os.environ, 'oneDNN asked for on import'\n"
          'n2n.cli.prepare_startup()\n'
          "assert os.fstat(2).st_ino != before and os.environ['TF_CPP_MIN_LOG_LEVEL'] == '1'\n"
          "assert os.environ['TF_ENABLE_ONEDNN_OPTS'] == '1'\n")
  env = {key: value for key, value in os.environ.items()
         if key not in ('TF_CPP_MIN_LOG_LEVEL', 'N2N_RAW_STDERR', 'TF_ENABLE_ONEDNN_OPTS')}
  result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=60, cwd=REPO_ROOT, env=env)
  assert result.returncode == 0, result.stderr[-2000:]


def test_onednn_kernels_are_asked_for_unless_the_caller_chose(monkeypatch):
  monkeypatch.delenv('TF_ENABLE_ONEDNN_OPTS', raising=False)
  cli.use_onednn_kernels()
  assert os.environ['TF_ENABLE_ONEDNN_OPTS'] == '1'
  monkeypatch.setenv('TF_ENABLE_ONEDNN_OPTS', '0')
  cli.use_onednn_kernels()
  assert os.environ['TF_ENABLE_ONEDNN_OPTS'] == '0'


def test_every_test_starts_from_the_sessions_environment(session_environment):
  """tests/conftest.py restores os.environ before each test: tf2onnx, which the
  export tests import when the suite is collected, sets TF_CPP_MIN_LOG_LEVEL=3
  in it, which every program a later test runs would inherit (hiding
  TensorFlow's C++ errors). In a whole-suite run this fails without the
  restore; run alone it has nothing to catch."""
  now = {key: value for key, value in os.environ.items() if key != 'PYTEST_CURRENT_TEST'}
  assert now == session_environment
  assert os.environ.get('TF_CPP_MIN_LOG_LEVEL') == '1'
