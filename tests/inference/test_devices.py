"""denoise.py on every device of a host (issue 24): two logical CPU devices,
through tf.distribute, give one device's outputs to float rounding."""

import os
import subprocess
import sys

import numpy as np
import pytest

from n2n.data import native_images
from tests.conftest import REPO_ROOT


@pytest.mark.slow
def test_two_logical_devices_give_one_devices_output(denoise_model_dir, tmp_path):
  rng = np.random.default_rng(0)
  inputs = tmp_path / 'in'
  inputs.mkdir()
  # Many tiles (split 3 and 3 per call), and an image smaller than one tile
  # (one tile for two devices).
  for name, shape in (('large.tif', (150, 230, 3)), ('small.tif', (20, 20, 3))):
    (inputs / name).write_bytes(native_images.encode_pages(
        [rng.uniform(size=shape).astype(np.float32)], 'tiff'))
  outputs = {}
  for count in (0, 2):
    output = tmp_path / f'out{count}'
    result = subprocess.run(
        [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={denoise_model_dir}',
         f'--input={inputs}', f'--output_dir={output}', '--precision=float32', '--tile_size=64',
         '--tile_overlap=16', '--batch_tiles=3', f'--logical_cpu_devices={count}'],
        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert ('network on 2 devices (' if count else 'network on 1 device') in result.stdout
    outputs[count] = {name: native_images.read_pages(str(output / name))[0]
                      for name in ('large.tif', 'small.tif')}
  for name, image in outputs[0].items():
    assert image.dtype == np.float32
    np.testing.assert_allclose(outputs[2][name], image, atol=1e-5, err_msg=name)
