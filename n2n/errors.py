"""Turning long exception messages into the one line a user sees."""

import re

# TensorFlow wraps an op's message in where it ran and which op it was:
# '{{function_node __wrapped__DecodePng_device_/job:localhost/...}} Invalid PNG.
# [Op:DecodePng] name: ' says no more to a user than 'Invalid PNG.'.
_TF_WRAPPING = re.compile(r'\{\{function_node [^}]*\}\}\s*|\s*\[Op:[^\]]*\](\s*name:.*)?$')


def first_line(error):
  """The first non-empty line of an exception's message, or its type's name,
  without TensorFlow's op and device wrapping.

  TensorFlow's messages run to dozens of lines; the first says what happened.
  """
  message = getattr(error, 'message', None) or str(error) or type(error).__name__
  line = next((line.strip() for line in str(message).splitlines() if line.strip()), '')
  return _TF_WRAPPING.sub('', line).strip() or type(error).__name__
