"""The child process the widgets' calls run in, one call at a time: a fresh
one per call (in_child), or one a widget keeps between calls (Child), so what
a call leaves there serves the next (the Denoise widget's loaded model).

Why a child process: TensorFlow's libraries carry their own LLVM and export
its symbols globally, and so does the system LLVM that Mesa's OpenGL drivers
load (llvmpipe under Xvfb; Intel's and AMD's drivers on Debian 12 and
others). In one process whichever loads second binds to the other's LLVM and
crashes (tensorflow/tensorflow#109933). napari's viewer has its OpenGL up
before a plugin runs, so TensorFlow stays out of napari's process: the child
(started fresh, 'spawn') imports n2n, calls the front door and sends back its
progress and result. The viewer's process keeps its own responsiveness too.

No napari or Qt here; the calls themselves are calls.py's.
"""

import logging
import multiprocessing
import queue
import sys
import threading
import traceback
import weakref

from n2n import cli

_LOG = logging.getLogger(__name__)
# How often the worker thread looks for the child's messages and a stop, in seconds.
_POLL = 0.1


# The exception a cancelled Denoiser call raises (n2n.DenoisingCancelled), by name: what
# ChildError's message starts with when Cancel ended a call.
CANCELLED = 'DenoisingCancelled'


class ChildError(RuntimeError):
  """An exception other than ValueError raised in the child, by type name and message."""


def _child_main(requests, messages, stop):
  """In the child: answers requests (function, args, kwargs, names) one at a
  time, each as function(*args, **kwargs, stop=stop, progress=put) with its
  result or exception put on messages, until a None request or the end of the
  process that started it (napari closed or killed)."""
  cli.use_onednn_kernels()  # as the programs start: before TensorFlow loads
  parent = multiprocessing.parent_process()

  def progress(*values):
    messages.put(('progress', values))

  while True:
    try:
      request = requests.get(timeout=1.0)
    except queue.Empty:
      if parent is not None and not parent.is_alive():
        return
      continue
    if request is None:
      return
    function, args, kwargs, names = request
    try:
      result = function(*args, **kwargs, **{names[0]: stop, names[1]: progress})
    except BaseException as error:  # pylint: disable=broad-except  (all of it goes back)
      messages.put(('raised', (type(error).__name__, str(error), isinstance(error, ValueError),
                               traceback.format_exc())))
    else:
      messages.put(('returned', result))


def _next_message(messages, process):
  """The child's next message, None while there is none yet; ChildError when
  the child ended without one (killed, out of memory, crashed)."""
  try:
    return messages.get(timeout=_POLL)
  except queue.Empty:
    if process.is_alive():
      return None
  try:  # it may have put its last message just before ending
    return messages.get(timeout=1.0)
  except queue.Empty:
    raise ChildError(f'the n2n process ended with exit code {process.exitcode} before it '
                     'answered') from None


# One start at a time swaps the process's __main__ (_start_without_users_main).
_MAIN_SWAP = threading.Lock()


def _start_without_users_main(process):
  """process.start() with a module of n2n (cli, which runs nothing when
  imported) as the main module the spawned child imports first. Spawn
  re-imports the parent's __main__ in the child: a user's script that opens
  napari without `if __name__ == '__main__':` (as napari's own examples do) would
  run again there and fail ("An attempt has been made to start a new process
  before the current process has finished its bootstrapping phase")."""
  main = sys.modules['__main__']
  sys.modules['__main__'] = cli
  try:
    process.start()
  finally:
    sys.modules['__main__'] = main


def _end(process, requests, stop, wait):
  """Asks process to end (a stop for the call under way, then no more
  requests) and terminates it if it has not within 30 s; waits for that in a
  thread of its own unless wait."""

  def join():
    process.join(timeout=30)
    if process.is_alive():
      process.terminate()

  stop.set()
  requests.put(None)
  if wait:
    join()
  else:
    threading.Thread(target=join, daemon=True).start()


def _answer(process, messages, child_stop, stop, report):
  """The result of the call process is making (raised as Child.call says),
  its progress handed to report; stop is passed on to child_stop."""
  while True:
    if stop.is_set():
      child_stop.set()
    message = _next_message(messages, process)
    if message is None:
      continue
    kind, value = message
    if kind == 'progress':
      report(*value)
    elif kind == 'returned':
      return value
    else:
      name, text, value_error, child_traceback = value
      _LOG.error('n2n child process:\n%s', child_traceback)
      raise ValueError(text) if value_error else ChildError(f'{name}: {text}')


class Child:
  """A spawned n2n process (see the module's docstring) that answers calls one
  at a time and lives on between them, so what a call leaves in it (the
  Denoise widget's loaded model, calls.py) serves the next. It starts at the
  first call, again at the next call after close(), and ends at close(), when
  this object is collected, or when napari's process ends."""

  def __init__(self):
    self._process = None
    self._requests = self._messages = self._stop = None
    self._finalizer = None

  @property
  def pid(self):
    """The process's id while it runs, else None."""
    return self._process.pid if self.alive else None

  @property
  def alive(self):
    return self._process is not None and self._process.is_alive()

  def _start(self):
    context = multiprocessing.get_context('spawn')
    self._requests, self._messages, self._stop = context.Queue(), context.Queue(), context.Event()
    self._process = context.Process(target=_child_main, daemon=True,
                                    args=(self._requests, self._messages, self._stop))
    with _MAIN_SWAP:
      _start_without_users_main(self._process)
    self._finalizer = weakref.finalize(self, _end, self._process, self._requests, self._stop,
                                       False)
    # At exit multiprocessing ends its daemonic children itself, and no thread may start.
    self._finalizer.atexit = False

  def call(self, function, args, kwargs, names, stop, report):
    """In a worker thread: function(*args, **kwargs) in the process, with
    names[0] its stop event (set when stop, a threading.Event, is) and
    names[1] a function that hands its progress to report(*values). Returns
    its result, or raises ValueError (with the child's message) or ChildError;
    either ends the process, unless the call was cancelled (CANCELLED)."""
    if not self.alive:
      self._start()
    # This call's own: close() from the GUI thread may start the next process meanwhile.
    process, messages, child_stop = self._process, self._messages, self._stop
    child_stop.clear()
    self._requests.put((function, args, kwargs, names))
    try:
      return _answer(process, messages, child_stop, stop, report)
    except (ValueError, ChildError) as error:
      if self._process is process and not (stop.is_set() and str(error).startswith(CANCELLED)):
        self.close()
      raise

  def close(self, wait=False):
    """Ends the process (after the call under way, which is asked to stop);
    waits for it to end only with wait."""
    if self._process is None:
      return
    self._finalizer.detach()
    _end(self._process, self._requests, self._stop, wait)
    self._process = None


def in_child(function, args, kwargs, names, stop, report):
  """In the worker thread: function run in a fresh child process, ended after
  it (Child.call says the rest)."""
  child = Child()
  try:
    return child.call(function, args, kwargs, names, stop, report)
  finally:
    child.close(wait=True)
