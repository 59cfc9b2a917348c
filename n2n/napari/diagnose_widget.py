"""Diagnose noise: a layer's noise level, its correlation along x and y and
what n2n recommends (a shipped model as is, or a method and the model it starts
from), as diagnose.py prints them (n2n.diagnose). A shipped model recommended as
is is handed to the Denoise tab (diagnosed).

The layer's planes are its images (a stack's along Z or T); with a second
capture of the same view chosen, the noise is measured from the two.
"""

import functools

from magicgui import widgets
from psygnal import Signal

from n2n.napari import calls
from n2n.napari import layers
from n2n.napari import running


def recommended_text(diagnosis):
  """The Advice row of a report.Diagnosis: the shipped model where the advice puts it
  first ('fluorescence as is (Denoise tab)'), else the method and the model it starts
  from ('neighbor2neighbor from fluorescence'), else the method."""
  if diagnosis.model:
    return f'{diagnosis.model} as is (Denoise tab)'
  start = diagnosis.settings.get('init_from')
  return f'{diagnosis.method} from {start}' if start else diagnosis.method


class DiagnoseWidget(widgets.Container):
  """Layer, optional second capture, white level; Diagnose; the report.

  Attributes:
    diagnosed: a signal, diagnosed(report.Diagnosis, the layer it read), after each
      diagnosis.
  """
  diagnosed = Signal(object, object)

  def __init__(self, napari_viewer):
    viewer = napari_viewer
    super().__init__(labels=True)
    self._viewer = viewer
    choices = functools.partial(layers.layer_choices, viewer)
    self.layer = widgets.ComboBox(label='Noisy layer', choices=choices)
    self.second = widgets.ComboBox(label='Second capture', choices=functools.partial(
        layers.layer_choices, viewer, optional=True), tooltip=(
            'Optional: another capture of the same view (registered), to measure the noise '
            'from the two instead of estimating it from flat areas'))
    self.axes = widgets.LineEdit(label='Axes', tooltip=(
        "The layer's axes in n2n's letters (T, Z, Y, X, C): each plane (YX or YXC) is an image"))
    self.white_level = widgets.FloatSpinBox(label='White level', min=0.0, max=1e9, value=0.0,
                                            tooltip="The value that is 1.0; 0: the data type's "
                                            'maximum (1.0 for floats)')
    self.run_button = widgets.PushButton(text='Diagnose')
    self.summary = running.text_line('Noise')
    # 'Advice': 'Recommended' was cut to 'Recommendec' in the 230-px dock's label column.
    self.recommended = running.text_line('Advice')
    self.report = widgets.TextEdit(value='')
    self.report.read_only = True
    self.report.native.setLineWrapMode(self.report.native.NoWrap)
    self.report.native.setStyleSheet('font-family: monospace;')
    self.report.min_height = 200
    self.extend([self.layer, self.second, self.axes, self.white_level, self.run_button,
                 self.summary, self.recommended])
    running.below(self, self.report)
    self.diagnosis = None
    self._layer_read = None
    self._call = running.Call('n2n: diagnosing', on_done=self._show, on_error=self._failed,
                              on_finished=self._finished)
    self.layer.changed.connect(self._layer_changed)
    self.run_button.changed.connect(self.start)
    self._layer_changed(self.layer.value)

  def _layer_changed(self, layer):
    self.axes.value = layers.axes_of(layer) if layer is not None else ''

  def start(self):
    """Runs n2n.diagnose on the chosen layer(s) in a worker thread."""
    try:
      if self.layer.value is None:
        raise ValueError('no image layer to diagnose: open or add one first')
      images = layers.planes(layers.pixels(self.layer.value), self.axes.value)
      second = self.second.value
      captures = None
      if second is not None:
        seconds = layers.planes(layers.pixels(second), self.axes.value)
        if len(seconds) != len(images):
          raise ValueError(f'{second.name!r} has {len(seconds)} plane(s) and '
                           f'{self.layer.value.name!r} {len(images)}: two captures of one view '
                           'have as many')
        captures = list(zip(images, seconds))
    except ValueError as error:
      running.show_error(error)
      return
    self.run_button.enabled = False
    self.summary.value, self.recommended.value = 'diagnosing...', ''
    self._layer_read = self.layer.value
    self._call.start(calls.diagnose, images, captures, self.white_level.value)

  def _show(self, diagnosis):
    self.diagnosis = diagnosis
    # The method on a row of its own: on one line with the noise it ran out of the dock's
    # width in the first screenshot, and a label shows one line.
    self.summary.value = f'{diagnosis.kind} noise, sigma {diagnosis.noise_level:.4f}'
    self.recommended.value = recommended_text(diagnosis)
    self.recommended.tooltip = '\n'.join(diagnosis.recommendation.lines)
    self.report.value = str(diagnosis)
    self.diagnosed.emit(diagnosis, self._layer_read)

  def _failed(self, message):
    self.summary.value = f'failed: {message}'

  def _finished(self):
    self.run_button.enabled = True

