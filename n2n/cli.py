"""What the programs share: TensorFlow's start-up (quiet, with its fast CPU
kernels) and one-line errors.

Importing this module changes nothing. A program (n2n/apps, bench/,
datasets/) calls prepare_startup() first, before anything imports TensorFlow:
TensorFlow's C++ start-up lines reach stderr's file descriptor directly, and it
reads TF_ENABLE_ONEDNN_OPTS once, when it loads.
"""

import atexit
import contextlib
import logging
import os
import re
import sys
import threading

from n2n import errors

# Lines TensorFlow's C++ libraries print at start-up that tell a user nothing:
# absl's notice that logging is not initialised, the CUDA stub finding no
# driver, the CPU-feature banner and the oneDNN notice. They come before absl logging is set up,
# so TF_CPP_MIN_LOG_LEVEL does not reach them.
_STARTUP_NOISE = (
    re.compile(r'^WARNING: All log messages before absl::InitializeLog\(\) is called'),
    re.compile(r'^I\d{4} .*cudart_stub\.cc:\d+\] Could not find cuda drivers'),
    re.compile(r'^I\d{4} .*cpu_feature_guard\.cc:\d+\] This TensorFlow binary is optimized'),
    re.compile(r'^To enable the following instructions: .* rebuild TensorFlow'),
    # oneDNN's notice, on every CPU now that prepare_startup asks for its kernels.
    re.compile(r'^I\d{4} .*port\.cc:\d+\] oneDNN custom operations are on'),
)
# Lines TensorFlow's C++ ops print while a file is decoded, beside the Python
# error the caller turns into one line of its own (a skipped file's reason):
# the op's abort notice and libpng's warnings about harmless chunks.
_OP_NOISE = (
    re.compile(r'^[IWE]\d{4} .*local_rendezvous\.cc:\d+\] Local rendezvous is aborting'),
    re.compile(r'^W\d{4} .*png_io\.cc:\d+\] PNG warning:'),
)
# On a machine with no NVIDIA device at all, TensorFlow's failed probe of the
# driver is expected; where a GPU exists it is a real error and stays.
_NO_GPU_NOISE = re.compile(r'^E\d{4} .*cuda_platform\.cc:\d+\] failed call to cuInit')


def is_startup_noise(line, machine_has_nvidia_device):
  """True for a stderr line that only TensorFlow's start-up (or an op whose error
  the caller reports itself) prints and means nothing here."""
  if any(pattern.search(line) for pattern in _STARTUP_NOISE + _OP_NOISE):
    return True
  return not machine_has_nvidia_device and bool(_NO_GPU_NOISE.search(line))


def drop_startup_noise(text):
  """text without the lines is_startup_noise finds on this machine (for output
  captured while TensorFlow loaded: a test session's)."""
  has_gpu = _has_nvidia_device()
  return ''.join(line for line in text.splitlines(keepends=True)
                 if not is_startup_noise(line, has_gpu))


def _has_nvidia_device():
  try:
    return any(name.startswith('nvidia') for name in os.listdir('/dev'))
  except OSError:
    return False


def _filter_stderr():
  """Routes file descriptor 2 through a thread that drops start-up noise lines.

  C++ libraries write to the descriptor directly, so filtering sys.stderr would
  not reach them. Everything else passes through unchanged and in order.
  """
  if os.environ.get('N2N_RAW_STDERR') or not hasattr(os, 'pipe'):
    return
  has_gpu = _has_nvidia_device()
  original = os.dup(2)
  read_end, write_end = os.pipe()
  os.dup2(write_end, 2)
  os.close(write_end)

  def pump():
    with os.fdopen(read_end, 'rb', buffering=0) as pipe:
      pending = b''
      while chunk := pipe.read(65536):
        lines = (pending + chunk).split(b'\n')
        pending = lines.pop()
        kept = [line + b'\n' for line in lines
                if not is_startup_noise(line.decode('utf-8', 'replace'), has_gpu)]
        if kept:
          os.write(original, b''.join(kept))
      if pending:
        os.write(original, pending)

  thread = threading.Thread(target=pump, name='n2n-stderr-filter', daemon=True)
  thread.start()

  def restore():
    # Flush Python's buffer into the pipe, point fd 2 back at the terminal (which
    # closes the pipe's last writer), then let the thread write what is left.
    sys.stderr.flush()
    os.dup2(original, 2)
    thread.join(timeout=5)

  atexit.register(restore)


_prepared = False


def use_onednn_kernels():
  """Asks TensorFlow for its oneDNN CPU kernels, unless the caller chose
  (TF_ENABLE_ONEDNN_OPTS set already). Takes effect only before TensorFlow loads.

  TensorFlow turns them on by itself only on CPUs with AVX512 VNNI, BF16 or AMX;
  on others (AVX2 hosts) it falls back to Eigen's kernels. There a float32
  training step of the U-Net took 1.14x (the demo's 2D batch), 2.05x (the 3D
  tests' 8x32x32 crops) and 2.28x (8x64x64 crops) as long (bench/onednn_kernels.py,
  docs/bench/onednn_kernels_avx2.json).
  """
  os.environ.setdefault('TF_ENABLE_ONEDNN_OPTS', '1')


class _TensorFlowInfoFilter(logging.Filter):
  """Drops INFO lines that TensorFlow's own modules log through absl (a
  checkpoint's "Sharding callback duration: 15 microseconds", six times in the
  demo); their warnings, and every line of n2n's, pass."""

  def filter(self, record):
    inside_tensorflow = f'{os.sep}tensorflow{os.sep}' in record.pathname
    return record.levelno > logging.INFO or not inside_tensorflow


def prepare_startup():
  """Keeps TensorFlow's start-up noise off stderr for the rest of the process:
  its C++ INFO messages (TF_CPP_MIN_LOG_LEVEL, unless the caller set it) and the
  lines _filter_stderr drops; and asks for oneDNN's kernels (use_onednn_kernels).
  Call it once, first thing in a program, before TensorFlow is imported; later
  calls do nothing."""
  global _prepared
  if _prepared:
    return
  _prepared = True
  use_onednn_kernels()
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '1')
  _filter_stderr()
  # TensorFlow logs through absl's logger and through its own ('tensorflow').
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top  (no TF)
  absl_logging.get_absl_logger().addFilter(_TensorFlowInfoFilter())
  logging.getLogger('tensorflow').setLevel(logging.WARNING)


def user_errors():
  """The errors a user can cause with bad flags, paths or data; anything else
  is a bug and keeps its traceback."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (see the module docstring)
  return (ValueError, OSError, tf.errors.OpError, FloatingPointError)


@contextlib.contextmanager
def exit_on_user_error(program):
  """Turns a user error into 'program: error: message' on stderr and exit status 1."""
  try:
    yield
  except user_errors() as error:
    sys.stderr.flush()
    sys.exit(f'{program}: error: {errors.first_line(error)}')
