"""One front-door call at a time for a widget: in a child process (child.py
says why) driven by a napari worker thread, its progress in napari's activity
bar and in the widget, its result handed back to the GUI thread, its error as
a one-line notification (never a traceback dialog; the child's traceback goes
to the log).
"""

import logging
import threading

from magicgui import widgets
from napari.qt.threading import create_worker
from napari.utils import notifications
from napari.utils import progress as napari_progress
from qtpy.QtCore import QEvent
from qtpy.QtCore import QObject
from qtpy.QtCore import Signal

from n2n.napari import child as child_lib

_LOG = logging.getLogger(__name__)


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


def buttons(start_text, stop_text):
  """(start button, stop button, a row holding both): the stop one starts disabled."""
  start = widgets.PushButton(text=start_text)
  stop = widgets.PushButton(text=stop_text, enabled=False)
  return start, stop, widgets.Container(layout='horizontal', labels=False, widgets=[start, stop])


def text_line(label=''):
  """A label for what a widget reports ('denoising: 3/8 tiles'): it wraps rather than
  widening the dock."""
  line = widgets.Label(label=label, value='')
  line.native.setWordWrap(True)
  line.native.setMinimumWidth(40)  # else Qt asks a wrapped label's width of a few lines
  return line


def below(container, *items):
  """Adds items (magicgui widgets or QWidgets) under container's labelled fields, across
  its whole width: its buttons, status line and plot."""
  for item in items:
    container.native.layout().addWidget(getattr(item, 'native', item))


def folder_field(label, tooltip):
  """A folder field whose choose button is '…' (its tooltip says what it does): narrow
  enough for the tabbed dock (tabs.py)."""
  field = widgets.FileEdit(label=label, mode='d', tooltip=tooltip)
  field.choose_btn.text = '…'
  field.choose_btn.tooltip = 'Choose a folder'
  return field


def chosen_folder(field):
  """A folder_field's text, stripped; '' where none is chosen (an empty FileEdit holds
  Path('.'), which shows as '.')."""
  folder = str(field.value).strip()
  return '' if folder == '.' else folder


class _ClosedWatch(QObject):
  """Calls close() when its widget is taken out of its parent: napari's
  remove_dock_widget (the dock's close button) unparents the docked widget."""

  def __init__(self, widget, close):
    super().__init__(widget)
    self._close = close
    widget.installEventFilter(self)

  def eventFilter(self, watched, event):  # pylint: disable=invalid-name  (Qt's name)
    if event.type() == QEvent.ParentChange and watched.parent() is None:
      self._close()
    return False


def when_closed(widget, close):
  """Calls close() when the QWidget widget closes: taken out of napari's dock,
  or destroyed with napari's window."""
  _ClosedWatch(widget, close)
  widget.destroyed.connect(lambda *_: close())


class _Relay(QObject):
  """Carries progress from the worker thread to the GUI thread: Qt queues a
  signal emitted in another thread to the thread its receiver lives in."""
  reported = Signal(object)


class Call:
  """A widget's running call: function(*args, stop=event, progress=report, **kwargs)
  in a child process driven by a worker thread (a fresh one, child.in_child, or the
  widget's kept Child), where function is one of calls.py's and
  report(done, total, *more) its progress.

  Attributes:
    stop: the threading.Event the call was handed (Stop and Cancel set it).
  """

  def __init__(self, description, on_progress=None, on_done=None, on_error=None,
               on_finished=None, stop_name='stop', progress_name='progress', child=None):
    """on_progress(done, total, *more), on_done(result), on_error(message) and
    on_finished() run in the GUI thread; stop_name and progress_name are the
    function's argument names for the Event and the progress function; child:
    a Child to make the calls in, or None for a fresh process each."""
    self._child = child
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
    run = self._child.call if self._child is not None else child_lib.in_child
    self.worker = create_worker(run, function, args, kwargs, self._names, self.stop,
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
    if self.stop.is_set() and str(error).startswith(child_lib.CANCELLED):
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
