"""The napari plugin's tests run a real viewer (napari's make_napari_viewer,
pytest-qt's qtbot) under an X server: pytest-xvfb (the test extra) starts one
where Xvfb is installed (apt-get install xvfb), or run under `xvfb-run -a`.
Without the napari extra (pip install .[napari]) or a display they skip.

The suite imports TensorFlow before any test (tests/conftest.py), and Mesa's
OpenGL driver, loaded when the first viewer draws, binds to TensorFlow's LLVM
and crashes (tensorflow/tensorflow#109933; n2n/napari/running.py keeps
TensorFlow out of napari's own process for that reason). So the driver is
loaded here first, deep-bound: it keeps to its own LLVM.
"""

import ctypes
import glob
import importlib.util
import os

# Where Debian, Ubuntu and Fedora keep Mesa's software driver, the one Xvfb's OpenGL
# uses (one library under many names).
MESA_DRIVERS = ('/usr/lib/*/dri/swrast_dri.so', '/usr/lib64/dri/swrast_dri.so',
                '/usr/lib/dri/swrast_dri.so')


def _preload_mesa_driver():
  if not hasattr(os, 'RTLD_DEEPBIND') or importlib.util.find_spec('napari.viewer') is None:
    return
  for pattern in MESA_DRIVERS:
    for path in sorted(glob.glob(pattern)):
      ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_DEEPBIND)
      return


_preload_mesa_driver()
