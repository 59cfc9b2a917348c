"""What the entry points share: quiet TensorFlow start-up, one-line errors."""

import contextlib
import os
import sys

# TensorFlow's C++ start-up banner (INFO level) is noise for users; warnings stay.
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '1')

import tensorflow as tf  # pylint: disable=g-import-not-at-top

# Errors a user can cause with bad flags, paths or data; anything else is a bug
# and keeps its traceback.
USER_ERRORS = (ValueError, OSError, tf.errors.OpError, FloatingPointError)


def first_line(error):
  """The first non-empty line of an exception's message (TF messages run long)."""
  message = getattr(error, 'message', None) or str(error) or type(error).__name__
  return next((line.strip() for line in message.splitlines() if line.strip()), message)


@contextlib.contextmanager
def exit_on_user_error(program):
  """Turns a user error into 'program: error: message' on stderr and exit status 1."""
  try:
    yield
  except USER_ERRORS as error:
    sys.stderr.flush()
    sys.exit(f'{program}: error: {first_line(error)}')
