"""Functions for tf.data and tf.function to trace as written, without AutoGraph.

AutoGraph rewrites a traced Python function, and every n2n function it calls,
into graph control flow: about 2 s of a fresh process's first input pipeline
and 1 s of its training step, with nothing to rewrite in n2n's graph code,
whose branches are on Python values or written as tf.cond / tf.where /
tf.while_loop. A Python `if` or `for` on a tensor in a function given to
as_written fails when traced (OperatorNotAllowedInGraphError), never silently.
"""

import tensorflow as tf


def as_written(fn):
  """fn, marked for tf.data's map, filter and flat_map to trace without AutoGraph."""
  return tf.autograph.experimental.do_not_convert(fn)
