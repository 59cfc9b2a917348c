"""Training-step time of the U-Net with TensorFlow's oneDNN kernels on and off.

  python -m bench.onednn_kernels --repetitions=3 --steps=3 \
      --output=docs/bench/onednn_kernels_avx2.json

TensorFlow turns oneDNN on by itself only on CPUs with AVX512 VNNI, BF16 or AMX;
n2n's programs ask for it everywhere (n2n/cli.use_onednn_kernels). This measures
what that buys on the host it runs on: each shape's training step (forward,
gradients, Adam update; float32, random data) in a fresh process per setting,
since TensorFlow reads TF_ENABLE_ONEDNN_OPTS once when it loads. The settings are
interleaved within each repetition; the JSON holds each run's median step time
and, per shape, the median over repetitions and the ratio off / on.
"""

import statistics

from absl import app  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import flags  # pylint: disable=g-import-not-at-top

from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top
from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import step_timer  # pylint: disable=g-import-not-at-top

# (name, spatial dims, batch shape): the demo's 2D batch, a thin-channel 2D batch,
# and the 3D tests' crops (8 x 32 x 32) and the results page's (8 x 64 x 64).
SHAPES = (('2d_8x64x64x3', 2, (8, 64, 64, 3)), ('2d_4x64x64x1', 2, (4, 64, 64, 1)),
          ('3d_4x8x32x32x1', 3, (4, 8, 32, 32, 1)), ('3d_4x8x64x64x1', 3, (4, 8, 64, 64, 1)))
flags.DEFINE_integer('repetitions', 3, 'Fresh processes per setting and shape.')
flags.DEFINE_integer('steps', 5, 'Timed steps per process, after one untimed (tracing) step.')
flags.DEFINE_string('output', None, 'Where to write the JSON; none is written when unset '
                    '(each run and the medians are printed either way).')
FLAGS = flags.FLAGS

def main(argv):
  del argv
  from bench import provenance  # pylint: disable=g-import-not-at-top  (loads TensorFlow)
  runs = {name: {'on': [], 'off': []} for name, _, _ in SHAPES}
  for repetition in range(FLAGS.repetitions):
    for name, dims, shape in SHAPES:
      # Alternate which setting goes first, so a drift within the hour hits both alike.
      for setting in (('on', 'off') if repetition % 2 == 0 else ('off', 'on')):
        runs[name][setting].append(step_timer.step_seconds(setting == 'on', dims, shape,
                                                             FLAGS.steps))
        print(name, setting, f'{runs[name][setting][-1]:.3f} s', flush=True)
  shapes = {}
  for name, _, _ in SHAPES:
    on, off = statistics.median(runs[name]['on']), statistics.median(runs[name]['off'])
    shapes[name] = {'step_s_onednn_on': runs[name]['on'], 'step_s_onednn_off': runs[name]['off'],
                    'median_on_s': round(on, 4), 'median_off_s': round(off, 4),
                    'off_over_on': round(off / on, 2)}
    print(f'{name}: on {on:.3f} s, off {off:.3f} s, off/on {off / on:.2f}x')
  results = {**provenance.stamp(REPO_ROOT),
             'steps_per_process': FLAGS.steps, 'repetitions': FLAGS.repetitions,
             'precision': 'float32', 'shapes': shapes}
  json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
