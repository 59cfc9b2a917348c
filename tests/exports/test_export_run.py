"""export_run (export.py, n2n.export) writes each format once: the BioImage Model
Zoo package packs the SavedModel and the ONNX weights written beside it instead
of exporting and converting the network again (issue 62)."""

import collections
import io
import zipfile

import pytest

from n2n import config as config_lib
from n2n.exports import bioimageio_package
from n2n.exports import export_run
from n2n.exports import onnx_model
from n2n.exports import saved_model


@pytest.mark.slow
def test_each_format_is_written_once_and_the_package_packs_the_exports_own(
    denoise_model_dir, tmp_path, monkeypatch):
  calls = collections.Counter()
  for module, name in ((saved_model, 'export_model'), (onnx_model, 'write_onnx')):
    def counted(*args, _original=getattr(module, name), _name=name, **kwargs):
      calls[_name] += 1
      return _original(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)
  output = tmp_path / 'export'
  export_run.export_run(config_lib.ExportConfig(model=str(denoise_model_dir), output=str(output),
                                               onnx=True, bioimageio=True))
  assert calls == {'export_model': 1, 'write_onnx': 1}
  with zipfile.ZipFile(output / bioimageio_package.PACKAGE_NAME) as package:
    onnx_names = [name for name in package.namelist() if name.endswith('.onnx')]
    assert [package.read(name) for name in onnx_names] == [(output / 'model.onnx').read_bytes()]
    bundle = zipfile.ZipFile(io.BytesIO(package.read(bioimageio_package.SAVED_MODEL_ZIP)))
  assert bundle.read('saved_model.pb') == (output / 'saved_model.pb').read_bytes()
  assert bundle.read('config.json') == (output / 'config.json').read_bytes()
  # Only the SavedModel's own files: the export's other formats stay out of it.
  assert not [name for name in bundle.namelist() if name.endswith(('.onnx', '.zip', '.tflite'))]
