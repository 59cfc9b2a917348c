"""What one Poisson batch at a tiny lambda does to a trained network under Adam.

  python -m bench.outlier_batch --model=runs/demo

At lambda near the paper's floor of 0.001 a Poisson pixel is 0 or about
1/lambda = 1000, so such a batch's loss and gradient are orders of magnitude
above the usual ones. This instrument starts from a trained run, warms Adam up
(the official beta_1 0.9, beta_2 0.99) on ordinary Poisson batches (lambda in
--normal_range), then continues three ways from the same state for the same
steps: only ordinary batches; one outlier batch (every image at
--outlier_lambda) followed by ordinary ones; and the same with the gradient's
global norm clipped to --clip_norm_multiple times the median ordinary norm.
It prints the gradient norms, the largest weight change and the validation
PSNR (demo val, lambda 30) of each branch.
"""

import os

from n2n import cli  # pylint: disable=g-import-not-at-top,g-bad-import-order
cli.prepare_startup()  # before anything imports TensorFlow
from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from n2n.corruptions import noise as noise_lib  # pylint: disable=g-import-not-at-top
from n2n.evaluation import eval_data  # pylint: disable=g-import-not-at-top
from n2n.evaluation import scoring  # pylint: disable=g-import-not-at-top
from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
from n2n.inference import restore  # pylint: disable=g-import-not-at-top
from bench import REPO_ROOT  # pylint: disable=g-import-not-at-top

DEMO = os.path.join(REPO_ROOT, 'datasets', 'demo')
flags.DEFINE_string('model', os.path.join(REPO_ROOT, 'runs', 'demo'), 'A trained run.')
flags.DEFINE_float('learning_rate', 1e-3, 'Adam learning rate.')
flags.DEFINE_integer('warmup_steps', 40, 'Ordinary steps before the branches.')
flags.DEFINE_integer('branch_steps', 20, 'Steps in each branch.')
flags.DEFINE_string('normal_range', '5,50', 'Lambda range of ordinary batches.')
flags.DEFINE_float('outlier_lambda', 0.001, 'Lambda of every image in the outlier batch.')
flags.DEFINE_float('clip_norm_multiple', 3.0, 'Clip branch: global norm limit, in medians of '
                   'the ordinary gradient norms seen during warm-up.')
flags.DEFINE_integer('batch_size', 8, 'Batch size.')
flags.DEFINE_integer('crop_size', 64, 'Crop size.')
FLAGS = flags.FLAGS


def make_batches(images, count, rng):
  """count batches of clean crops, [B, S, S, 3] float32 in [0, 1]."""
  size = FLAGS.crop_size
  batches = []
  for _ in range(count):
    crops = []
    for _ in range(FLAGS.batch_size):
      image = images[rng.integers(len(images))][1]
      top = rng.integers(image.shape[0] - size + 1)
      left = rng.integers(image.shape[1] - size + 1)
      crops.append(image[top:top + size, left:left + size])
    batches.append(np.stack(crops).astype(np.float32) / 255.0)
  return batches


def noisy_pair(clean, levels, seed):
  """(input, target): two independent Poisson corruptions at the given levels."""
  clean, levels = tf.constant(clean), tf.constant(levels)
  first, _ = noise_lib.corrupt_batch(clean, 'poisson', levels, tf.constant([seed, 1]))
  second, _ = noise_lib.corrupt_batch(clean, 'poisson', levels, tf.constant([seed, 2]))
  return first, second


def main(argv):
  del argv
  model = restore.restore_model(FLAGS.model).model
  optimizer = keras.optimizers.Adam(FLAGS.learning_rate, beta_1=0.9, beta_2=0.99, epsilon=1e-8)
  optimizer.build(model.trainable_variables)
  # No clipping is a huge limit: clip_by_global_norm turns an infinite one into NaN.
  no_clip = 1e30
  clip = tf.Variable(no_clip, dtype=tf.float32)

  @tf.function
  def step(noisy, target):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.square(model(noisy, training=True) - target))
    gradients = tape.gradient(loss, model.trainable_variables)
    norm = tf.linalg.global_norm(gradients)
    gradients, _ = tf.clip_by_global_norm(gradients, clip, use_norm=norm)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss, norm

  rng = np.random.default_rng(0)
  train_images = eval_data.load_eval_images(os.path.join(DEMO, 'train'))
  val_images = eval_data.load_eval_images(os.path.join(DEMO, 'val'))
  low, high = (float(value) for value in FLAGS.normal_range.split(','))
  batches = make_batches(train_images, FLAGS.warmup_steps + FLAGS.branch_steps, rng)
  normal_levels = [rng.uniform(low, high, FLAGS.batch_size).astype(np.float32) for _ in batches]
  # The denoiser is made at each score: it runs the weights as they are then (frozen).
  score = lambda: scoring.evaluate(whole_images.make_denoiser(model), val_images, 'poisson',
                                   [30.0], 0)[0].mean_psnr

  print(f'trained model: {score():.2f} dB at lambda 30')
  norms = []
  for index in range(FLAGS.warmup_steps):
    _, norm = step(*noisy_pair(batches[index], normal_levels[index], index))
    norms.append(float(norm))
  median = float(np.median(norms))
  print(f'after {FLAGS.warmup_steps} ordinary steps: {score():.2f} dB; gradient norm median '
        f'{median:.3g} (max {max(norms):.3g})')
  variables = model.trainable_variables + optimizer.variables
  start = [variable.numpy() for variable in variables]

  def branch(outlier, clip_norm):
    for variable, value in zip(variables, start):
      variable.assign(value)
    clip.assign(clip_norm)
    before = [variable.numpy() for variable in model.trainable_variables]
    outlier_norm = None
    for offset in range(FLAGS.branch_steps):
      index = FLAGS.warmup_steps + offset
      levels = normal_levels[index]
      if outlier and offset == 0:
        levels = np.full(FLAGS.batch_size, FLAGS.outlier_lambda, np.float32)
      loss, norm = step(*noisy_pair(batches[index], levels, index))
      if outlier and offset == 0:
        outlier_norm, outlier_loss = float(norm), float(loss)
    change = max(float(np.abs(variable.numpy() - value).max())
                 for variable, value in zip(model.trainable_variables, before))
    psnr = score()
    extra = (f'; the outlier batch: loss {outlier_loss:.3g}, gradient norm {outlier_norm:.3g} '
             f'({outlier_norm / median:.0f}x the median)' if outlier else '')
    return psnr, change, extra

  for name, outlier, clip_norm in (
      ('ordinary batches only', False, no_clip),
      (f'one batch at lambda {FLAGS.outlier_lambda:g} first', True, no_clip),
      (f'the same, norm clipped at {FLAGS.clip_norm_multiple:g}x median', True,
       FLAGS.clip_norm_multiple * median)):
    psnr, change, extra = branch(outlier, clip_norm)
    print(f'{name}: {psnr:.2f} dB after {FLAGS.branch_steps} steps, largest weight change '
          f'{change:.4f}{extra}', flush=True)


if __name__ == '__main__':
  app.run(main)
