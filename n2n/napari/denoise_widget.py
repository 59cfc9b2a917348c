"""Denoise: a layer through a trained run, an export, n2n's BioImage Model
Zoo package or a model n2n ships (n2n.Denoiser), in a child process driven by a worker thread,
with progress and Cancel; the result is a new layer placed as the input is
(scale, translate, metadata). Large layers go through the network in tiles.
"""

import functools
import os

from magicgui import widgets
import numpy as np

from n2n import config as config_lib
from n2n import shipped
from n2n.napari import calls
from n2n.napari import layers
from n2n.napari import running

MODEL_HELP = ("A run's folder (its newest checkpoint), a folder written by export.py, or "
              'the BioImage Model Zoo package (.zip) that export.py --bioimageio writes: '
              "choose a folder, or type the package's path.")
# The Shipped model choice that leaves the model to the folder field.
OWN_MODEL = 'none: the folder below'


class DenoiseWidget(widgets.Container):
  """Shipped model or model folder, layer, axes, TTA, tile size; Denoise, Cancel; a new
  layer."""

  def __init__(self, napari_viewer):
    viewer = napari_viewer
    super().__init__(labels=True)
    self._viewer = viewer
    self.shipped = widgets.ComboBox(
        label='Shipped model', choices=(OWN_MODEL,) + tuple(shipped.MODELS), value=OWN_MODEL,
        tooltip='A model n2n ships, trained for you (no training, nothing downloaded): '
        + shipped.help_text())
    self.model = widgets.FileEdit(label='Model', mode='d', tooltip=MODEL_HELP)
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
    self.denoise_button, self.cancel_button, buttons = running.buttons('Denoise', 'Cancel')
    self.status = widgets.Label(value='')
    self.extend([self.shipped, self.model, self.layer, self.axes, self.tta, self.tile_size,
                 buttons, self.status])
    self.output = None
    self._source = None
    self._call = running.Call('n2n: denoising', on_progress=self._progress,
                              on_done=self._done, on_error=self._failed,
                              on_finished=self._finished, stop_name='cancel')
    self.layer.changed.connect(self._layer_changed)
    self.shipped.changed.connect(self._shipped_changed)
    self.denoise_button.changed.connect(self.start)
    self.cancel_button.changed.connect(self.cancel)
    self._layer_changed(self.layer.value)

  def _layer_changed(self, layer):
    self.axes.value = layers.axes_of(layer) if layer is not None else ''

  def _shipped_changed(self, name):
    self.model.enabled = name == OWN_MODEL

  def _model_path(self, layer):
    """The chosen shipped model's package folder (never a folder of that name where napari
    runs), or the folder field's absolute path; None (after a one-line notification)
    where the field names nothing that exists, or the layer is not the pixel type the
    shipped model was trained on."""
    name = self.shipped.value
    if name != OWN_MODEL:
      pixel_type, trained_on = np.dtype(layer.dtype).name, shipped.pixel_type(name)
      if pixel_type != trained_on:
        self.status.value = running.show_error(
            f'{name} denoises {trained_on} images; layer {layer.name!r} is {pixel_type}: '
            'choose a model trained on such data')
        return None
      return shipped.folder(name)
    path = os.path.abspath(os.path.expanduser(str(self.model.value).strip()))
    if not str(self.model.value).strip() or not (os.path.isdir(path) or os.path.isfile(path)):
      self.status.value = running.show_error(
          f'no model at {path}: choose a run folder, an export folder or a .zip package')
      return None
    return path

  def start(self):
    """Loads the model and denoises the layer (calls.denoise, in a child process)."""
    layer = self.layer.value
    if layer is None:
      self.status.value = running.show_error('no image layer to denoise: open or add one first')
      return
    path = self._model_path(layer)
    if path is None:
      return
    self._source = (layer, self.tta.value)
    self.denoise_button.enabled = False
    self.cancel_button.enabled = True
    self.status.value = 'loading the model...'
    self._call.start(calls.denoise, path, self.tile_size.value, layers.pixels(layer),
                     self.axes.value.strip().upper(), self.tta.value)

  def cancel(self):
    """Stops before the next tiles go through the network; no layer is added."""
    self._call.stop.set()
    self.cancel_button.enabled = False

  def _progress(self, done, total):
    self.status.value = f'denoising: {done}/{total} tiles'

  def _done(self, denoised):
    layer, tta = self._source
    name = f'{layer.name} denoised{" (TTA)" if tta else ""}'
    self.output = layers.add_like(self._viewer, denoised, layer, name)
    self.status.value = f'added layer {name!r}'

  def _failed(self, message):
    self.status.value = message if message == 'cancelled' else f'failed: {message}'

  def _finished(self):
    self.denoise_button.enabled = True
    self.cancel_button.enabled = False
