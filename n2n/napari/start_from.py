"""The Train widget's Start from: a new run's first weights (train.py's --init_from),
new ones (scratch), a model n2n ships for layers of the chosen channels, a run
trained in this session (trained_runs.py) or a run's folder.

The choice is only passed on: the run compares the source's network with its own
and refuses another one in one line naming --init_from (n2n/training/init_from.py).
"""

import os

from magicgui import widgets

from n2n import shipped
from n2n.napari import running
from n2n.napari import trained_runs

# The choices' values: SCRATCH new weights; ('shipped', name) a model n2n ships;
# ('trained', folder) a run trained in this session; FOLDER the Start folder field.
SCRATCH, FOLDER = ('scratch', ''), ('folder', '')


def choices(viewer, channels):
  """Start from's (label, value) choices: scratch, the folder field, the models n2n
  ships for layers of `channels` channels (None: none fit), then the runs trained in
  this session (the field adds new choices at its end)."""
  fitting = [(f'shipped: {name}', ('shipped', name)) for name, model in shipped.MODELS.items()
             if channels in model.channels]
  trained = [(f'trained here: {os.path.basename(folder)} ({folder})', ('trained', folder))
             for folder in trained_runs.of(viewer).folders]
  return [('scratch', SCRATCH), ('the folder below', FOLDER)] + fitting + trained


class StartFrom:
  """Start from (a choice) and Start folder (shown where the folder is chosen): two
  fields the Train widget lays out among its own.

  Attributes:
    choice, folder: the fields.
  """

  def __init__(self, viewer, channels):
    """channels(): the chosen layers' channel count, None where there is none."""
    self._viewer, self._channels = viewer, channels
    self.choice = widgets.ComboBox(label='Start from', choices=self._choices, value=SCRATCH,
                                   tooltip=(
        "A new run's first weights (--init_from): new ones (scratch), a model n2n ships for "
        "layers of these channels, a run trained in this session, or a run's folder. Its "
        'network must be the one set here (channels, network_width...), else it is refused; '
        'the method and data may differ. A folder that holds a run resumes it instead.'))
    self.folder = running.folder_field('Start folder', (
        'The run to start from: its folder (its newest checkpoint is used)'))
    self.folder.visible = False
    self.choice.changed.connect(lambda chosen: setattr(self.folder, 'visible', chosen == FOLDER))
    trained_runs.of(viewer).added.connect(self.update)

  def _choices(self, _=None):
    """magicgui's callable: choices() for the chosen layers' channels."""
    return choices(self._viewer, self._channels())

  def update(self, *_):
    """The choices again (other layers or axes, a run trained here); where the chosen one
    is gone (a shipped model the layers' channels no longer fit), magicgui chooses the
    first, scratch."""
    self.choice.reset_choices()

  def init_from(self):
    """The init_from flag of the choice: '' for scratch.

    Raises:
      ValueError: the folder chosen, and none given.
    """
    kind, source = self.choice.value
    if kind == 'shipped':
      return shipped.folder(source)  # the package's model, never a folder of that name here
    if kind == 'folder':
      folder = running.chosen_folder(self.folder)
      if not folder:
        raise ValueError('choose the folder of the run to start from (Start folder)')
      return os.path.abspath(os.path.expanduser(folder))
    return source
