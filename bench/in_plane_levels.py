"""Training-step time of the 3D U-Net with in-plane convolutions at its finest
levels (--xy_conv_levels), against the 2D U-Net on the same voxels.

  python -m bench.in_plane_levels --levels=0,2,3 --repetitions=3 --steps=5 \
      --output=docs/bench/in_plane_levels.json
  python -m bench.in_plane_levels --precision=mixed_bfloat16 \
      --output=docs/bench/in_plane_levels_amx_mixed_bfloat16.json   # and float32: the AMX host

Sections (--sections):
  steps  the training steps below
  ops    one in-plane (1x3x3) convolution with its gradients, as n2n computes it
         (conv.conv3d_same_with_bias: the planes through the 2D op) against
         TensorFlow's 3D op with a depth-1 kernel, interleaved in one process

The batches are the results page's volume runs' (configs/cpu/volumes_3d.cfg:
2 crops of 16 x 64 x 64 voxels, one channel) and, for 2D, the same voxels as
32 planes of 64 x 64: the ratio is what a 3D step costs against 2D per plane
per voxel. Width --width (the page's narrower rows: 24). Each setting's
training step (forward, gradients, Adam update; --precision, float32 by default;
random data, oneDNN on as the programs ask) runs in a fresh process, the settings
interleaved within each repetition in an order that turns round every repetition; the
JSON holds each run's median step time and, per setting, the median over
repetitions and its ratio to the 2D step.
"""

import statistics
import time

from absl import app  # pylint: disable=g-import-not-at-top,g-bad-import-order
from absl import flags  # pylint: disable=g-import-not-at-top

from bench import json_output  # pylint: disable=g-import-not-at-top
from bench import step_timer  # pylint: disable=g-import-not-at-top

REPO_ROOT = step_timer.REPO_ROOT
VOLUME_BATCH = (2, 16, 64, 64, 1)
PLANE_BATCH = (32, 64, 64, 1)  # the same voxels as 2D planes
flags.DEFINE_list('sections', ['steps', 'ops'], 'What to time: steps, ops.')
flags.DEFINE_list('levels', ['0', '2', '3'], 'In-plane levels of the 3D networks timed.')
flags.DEFINE_integer('width', 24, 'Network width of every setting.', lower_bound=1)
flags.DEFINE_integer('repetitions', 3, 'Fresh processes per setting.')
flags.DEFINE_enum('precision', 'float32', ['float32', 'mixed_bfloat16'],
                  'What the training steps compute in (the ops section is float32 either way).')
flags.DEFINE_integer('steps', 5, 'Timed steps per process, after one untimed (tracing) step.')
flags.DEFINE_string('output', None, 'Where to write the JSON; none is written when unset.')
FLAGS = flags.FLAGS


def time_ops(repetitions, calls=5):
  """{'planes_2d_op': seconds, 'depth_1_3d_op': seconds}: medians over
  repetitions (interleaved) of one forward and backward pass of a 1x3x3
  convolution, width channels in and out, on VOLUME_BATCH's voxels."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from n2n.model import conv  # pylint: disable=g-import-not-at-top
  inputs = tf.random.stateless_uniform(VOLUME_BATCH[:4] + (FLAGS.width,), seed=(1, 2))
  kernel = tf.random.stateless_uniform((1, 3, 3, FLAGS.width, FLAGS.width), seed=(3, 4))
  bias = tf.zeros([FLAGS.width])
  stock = lambda x, k, b: tf.nn.bias_add(tf.nn.conv3d(x, k, [1] * 5, 'SAME'), b)

  def pass_of(convolve):
    @tf.function
    def forward_and_backward():
      with tf.GradientTape() as tape:
        tape.watch([inputs, kernel])
        loss = tf.reduce_sum(tf.square(convolve(inputs, kernel, bias)))
      return tape.gradient(loss, [inputs, kernel])
    return forward_and_backward

  passes = {'planes_2d_op': pass_of(conv.conv3d_same_with_bias), 'depth_1_3d_op': pass_of(stock)}
  times = {name: [] for name in passes}
  for name, run in passes.items():
    run()  # trace
  for repetition in range(repetitions):
    for name in (list(passes) if repetition % 2 == 0 else list(passes)[::-1]):
      started = time.perf_counter()
      for _ in range(calls):
        [gradient.numpy() for gradient in passes[name]()]
      times[name].append((time.perf_counter() - started) / calls)
  return {name: {'seconds': values, 'median_s': round(statistics.median(values), 5)}
          for name, values in times.items()}


def main(argv):
  del argv
  from bench import provenance  # pylint: disable=g-import-not-at-top  (loads TensorFlow)
  results = {**provenance.stamp(REPO_ROOT),
             'precision': FLAGS.precision, 'onednn': True, 'width': FLAGS.width,
             'volume_batch': list(VOLUME_BATCH)}
  if 'ops' in FLAGS.sections:
    ops = time_ops(2 * FLAGS.repetitions + 1)
    ops['precision'] = 'float32'
    ops['planes_over_3d_op'] = round(ops['planes_2d_op']['median_s'] /
                                     ops['depth_1_3d_op']['median_s'], 2)
    results['ops'] = ops
    print('ops', {name: value for name, value in ops.items() if name.endswith('op')},
          flush=True)
  if 'steps' in FLAGS.sections:
    results['steps'] = time_steps()
  json_output.write_results(FLAGS.output, results)


def time_steps():
  """The training steps of the settings, fresh processes, interleaved."""
  settings = ['2d'] + [f'3d_xy{int(levels)}' for levels in FLAGS.levels]
  runs = {setting: [] for setting in settings}
  for repetition in range(FLAGS.repetitions):
    # The order turns round every repetition, so a drift within the hour hits all alike.
    for setting in (settings if repetition % 2 == 0 else settings[::-1]):
      if setting == '2d':
        seconds = step_timer.step_seconds(True, 2, PLANE_BATCH, FLAGS.steps, FLAGS.width,
                                          precision=FLAGS.precision)
      else:
        seconds = step_timer.step_seconds(True, 3, VOLUME_BATCH, FLAGS.steps, FLAGS.width,
                                          int(setting[len('3d_xy'):]), FLAGS.precision)
      runs[setting].append(seconds)
      print(setting, f'{seconds:.3f} s', flush=True)
  medians = {setting: statistics.median(runs[setting]) for setting in settings}
  print(', '.join(f'{setting}: {medians[setting]:.3f} s '
                  f'({medians[setting] / medians["2d"]:.2f}x 2D)' for setting in settings))
  return {'steps_per_process': FLAGS.steps, 'repetitions': FLAGS.repetitions,
          'plane_batch': list(PLANE_BATCH),
          'settings': {setting: {'step_s': runs[setting], 'median_s': round(medians[setting], 4),
                                 'over_2d': round(medians[setting] / medians['2d'], 2)}
                       for setting in settings}}


if __name__ == '__main__':
  app.run(main)
