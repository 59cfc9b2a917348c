"""Screenshots of n2n's napari widgets in use, for docs/napari.md:
docs/napari/diagnose.png, train.png and denoise.png (the whole window).

  xvfb-run -a python -m bench.napari_screenshots [--output_dir=docs/napari]

Each widget runs for real on the plugin's samples, in the tabbed dock that
docs/napari.md has users open (Diagnose, Train, Denoise), each picture with its
tab shown: Diagnose on the noisy picture, Train for 2000 steps on it (width 16,
crops of 128; about 2 minutes on two CPU cores with bfloat16) into a temporary folder, Denoise
of the picture with that run. Needs the napari extra (pip install .[napari])
and an X server.
"""

import argparse
import os
import tempfile
import time

import napari
from napari._qt.dialogs.qt_notification import NapariQtNotification
from qtpy.QtWidgets import QApplication


WINDOW = (1600, 1050)
# The dock holding the three widgets as tabs (n2n/napari/napari.yaml), and its tabs' order.
TABS = 'Diagnose, Train, Denoise'
DIAGNOSE_TAB, TRAIN_TAB, DENOISE_TAB = 0, 1, 2


def _wait(condition, timeout_s=1800):
  start = time.monotonic()
  while not condition():
    QApplication.processEvents()
    time.sleep(0.05)
    if time.monotonic() - start > timeout_s:
      raise TimeoutError('the widget did not finish in time')


def _show_tab(tabs, index):
  """Shows the dock's tab at index (DIAGNOSE_TAB...), as a user's click would."""
  tabs.setCurrentIndex(index)
  QApplication.processEvents()


def _shot(viewer, path):
  # napari's own notices (deprecations) would cover the picture.
  for toast in viewer.window._qt_window.findChildren(NapariQtNotification):  # pylint: disable=protected-access
    toast.close()
  QApplication.processEvents()
  viewer.reset_view()
  viewer.screenshot(path, canvas_only=False)
  print(f'wrote {path}')


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--output_dir', default=os.path.join('docs', 'napari'))
  parser.add_argument('--train_steps', type=int, default=2000)
  args = parser.parse_args()
  os.makedirs(args.output_dir, exist_ok=True)
  viewer = napari.Viewer()
  viewer.window._qt_window.resize(*WINDOW)  # pylint: disable=protected-access
  viewer.open_sample('n2n', 'noisy_picture')
  picture = viewer.layers['noisy picture']
  tabs = viewer.window.add_plugin_dock_widget('n2n', TABS)[1]
  diagnose, train, denoise = tabs.diagnose, tabs.train, tabs.denoise
  _show_tab(tabs, DIAGNOSE_TAB)
  diagnose.layer.value = picture
  diagnose.start()
  _wait(lambda: diagnose.run_button.enabled)
  _shot(viewer, os.path.join(args.output_dir, 'diagnose.png'))

  with tempfile.TemporaryDirectory() as folder:
    run = os.path.join(folder, 'run')
    _show_tab(tabs, TRAIN_TAB)
    train.data_layers.value = [picture]
    _wait(lambda: 'diagnosing' not in train.diagnosis.value)
    train.model_dir.value = run
    train.steps.value, train.crop_size.value = args.train_steps, 128
    # More settings: the width in its field; the diagnosis's settings without one stay in
    # the Other flags line.
    train.more.fields['network_width'].value = 16
    train.more.line.value = f'steps_per_loop=10 {train.more.line.value}'.strip()
    train.start()
    _wait(lambda: train.train_button.enabled)
    _shot(viewer, os.path.join(args.output_dir, 'train.png'))

    _show_tab(tabs, DENOISE_TAB)
    denoise.model_choice.value = ('trained', run)  # Train offered it as it finished
    denoise.layer.value = picture
    denoise.start()
    _wait(lambda: denoise.denoise_button.enabled)
    picture.visible = False
    _shot(viewer, os.path.join(args.output_dir, 'denoise.png'))
  viewer.close()


if __name__ == '__main__':
  main()
