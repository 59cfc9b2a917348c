"""The runs trained in this napari session, per viewer: the Train widget adds
the folder of each run it trains (or stops with a checkpoint), and the Denoise
widget offers them as models, choosing each as it comes.
"""

import weakref

from psygnal import Signal


class TrainedRuns:
  """A viewer's runs trained in this session, newest first.

  Attributes:
    folders: the runs' model folders (absolute paths), newest first.
    added: a signal, added(folder), each time a run is added (again).
  """
  added = Signal(str)

  def __init__(self):
    self.folders = []

  def add(self, folder):
    """folder first in folders (a run trained further moves to the front); emits added."""
    if folder in self.folders:
      self.folders.remove(folder)
    self.folders.insert(0, folder)
    self.added.emit(folder)


_BY_VIEWER = weakref.WeakKeyDictionary()


def of(viewer):
  """The viewer's TrainedRuns, which the widgets docked in it share."""
  return _BY_VIEWER.setdefault(viewer, TrainedRuns())
