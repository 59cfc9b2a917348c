"""Denoise: a layer through a trained run (one trained in this session is
offered as it finishes), an export, n2n's BioImage Model Zoo package or a
model n2n ships (n2n.Denoiser), in a child process driven by a worker thread,
with progress and Cancel; the result is a new layer placed as the input is
(scale, translate, metadata). Large layers go through the network in tiles.
The child process keeps the model loaded from one Denoise to the next.
"""

import functools
import os

from magicgui import widgets
import numpy as np

from n2n import config as config_lib
from n2n import settings
from n2n import shipped
from n2n.napari import calls
from n2n.napari import child as child_lib
from n2n.napari import export_section
from n2n.napari import layers
from n2n.napari import running
from n2n.napari import trained_runs

MODEL_HELP = ("A run's folder (its newest checkpoint), a folder written by export.py, or "
              'the BioImage Model Zoo package (.zip) that export.py --bioimageio writes: '
              "choose a folder, or type the package's path.")
# The Model choices: ('folder', '') the folder field; ('trained', folder) a run trained in
# this session (trained_runs.py); ('shipped', name) a model n2n ships.
FOLDER = ('folder', '')
_DECLARED = {spec.flag: spec for spec in settings.settings_of(config_lib.DenoiseConfig)}


def _model_choices(viewer, widget=None):
  """The Model field's (label, value) choices: the folder field, the runs trained in this
  session, newest first, then the models n2n ships. widget: magicgui's argument, unused."""
  del widget
  trained = [(f'trained here: {os.path.basename(folder)} ({folder})', ('trained', folder))
             for folder in trained_runs.of(viewer).folders]
  return ([('the folder below', FOLDER)] + trained
          + [(f'shipped: {name}', ('shipped', name)) for name in shipped.MODELS])


def _checkpoint_state(path):
  """When the model at path last changed: a run folder's checkpoint list (Train writes
  it with each checkpoint), else the path's own modification time; None where it is gone."""
  listed = os.path.join(path, 'checkpoint')
  try:
    return os.stat(listed if os.path.isfile(listed) else path).st_mtime_ns
  except OSError:
    return None


class DenoiseWidget(widgets.Container):
  """Model (a folder, a run trained here, a shipped model), layer, axes, TTA, tile size,
  precision; Denoise, Cancel; a new layer. The model stays loaded, in a child process of
  the widget's own, from one Denoise to the next while it does not change."""

  def __init__(self, napari_viewer):
    viewer = napari_viewer
    super().__init__(labels=True)
    self._viewer = viewer
    self.model_choice = widgets.ComboBox(
        label='Model', choices=functools.partial(_model_choices, viewer), tooltip=(
            'The folder below; a run trained in this session (Train adds each one and '
            'chooses it here); or a model n2n ships, trained for you (no training, nothing '
            'downloaded): ' + shipped.help_text()))
    self.model = running.folder_field('Folder', MODEL_HELP)
    self.layer = widgets.ComboBox(label='Layer', choices=functools.partial(
        layers.layer_choices, viewer))
    self.axes = widgets.LineEdit(label='Axes', tooltip=(
        "The layer's axes in n2n's letters: YX, YXC (RGB), ZYX, TYX, TZYX... A 2D model "
        'denoises each plane, a 3D model each volume.'))
    self.tta = widgets.CheckBox(label='TTA', tooltip=(
        'The mean of the outputs of the 8 flips and rotations (8 times the time); '
        'single-image models of correlated noise take it already'))
    self.tile_size = widgets.SpinBox(label='Tile size', min=32, max=65536, step=32,
                                     value=config_lib.DenoiseConfig().tile_size, tooltip=(
                                         'Planes larger than this go through the network in '
                                         'overlapping tiles of this size (less memory)'))
    self.precision = widgets.ComboBox(label='Precision', choices=_DECLARED['precision'].choices,
                                      value=_DECLARED['precision'].default,
                                      tooltip=_DECLARED['precision'].help)
    self.denoise_button, self.cancel_button, buttons = running.buttons('Denoise', 'Cancel')
    self.status = running.text_line()
    self.extend([self.model_choice, self.model, self.layer, self.axes, self.tta,
                 self.tile_size, self.precision])
    self.output = None
    self.model_loads = 0
    self._advised = None  # the model a diagnosis chose here (follow_diagnosis)
    self._source = None
    # The child process holding the loaded model, and the model it holds (_model_key).
    self._child, self._child_model = child_lib.Child(), None
    self._call = running.Call('n2n: denoising', on_progress=self._progress,
                              on_done=self._done, on_error=self._failed,
                              on_finished=self._finished, stop_name='cancel', child=self._child)
    # The child answers one call at a time: Denoise and Export take turns.
    self.show_export = widgets.CheckBox(text='Export the model', tooltip=(
        'Write the chosen model as export.py does: a SavedModel folder, ONNX, the BioImage '
        'Model Zoo package'))
    self.export = export_section.ExportSection(
        self._child, self._check_model, on_start=lambda: self._busy(True),
        on_finished=lambda: self._busy(False))
    self.export.visible = False
    running.below(self, buttons, self.status, self.show_export, self.export)
    self.show_export.changed.connect(lambda shown: setattr(self.export, 'visible', shown))
    running.when_closed(self.native, self._child.close)  # not self: Qt would keep it alive
    self.layer.changed.connect(self._layer_changed)
    self.model_choice.changed.connect(self._choice_changed)
    for field in (self.model_choice, self.model, self.tile_size, self.precision):
      field.changed.connect(self._model_changed)
    trained_runs.of(viewer).added.connect(self._trained)
    self.denoise_button.changed.connect(self.start)
    self.cancel_button.changed.connect(self.cancel)
    self._layer_changed(self.layer.value)

  @property
  def child_pid(self):
    """The id of the process holding the loaded model, None when there is none."""
    return self._child.pid

  def close_model(self):
    """Ends the process holding the loaded model (the widget closed, or another model)."""
    self._child.close()
    self._child_model = None

  def _layer_changed(self, layer):
    self.axes.value = layers.axes_of(layer) if layer is not None else ''

  def follow_diagnosis(self, diagnosis, layer):
    """A report.Diagnosis of layer: where it recommends a shipped model as is and no model
    is chosen yet (the folder field, empty) or the one chosen is what an earlier diagnosis
    chose, that model (with TTA where the advice adds --tta) for that layer."""
    unchosen = self.model_choice.value == FOLDER and not running.chosen_folder(self.model)
    if (diagnosis.model not in shipped.MODELS or self._call.running
        or not (unchosen or self.model_choice.value == self._advised)):
      return
    self._advised = ('shipped', diagnosis.model)
    self.model_choice.value = self._advised
    self.tta.value = '--tta' in diagnosis.recommendation.model_flags
    if layer is not None and layer in self.layer.choices:
      self.layer.value = layer

  def _choice_changed(self, choice):
    self.model.enabled = choice == FOLDER

  def _trained(self, folder):
    """A run trained in this session (again): offered, and chosen unless a call runs."""
    self.model_choice.reset_choices()
    if not self._call.running:
      self.model_choice.value = ('trained', folder)
    self._model_changed()

  def _model_path(self):
    """The chosen model's path: a run trained here, a shipped model's package folder
    (never a folder of that name where napari runs), or the folder field's absolute path."""
    kind, name = self.model_choice.value
    if kind == 'shipped':
      return shipped.folder(name)
    if kind == 'trained':
      return name
    return os.path.abspath(os.path.expanduser(str(self.model.value).strip()))

  def _model_key(self):
    """What the loaded model must match to serve again: path, precision, tile size, and
    when the path last changed (a run trained further has a newer checkpoint)."""
    path = self._model_path()
    return (path, self.precision.value, self.tile_size.value, _checkpoint_state(path))

  def _model_changed(self, *_):
    # Another model: the process holding the old one ends now (its memory back), or at the
    # next Denoise where a call runs.
    if not self._call.running and self._child_model not in (None, self._model_key()):
      self.close_model()

  def _busy(self, busy):
    """Denoise off while an export runs in the child, and the reverse."""
    self.denoise_button.enabled = not busy
    self.export.button.enabled = not busy

  def _check_model(self, layer=None):
    """The chosen model's path; None (after a one-line notification) where the folder field
    names nothing that exists, or the layer (None: no layer to check, an export) is not of
    a pixel type and channel count a shipped model takes (shipped.refusal, as every front
    door refuses it)."""
    kind, name = self.model_choice.value
    if kind == 'shipped' and layer is not None:
      # An RGB(A) layer's colour is 3 channels (alpha passes through), any other one 1.
      reason = shipped.refusal(name, shipped.MODELS[name], np.dtype(layer.dtype).name,
                               3 if layer.rgb else 1)
      if reason:
        self.status.value = running.show_error(f'layer {layer.name!r}: {reason}')
        return None
    path = self._model_path()
    if kind == 'folder' and (not str(self.model.value).strip()
                             or not (os.path.isdir(path) or os.path.isfile(path))):
      self.status.value = running.show_error(
          f'no model at {path}: choose a run folder, an export folder or a .zip package')
      return None
    return path

  def start(self):
    """Denoises the layer (calls.denoise) in the widget's child process, which loads the
    model unless it holds it already."""
    layer = self.layer.value
    if layer is None:
      self.status.value = running.show_error('no image layer to denoise: open or add one first')
      return
    path = self._check_model(layer)
    if path is None:
      return
    key = self._model_key()
    if key != self._child_model:
      self.close_model()
      self._child_model = key
    self._source = (layer, self.tta.value)
    self._busy(True)
    self.cancel_button.enabled = True
    self.status.value = ('denoising...' if self._child.alive
                         else 'loading the model (kept for the next Denoise)...')
    self._call.start(calls.denoise, path, self.precision.value, self.tile_size.value,
                     layers.pixels(layer), self.axes.value.strip().upper(), self.tta.value)

  def cancel(self):
    """Stops before the next tiles go through the network; no layer is added."""
    self._call.stop.set()
    self.cancel_button.enabled = False

  def _progress(self, done, total):
    self.status.value = f'denoising: {done}/{total} tiles'

  def _done(self, denoised):
    layer, tta = self._source
    name = f'{layer.name} denoised{" (TTA)" if tta else ""}'
    self.output = layers.add_like(self._viewer, denoised.pixels, layer, name)
    self.model_loads = denoised.model_loads
    self.status.value = f'added layer {name!r}'

  def _failed(self, message):
    if message != 'cancelled':  # the child ended on the error (child.Child.call)
      self._child_model = None
    self.status.value = message if message == 'cancelled' else f'failed: {message}'

  def _finished(self):
    self._busy(False)
    self.cancel_button.enabled = False
    self._model_changed()
