"""Issue 64: denoise.py did not finish a 1024 x 1024 photograph on AVX2 hosts.

There TensorFlow's oneDNN convolution, given a variable float32 filter and a
batch of one tile, ran the one kernel that takes such weights, im2col + GEMM
(x64:gemm:jit), whose buffer grows with the tile and which oneDNN refuses above
1 GiB where the host's L2 cache is small (512 KiB on an AVX2 EPYC), for its
scalar reference kernel (ref:any). The network now runs with its weights
frozen as constants (n2n/inference/frozen_weights.py), and oneDNN picks a
direct kernel, which has no such buffer.

ONEDNN_MAX_CPU_ISA=AVX2 makes oneDNN choose among the kernels of an AVX2-only
CPU on any host that has AVX2 (the cache sizes stay the host's, so the
fallback itself shows only where L2 is small: bench/onednn_dispatch.py), and
ONEDNN_VERBOSE=1 prints the kernel of every convolution it runs. These tests
check every path that runs a network on tiles for the kernel family: im2col
(what ran before, on every host) or the reference kernel fails them. Where
oneDNN runs no convolution (a GPU, a CPU without AVX2) they skip.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from n2n.data import native_images
from tests.conftest import REPO_ROOT

# What oneDNN chooses on an AVX2-only CPU, and its list of what it ran.
AVX2_KERNELS = {'ONEDNN_MAX_CPU_ISA': 'AVX2', 'ONEDNN_VERBOSE': '1', 'TF_ENABLE_ONEDNN_OPTS': '1'}
# The kernels whose memory grows with the tile (im2col), and the reference fallback.
IM2COL_OR_REFERENCE = ('gemm', 'ref:')


def convolution_kernels(output):
  """{kernel name: count} of the convolutions oneDNN's verbose log in output ran."""
  kernels = {}
  for line in output.splitlines():
    fields = line.split(',')
    if fields[:1] == ['onednn_verbose'] and fields[3:6] == ['exec', 'cpu', 'convolution']:
      kernels[fields[6]] = kernels.get(fields[6], 0) + 1
  return kernels


def run_with_avx2_kernels(command, tmp_path):
  """stdout of command run with oneDNN's AVX2 kernels and its verbose log."""
  result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env=dict(os.environ, **AVX2_KERNELS))
  assert result.returncode == 0, result.stderr[-3000:]
  if not convolution_kernels(result.stdout):
    pytest.skip('oneDNN ran no convolution here (a GPU, or a CPU without AVX2)')
  return result.stdout


def assert_direct_convolutions(kernels, count, where):
  assert sum(kernels.values()) >= count, (where, kernels)
  slow = {name: runs for name, runs in kernels.items()
          if any(marker in name for marker in IM2COL_OR_REFERENCE)}
  assert not slow, f'{where}: convolutions through im2col or the reference kernel: {slow}'


@pytest.mark.slow
def test_denoise_py_runs_a_1024_pixel_photograph_without_im2col_on_avx2_kernels(tmp_path):
  inputs = tmp_path / 'in'
  inputs.mkdir()
  photograph = np.random.default_rng(0).integers(0, 256, (1024, 1024, 3), np.uint8)
  (inputs / 'photo.png').write_bytes(native_images.encode_pages([photograph], 'png'))
  output = run_with_avx2_kernels(
      [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), '--model=camera_srgb',
       f'--input={inputs}', f'--output_dir={tmp_path / "out"}', '--precision=float32'],
      tmp_path)
  assert (tmp_path / 'out' / 'photo.png').exists()
  # The U-Net's 18 convolutions, on one 1024-pixel tile (the default).
  assert_direct_convolutions(convolution_kernels(output), 18, 'denoise.py')


# The Python paths that run a network on tiles, each after a line naming it:
# n2n.Denoiser on a run, training's evaluation (an Evaluator's call, through a
# run's inference scheme) as validate.py scores a run, and an export.
_PYTHON_PATHS = """
import sys
import numpy as np
import n2n
from n2n.evaluation import evaluator
from n2n.inference import restore
run, scheme_run, export = sys.argv[1:]
image = np.random.default_rng(0).uniform(size=(96, 64, 3)).astype(np.float32)
print('PATH denoiser', flush=True)
n2n.Denoiser.load(run, precision='float32')(image)
print('PATH evaluation', flush=True)
restored = restore.restore_model(scheme_run, 'float32')
denoise, _ = evaluator.scoring_functions(restored.network, restored.serving, 0)
denoise(image)
n2n.export(run, export)
print('PATH export', flush=True)
n2n.Denoiser.load(export)(image)
"""


@pytest.mark.slow
def test_python_api_evaluation_and_exports_run_without_im2col_on_avx2_kernels(
    denoise_model_dir, scheme_model_dir, tmp_path):
  output = run_with_avx2_kernels(
      [sys.executable, '-c', _PYTHON_PATHS, str(denoise_model_dir), str(scheme_model_dir),
       str(tmp_path / 'export')], tmp_path)
  parts = output.split('PATH ')[1:]
  assert [part.split()[0] for part in parts] == ['denoiser', 'evaluation', 'export']
  for part in parts:
    assert_direct_convolutions(convolution_kernels(part), 18, part.split()[0])
