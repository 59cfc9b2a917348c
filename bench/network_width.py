"""Training-step time of the U-Net at several --network_width values.

  python -m bench.network_width --widths=48,24,16 --repetitions=3 --steps=5 \
      --output=docs/bench/network_width.json

The convolutions' cost grows with about the square of the width (the convolutions
keep the paper's ratios to the encoder's channels: n2n/model/unet.layer_widths), but small
tensors on a CPU leave fixed costs too: this measures what a narrower network buys on
the host it runs on, for the 2D and 3D batches of the test suite's learning tests.
Each width's training step (forward, gradients, Adam update; float32, random data,
oneDNN on as the programs ask) runs in a fresh process per width, the widths
interleaved within each repetition in an order that turns round every repetition;
the JSON holds each run's median step time and, per shape, the median over
repetitions and each width's speed-up over the first width given.
"""

import statistics

from absl import app  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import flags  # pylint: disable=g-import-not-at-top

from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import step_timer  # pylint: disable=g-import-not-at-top

REPO_ROOT = step_timer.REPO_ROOT
# (name, spatial dims, batch shape): the 2D learning tests' thin-channel batch, the
# pixel-shuffle test's RGB batch (crop 128) and the 3D tests' crops (8 x 32 x 32).
SHAPES = (('2d_4x64x64x1', 2, (4, 64, 64, 1)), ('2d_4x128x128x3', 2, (4, 128, 128, 3)),
          ('3d_4x8x32x32x1', 3, (4, 8, 32, 32, 1)))
flags.DEFINE_list('widths', ['48', '24', '16'], 'Network widths; the first is the baseline.')
flags.DEFINE_integer('repetitions', 3, 'Fresh processes per width and shape.')
flags.DEFINE_integer('steps', 5, 'Timed steps per process, after one untimed (tracing) step.')
flags.DEFINE_string('output', None, 'Where to write the JSON; none is written when unset.')
FLAGS = flags.FLAGS


def main(argv):
  del argv
  from bench import provenance  # pylint: disable=g-import-not-at-top  (loads TensorFlow)
  widths = [int(width) for width in FLAGS.widths]
  runs = {name: {width: [] for width in widths} for name, _, _ in SHAPES}
  for repetition in range(FLAGS.repetitions):
    for name, dims, shape in SHAPES:
      # The order turns round every repetition, so a drift within the hour hits all alike.
      for width in (widths if repetition % 2 == 0 else widths[::-1]):
        seconds = step_timer.step_seconds(True, dims, shape, FLAGS.steps, width)
        runs[name][width].append(seconds)
        print(name, width, f'{seconds:.3f} s', flush=True)
  shapes = {}
  for name, _, _ in SHAPES:
    medians = {width: statistics.median(runs[name][width]) for width in widths}
    shapes[name] = {str(width): {'step_s': runs[name][width], 'median_s': round(medians[width], 4),
                                 'speed_up': round(medians[widths[0]] / medians[width], 2)}
                    for width in widths}
    print(name, ', '.join(f'{width}: {medians[width]:.3f} s' for width in widths))
  results = {**provenance.stamp(REPO_ROOT),
             'steps_per_process': FLAGS.steps, 'repetitions': FLAGS.repetitions,
             'precision': 'float32', 'onednn': True, 'shapes': shapes}
  json_output.write_results(FLAGS.output, results)


if __name__ == '__main__':
  app.run(main)
