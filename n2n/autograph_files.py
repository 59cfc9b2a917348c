"""Keeps AutoGraph's generated modules out of the user's temp folder.

AutoGraph (tf.function, tf.data's map) writes each Python function it converts
to a module, __autograph_generated_file*.py in tempfile.gettempdir(), imports
it, and removes the file only at interpreter exit, from an atexit hook
(tensorflow/python/autograph/pyct/loader.py). A process that ends without
running atexit hooks leaves every file it wrote: a train.py killed by SIGKILL
or a second Ctrl-C (about 30 files for a short run), a denoise.py killed (1), a
process ending with os._exit; and a long-lived process (a notebook calling
n2n.train, a test worker) keeps them until it ends.

install() removes each file as soon as its module is imported: the module
lives in memory from then on, and its source stays in linecache, so
tracebacks and inspect still show the converted code. Only a kill in the
instant between TensorFlow writing a file and importing it can leave one.
"""

import linecache
import os

_installed = False


def install():
  """Makes AutoGraph delete each generated module's file once imported, for
  the rest of the process (forked children included). Imports TensorFlow;
  later calls do nothing. The programs (n2n/apps) and the Python front door
  (n2n.train, n2n.Denoiser, n2n.export) call it before they trace anything.
  """
  global _installed
  if _installed:
    return
  from tensorflow.python.autograph.pyct import loader  # pylint: disable=g-import-not-at-top
  load_source = loader.load_source

  def load_source_and_remove_file(source, *args, **kwargs):
    module, file_name = load_source(source, *args, **kwargs)
    # mtime None: linecache.checkcache keeps the entry although the file is gone.
    linecache.cache[file_name] = (len(source), None, source.splitlines(True), file_name)
    try:
      os.remove(file_name)
    except FileNotFoundError:
      pass  # a temp-folder cleaner was first; TensorFlow's exit hook allows this too
    return module, file_name

  loader.load_source = load_source_and_remove_file
  _installed = True
