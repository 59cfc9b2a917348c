"""Screenshots of n2n's napari widgets in use, for docs/napari.md:
docs/napari/diagnose.png, train.png and denoise.png (the whole window).

  xvfb-run -a python -m bench.napari_screenshots [--output_dir=docs/napari]

Each widget runs for real on the plugin's samples: Diagnose on the noisy
picture, Train for 200 steps on it (width 16, crops of 128; a few minutes on
two CPU cores) into a temporary folder, Denoise of the picture with that run.
Needs the napari extra (pip install .[napari]) and an X server.
"""

import argparse
import os
import tempfile
import time

import napari
from napari._qt.dialogs.qt_notification import NapariQtNotification
from qtpy.QtWidgets import QApplication


WINDOW = (1600, 1050)
# Wide enough for the diagnosis's table and the plot.
DOCK_WIDTH = 620


def _wait(condition, timeout_s=1800):
  start = time.monotonic()
  while not condition():
    QApplication.processEvents()
    time.sleep(0.05)
    if time.monotonic() - start > timeout_s:
      raise TimeoutError('the widget did not finish in time')


def _dock(viewer, name, previous=None):
  """The plugin's widget called name, docked alone (previous taken out)."""
  if previous is not None:
    viewer.window.remove_dock_widget(previous.native)
  widget = viewer.window.add_plugin_dock_widget('n2n', name)[1]
  widget.native.setMinimumWidth(DOCK_WIDTH)
  QApplication.processEvents()
  return widget


def _shot(viewer, path):
  # napari's own notices (its PyQt5 deprecation) would cover the picture.
  for toast in viewer.window._qt_window.findChildren(NapariQtNotification):  # pylint: disable=protected-access
    toast.close()
  QApplication.processEvents()
  viewer.reset_view()
  viewer.screenshot(path, canvas_only=False)
  print(f'wrote {path}')


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--output_dir', default=os.path.join('docs', 'napari'))
  parser.add_argument('--train_steps', type=int, default=200)
  args = parser.parse_args()
  os.makedirs(args.output_dir, exist_ok=True)
  viewer = napari.Viewer()
  viewer.window._qt_window.resize(*WINDOW)  # pylint: disable=protected-access
  viewer.open_sample('n2n', 'noisy_picture')
  picture = viewer.layers['noisy picture']
  diagnose = _dock(viewer, 'Diagnose noise')
  diagnose.layer.value = picture
  diagnose.start()
  _wait(lambda: diagnose.run_button.enabled)
  _shot(viewer, os.path.join(args.output_dir, 'diagnose.png'))

  with tempfile.TemporaryDirectory() as folder:
    train = _dock(viewer, 'Train', diagnose)
    train.data_layers.value = [picture]
    _wait(lambda: 'diagnosing' not in train.diagnosis.value)
    train.model_dir.value = os.path.join(folder, 'run')
    train.steps.value, train.crop_size.value = args.train_steps, 128
    train.more.value = f'network_width=16 steps_per_loop=10 {train.more.value}'.strip()
    train.start()
    _wait(lambda: train.train_button.enabled)
    _shot(viewer, os.path.join(args.output_dir, 'train.png'))

    denoise = _dock(viewer, 'Denoise', train)
    denoise.model.value = os.path.join(folder, 'run')
    denoise.layer.value = picture
    denoise.start()
    _wait(lambda: denoise.denoise_button.enabled)
    picture.visible = False
    _shot(viewer, os.path.join(args.output_dir, 'denoise.png'))
  viewer.close()


if __name__ == '__main__':
  main()
