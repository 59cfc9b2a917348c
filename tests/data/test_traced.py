"""traced.as_written: tf.data traces the function as written, without AutoGraph."""

import pytest
import tensorflow as tf

from n2n.data import traced


def _absolute(value):
  # A Python `if` on a tensor: only AutoGraph turns it into graph control flow.
  if value < 0:
    return -value
  return value


def test_autograph_would_rewrite_a_python_if_on_a_tensor():
  values = tf.data.Dataset.from_tensor_slices([-2.0, 3.0]).map(_absolute)
  assert [float(value) for value in values] == [2.0, 3.0]


def test_as_written_traces_without_autograph_and_says_so_at_trace_time():
  with pytest.raises(TypeError, match='bool'):
    tf.data.Dataset.from_tensor_slices([-2.0, 3.0]).map(traced.as_written(_absolute))


def test_as_written_gives_what_the_function_gives():
  values = tf.data.Dataset.from_tensor_slices([-2.0, 3.0]).map(
      traced.as_written(lambda value: tf.abs(value) * 2.0))
  assert [float(value) for value in values] == [4.0, 6.0]
