"""Random flips, 90-degree rotations and channel permutations of training crops.

Applied to clean crops before corruption, so input and target share the
augmented image and the Noise2Noise pair stays valid; for scenes of real
captures, to input and target stacked along channels, moved together.
"""

import itertools

import numpy as np
import tensorflow as tf


def dihedral_index_maps(size):
  """Source pixel of every output pixel under each flip/rotation of a square.

  Returns:
    [16, size * size] int32 numpy array; row lr + 2 * ud + 4 * turns holds,
    for each output pixel (row-major), the row-major index of the input pixel
    after an optional left-right flip, an optional up-down flip, then `turns`
    counter-clockwise quarter turns (np.rot90 / tf.image.rot90 convention).
  """
  grid = np.arange(size * size, dtype=np.int32).reshape(size, size)
  maps = []
  for turns in range(4):
    for up_down in (0, 1):
      for left_right in (0, 1):
        moved = grid[:, ::-1] if left_right else grid
        moved = moved[::-1, :] if up_down else moved
        maps.append(np.rot90(moved, turns).ravel())
  return np.stack(maps)


def channel_permutation_matrices(channel_groups=1):
  """The six RGB orders as right-multiplying matrices, one block per group.

  Returns:
    [6, 3 * channel_groups, 3 * channel_groups] float32 numpy array: matrix k
    reorders the channels of every group of three by the same permutation
    (block diagonal), so an input and its target stacked along channels keep
    matching colours.
  """
  return np.stack([np.kron(np.eye(channel_groups), np.eye(3)[list(order)].T)
                   for order in itertools.permutations(range(3))]).astype(np.float32)


def augment_crops(crops, augment, seed, divisor=255.0, channel_groups=1):
  """Random flips, 90-degree rotations and channel permutations of clean crops,
  converted to float.

  Each crop draws its own transform. Applied before corruption, so input and
  target share the augmented image and the Noise2Noise pair stays valid. The
  batch moves in one row gather (flips and rotations) and one batched matrix
  product (channel permutation and scaling): per-image selects between
  transformed copies cost several times more on a CPU.

  Args:
    crops: [B, S, S, C] uint8 (square; S and C static), or any numeric type
      with a matching divisor.
    augment: config.AugmentConfig.
    seed: [2] int32 stateless seed.
    divisor: divides the values: 255 takes uint8 to [0, 1]; 1 for crops
      already in [0, 1].
    channel_groups: the channels hold this many images of C / channel_groups
      channels each (a scene's input and target capture: 2); every group of
      one crop gets the same transform. Permutations apply to groups of three.

  Returns:
    [B, S, S, C] float32, crops / divisor.
  """
  size, channels = crops.shape[1], crops.shape[-1]
  seeds = tf.random.experimental.stateless_split(seed, 4)
  count = tf.shape(crops)[0]
  if augment.flips or augment.rotations:
    coin = lambda index: tf.cast(tf.random.stateless_uniform([count], seeds[index]) < 0.5,
                                 tf.int32)
    transform = tf.zeros([count], tf.int32)
    if augment.flips:
      transform += coin(0) + 2 * coin(1)
    if augment.rotations:
      transform += 4 * tf.random.stateless_uniform([count], seeds[2], 0, 4, dtype=tf.int32)
    source = (tf.gather(dihedral_index_maps(size), transform)
              + tf.range(count)[:, tf.newaxis] * (size * size))
    crops = tf.gather(tf.reshape(crops, [-1, channels]), tf.reshape(source, [-1]))
  pixels = tf.reshape(tf.cast(crops, tf.float32), [count, size * size, channels])
  if augment.channel_permutations and channels == 3 * channel_groups:
    permutations = tf.constant(channel_permutation_matrices(channel_groups))
    choice = tf.random.stateless_uniform([count], seeds[3], 0, 6, dtype=tf.int32)
    # A permutation matrix times 1/255: exact, and cheaper than a channel gather.
    pixels = pixels @ (tf.gather(permutations, choice) / divisor)
  elif divisor != 1.0:
    pixels = pixels / divisor
  return tf.reshape(pixels, [count, size, size, channels])
