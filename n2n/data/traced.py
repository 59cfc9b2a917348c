"""Functions for tf.data and tf.function to trace as written, without AutoGraph.

AutoGraph rewrites a traced Python function, and every n2n function it calls,
into graph control flow: about 40 functions for a training run's input pipeline
and step, converted anew in every process (a 4-step train.py took a median 6.0 s
before, 4.5 s since: docs/performance.md), with nothing to rewrite in n2n's graph code,
whose branches are on Python values or written as tf.cond / tf.where /
tf.while_loop. Without AutoGraph a Python `if`, `for` or len() on a tensor
fails when traced (a TypeError), and a Python print() of a tensor prints once,
at tracing, not per element: write tf.cond, tf.while_loop, tf.shape, tf.print.
"""

import tensorflow as tf


def as_written(fn):
  """fn, marked for tf.data's map, filter and flat_map to trace without AutoGraph."""
  return tf.autograph.experimental.do_not_convert(fn)
