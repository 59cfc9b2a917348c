"""The Denoise widget's Export: the chosen model written as export.py writes
it (a SavedModel folder with config.json and README.md), with ONNX and the
BioImage Model Zoo package on request, through n2n.export in the Denoise
widget's own child process (as careamics-napari exports from its plugin).
"""

from magicgui import widgets

from n2n.napari import calls
from n2n.napari import running


class ExportSection(widgets.Container):
  """Export to (a folder), ONNX, BioImage Model Zoo, Replace; Export; its status."""

  def __init__(self, child, model_path, on_start, on_finished):
    """child: the Denoise widget's child.Child, which runs one call at a time;
    model_path(): the chosen model's path, None after a one-line notification;
    on_start() and on_finished(): the widget's own buttons off while it exports, and on."""
    super().__init__(labels=True)
    self.output = running.folder_field('Export to', (
        'The export folder: a new or empty one (Replace: one that holds files is replaced)'))
    self.onnx = widgets.CheckBox(text='ONNX', value=True, tooltip=(
        'Also model.onnx, the model as ONNX, for ONNX Runtime, Fiji, DeepImageJ...'))
    self.bioimageio = widgets.CheckBox(text='BioImage Model Zoo', value=True, tooltip=(
        'Also bioimageio_model.zip, the package the BioImage Model Zoo, DeepImageJ, ilastik '
        'and n2n read'))
    self.overwrite = widgets.CheckBox(text='Replace', tooltip=(
        'Replace what the folder holds; without it a folder that holds files is refused'))
    self.button = widgets.PushButton(text='Export')
    self.status = running.text_line()
    self.extend([self.output, self.onnx, self.bioimageio, self.overwrite])
    running.below(self, self.button, self.status)
    self.margins = (0, 0, 0, 0)
    self.written = None
    self._model_path, self._on_start, self._on_finished = model_path, on_start, on_finished
    self._call = running.Call('n2n: exporting', on_done=self._done, on_error=self._failed,
                              on_finished=self._finished, child=child)
    self.button.changed.connect(self.start)

  @property
  def running(self):
    return self._call.running

  def start(self):
    """Exports the chosen model (calls.export) in the Denoise widget's child process."""
    output = running.chosen_folder(self.output)
    if not output:
      self.status.value = running.show_error('choose a folder to export to')
      return
    path = self._model_path()
    if path is None:
      return
    self.button.enabled = False
    self._on_start()
    self.status.value = 'exporting...'
    self._call.start(calls.export, path, output, self.onnx.value, self.bioimageio.value,
                     self.overwrite.value)

  def _done(self, written):
    self.written = written
    self.status.value = 'wrote ' + ', '.join(written)

  def _failed(self, message):
    self.status.value = f'failed: {message}'

  def _finished(self):
    self.button.enabled = True
    self._on_finished()
