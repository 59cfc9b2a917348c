"""Which oneDNN kernel TensorFlow runs each of the U-Net's convolutions with, on
one tile, on a CPU this host is not: the cause of issue 64 (denoise.py did not
finish a 1024 x 1024 photograph on AVX2 hosts).

  apt-get install qemu-user     # the emulator, from Debian's packages
  python -m bench.onednn_dispatch --scales=2 --output=docs/bench/onednn_dispatch.json

Each convolution of the paper's U-Net (width 48, RGB) at the sizes it runs in a
tile of --tile_sizes is created by TensorFlow (TF_ENABLE_ONEDNN_OPTS=1, batch
1, float32) inside `qemu-x86_64 -cpu MODEL` for each --cpus model, whose CPUID
oneDNN reads (instruction set, cache sizes), with ONEDNN_VERBOSE=all: the
kernel each was created with, and the limits oneDNN's log names as reasons
for passing kernels over. Once with the filter a variable's value (as the
network ran before n2n/inference/frozen_weights.py), once a constant (as it
runs now). The
convolutions start together in threads and the emulator is stopped once every
one has been created: under emulation the reference kernel would take hours.
Nothing is timed.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import provenance  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top

flags.DEFINE_string('cpus', 'EPYC-Milan', 'Comma list of qemu CPU models (qemu-x86_64 -cpu '
                    'help): EPYC-Milan and EPYC-Rome are AVX2-only EPYCs with 512 KiB of L2 '
                    'per core.')
flags.DEFINE_string('tile_sizes', '1024,512', 'Tile sizes whose convolutions are created.')
flags.DEFINE_string('scales', '', 'Comma list of the levels to create, as the tile\'s size over '
                    'the layer\'s (1: full resolution, 2: the second level...); empty: all. '
                    'Under the emulator each convolution also runs once created, and the '
                    'full-resolution ones take many minutes.')
flags.DEFINE_integer('timeout', 1800, 'Seconds one emulated process may take; the '
                     'convolutions not created by then are listed as such.')
flags.DEFINE_string('output', '', 'Write the results as JSON here.')
FLAGS = flags.FLAGS

# The paper's U-Net's convolutions, RGB, width 48 (n2n/model/unet.py): (input
# channels, output channels, the tile's size over theirs).
UNET_CONVOLUTIONS = (
    (3, 48, 1), (48, 48, 1), (48, 48, 2), (48, 48, 4), (48, 48, 8), (48, 48, 16),
    (48, 48, 32), (96, 96, 16), (144, 96, 8), (96, 96, 8), (144, 96, 4), (96, 96, 4),
    (144, 96, 2), (96, 96, 2), (99, 64, 1), (64, 32, 1), (32, 3, 1))

# Run in the emulator: every convolution of argv started in its own thread.
_PROBE = '''
import sys, threading
import numpy as np
import tensorflow as tf
constant = sys.argv[1] == 'constant'
def convolve(size, ic, oc):
  weights = np.full([3, 3, ic, oc], 0.01, np.float32)
  images = tf.ones([1, size, size, ic])
  # In a graph either way, as the network runs: a constant, or a variable read.
  filters = (lambda: tf.constant(weights)) if constant else tf.Variable(weights).read_value
  tf.function(lambda x: tf.nn.conv2d(x, filters(), 1, 'SAME'))(images)
for shape in sys.argv[2:]:
  threading.Thread(target=convolve, args=[int(v) for v in shape.split('x')], daemon=True).start()
threading.Event().wait()
'''


def problem(size, ic, oc):
  """oneDNN's verbose name of a 3x3 'SAME' convolution of batch 1."""
  return (f'mb1_ic{ic}oc{oc}_ih{size}oh{size}kh3sh1dh0ph1_iw{size}ow{size}kw3sw1dw0pw1')


def dispatch(cpu, filter_kind, shapes):
  """({problem: kernel} of every shape (size, ic, oc), the limits oneDNN's log
  names as its reasons for passing kernels over), read from ONEDNN_VERBOSE=all
  of the probe run in qemu-x86_64 -cpu cpu. The convolutions are created
  together, so a reason is not tied to one of them."""
  wanted = {problem(*shape): shape for shape in shapes}
  found = {}
  environment = dict(os.environ, ONEDNN_VERBOSE='all', TF_ENABLE_ONEDNN_OPTS='1',
                     TF_CPP_MIN_LOG_LEVEL='2')
  command = ['qemu-x86_64', '-cpu', cpu, sys.executable, '-c', _PROBE, filter_kind,
             *[f'{size}x{ic}x{oc}' for size, ic, oc in shapes]]
  limits = set()
  with tempfile.TemporaryFile('w+') as log:
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.DEVNULL, text=True,
                               env=environment, cwd=REPO_ROOT)
    started, read = time.time(), 0
    try:
      while len(found) < len(wanted):
        if process.poll() is not None or time.time() - started > FLAGS.timeout:
          # What was created by then is kept; the rest is listed as not reached.
          break
        time.sleep(2)
        log.seek(read)
        lines = log.read().splitlines(keepends=True)
        complete = [line for line in lines if line.endswith('\n')]
        read += sum(len(line) for line in complete)
        for line in complete:
          fields = line.strip().split(',')
          if fields[:3] != ['onednn_verbose', 'v1', 'primitive']:
            continue
          if fields[3] == 'create:dispatch' and 'limit' in fields[-2]:
            limits.add(f'{fields[-2]} ({fields[-1]})')
          elif fields[3].startswith('create:cache_miss') and fields[5] == 'convolution':
            name = next((field for field in fields if field.startswith('mb1_')), '')
            if name in wanted:
              found[name] = fields[6]
    finally:
      process.kill()
      process.wait()
  return found, sorted(limits)


def main(argv):
  del argv
  if not shutil.which('qemu-x86_64'):
    sys.exit('bench.onednn_dispatch: error: no qemu-x86_64 (apt-get install qemu-user)')
  results = {**provenance.stamp(REPO_ROOT), 'scales': FLAGS.scales, 'runs': []}
  for cpu in FLAGS.cpus.split(','):
    for tile in (int(size) for size in FLAGS.tile_sizes.split(',')):
      scales = {int(scale) for scale in FLAGS.scales.split(',') if scale}
      shapes = sorted({(tile // scale, ic, oc) for ic, oc, scale in UNET_CONVOLUTIONS
                       if not scales or scale in scales})
      for filter_kind in ('variable', 'constant'):
        kernels, limits = dispatch(cpu, filter_kind, shapes)
        row = {'cpu': cpu, 'tile_size': tile, 'filter': filter_kind, 'kernels': kernels,
               'limits_named': limits,
               'not_created_within_timeout': sorted(set(map(lambda shape: problem(*shape),
                                                            shapes)) - set(kernels))}
        results['runs'].append(row)
        print(json.dumps(row), flush=True)
        json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
