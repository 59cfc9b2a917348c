"""Turning long exception messages into the one line a user sees."""


def first_line(error):
  """The first non-empty line of an exception's message, or its type's name.

  TensorFlow's messages run to dozens of lines; the first says what happened.
  """
  message = getattr(error, 'message', None) or str(error) or type(error).__name__
  return next((line.strip() for line in str(message).splitlines() if line.strip()),
              type(error).__name__)
