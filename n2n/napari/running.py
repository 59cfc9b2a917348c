"""One front-door call at a time for a widget: in a child process driven by
a napari worker thread, its progress in napari's activity bar and in the
widget, its result handed back to the GUI thread, its error as a one-line
notification (never a traceback dialog; the child's traceback goes to the log).

Why a child process: TensorFlow's libraries carry their own LLVM and export
its symbols globally, and so does the system LLVM that Mesa's OpenGL drivers
load (llvmpipe under Xvfb; Intel's and AMD's drivers on Debian 12 and
others). In one process whichever loads second binds to the other's LLVM and
crashes (tensorflow/tensorflow#109933). napari's viewer has its OpenGL up
before a plugin runs, so TensorFlow stays out of napari's process: the child
(started fresh, 'spawn') imports n2n, calls the front door and sends back its
progress and result. The viewer's process keeps its own responsiveness too.
"""

import logging
import multiprocessing
import queue
import sys
import threading
import traceback

from magicgui import widgets
from napari.qt.threading import create_worker
from napari.utils import notifications
from napari.utils import progress as napari_progress
from qtpy.QtCore import QObject
from qtpy.QtCore import Signal

from n2n import cli

_LOG = logging.getLogger(__name__)
# How often the worker thread looks for the child's messages and a stop, in seconds.
_POLL = 0.1


# The exception a cancelled Denoiser call raises (n2n.DenoisingCancelled), by name: what
# ChildError's message starts with when Cancel ended a call.
CANCELLED = 'DenoisingCancelled'


class ChildError(RuntimeError):
  """An exception other than ValueError raised in the child, by type name and message."""


def one_line(error):
  """An exception as one line for a notification: a ValueError's own message
  (n2n words each one for the user), else the exception's type and first line."""
  lines = str(error).strip().splitlines()
  message = lines[0] if lines else ''
  if isinstance(error, ValueError) and message:
    return message
  return f'{type(error).__name__}: {message}' if message else type(error).__name__


def show_error(error):
  """error (an exception or a message) as a one-line napari notification."""
  message = error if isinstance(error, str) else one_line(error)
  notifications.show_error(f'n2n: {message}')
  return message


def _child_main(function, args, kwargs, names, messages, stop):
  """In the child: function(*args, **kwargs, stop=stop, progress=put) with its
  result or exception put on messages."""
  cli.use_onednn_kernels()  # as the programs start: before TensorFlow loads

  def progress(*values):
    messages.put(('progress', values))

  try:
    result = function(*args, **kwargs, **{names[0]: stop, names[1]: progress})
  except BaseException as error:  # pylint: disable=broad-except  (all of it goes back)
    messages.put(('raised', (type(error).__name__, str(error), isinstance(error, ValueError),
                             traceback.format_exc())))
  else:
    messages.put(('returned', result))


def _next_message(messages, process):
  """The child's next message, None while there is none yet; RuntimeError when
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


def in_child(function, args, kwargs, names, stop, report):
  """In the worker thread: function run in a fresh child process (see the
  module's docstring); stop (a threading.Event) is passed on to the child's
  own event; report(*values) gets the child's progress. Returns its result, or
  raises ValueError (with the child's message) or ChildError."""
  context = multiprocessing.get_context('spawn')
  messages, child_stop = context.Queue(), context.Event()
  process = context.Process(target=_child_main, daemon=True,
                            args=(function, args, kwargs, names, messages, child_stop))
  with _MAIN_SWAP:
    _start_without_users_main(process)
  try:
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
  finally:
    process.join(timeout=30)
    if process.is_alive():
      process.terminate()


def buttons(start_text, stop_text):
  """(start button, stop button, a row holding both): the stop one starts disabled."""
  start = widgets.PushButton(text=start_text)
  stop = widgets.PushButton(text=stop_text, enabled=False)
  return start, stop, widgets.Container(layout='horizontal', labels=False, widgets=[start, stop])


class _Relay(QObject):
  """Carries progress from the worker thread to the GUI thread: Qt queues a
  signal emitted in another thread to the thread its receiver lives in."""
  reported = Signal(object)


class Call:
  """A widget's running call: function(*args, stop=event, progress=report, **kwargs)
  in a child process driven by a worker thread (in_child), where function is
  one of calls.py's and report(done, total, *more) its progress.

  Attributes:
    stop: the threading.Event the call was handed (Stop and Cancel set it).
  """

  def __init__(self, description, on_progress=None, on_done=None, on_error=None,
               on_finished=None, stop_name='stop', progress_name='progress'):
    """on_progress(done, total, *more), on_done(result), on_error(message) and
    on_finished() run in the GUI thread; stop_name and progress_name are the
    function's argument names for the Event and the progress function."""
    self._description = description
    self._on_progress, self._on_done = on_progress, on_done
    self._on_error, self._on_finished = on_error, on_finished
    self._names = stop_name, progress_name
    self._relay = _Relay()
    self._relay.reported.connect(self._reported)
    self._bar = None
    self.stop = threading.Event()
    self.worker = None

  @property
  def running(self):
    return self.worker is not None

  def start(self, function, *args, **kwargs):
    """Starts function in a worker thread; the call it makes is the widget's only logic."""
    self.stop = threading.Event()
    self._bar = napari_progress(total=0, desc=self._description)
    self.worker = create_worker(in_child, function, args, kwargs, self._names, self.stop,
                                self._report, _start_thread=False,
                                _connect={'returned': self._returned, 'errored': self._errored,
                                          'finished': self._finished})
    self.worker.start()

  def _report(self, done, total, *more):
    # In the worker thread: hand the values over, do no GUI work here.
    self._relay.reported.emit((done, total, *more))

  def _reported(self, values):
    done, total = values[:2]
    if self._bar is not None:
      if self._bar.total != total:
        self._bar.total = total
      self._bar.n = done
      self._bar.refresh()
    if self._on_progress:
      self._on_progress(*values)

  def _returned(self, result):
    if self._on_done:
      self._on_done(result)

  def _errored(self, error):
    if self.stop.is_set() and str(error).startswith(CANCELLED):
      # Cancelled: the call ended as asked, with the exception it raises for that.
      notifications.show_info(f'{self._description}: cancelled')
      message = 'cancelled'
    else:
      _LOG.error('%s failed', self._description, exc_info=error)
      message = show_error(error)
    if self._on_error:
      self._on_error(message)

  def _finished(self):
    if self._bar is not None:
      self._bar.close()
      self._bar = None
    self.worker = None
    if self._on_finished:
      self._on_finished()
