"""The learning-rate schedule of the official Noise2Noise code."""

import math

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package='n2n')
class RampDownSchedule(keras.optimizers.schedules.LearningRateSchedule):
  """Constant peak rate, then a cosine-squared ramp to zero over the last fraction.

  lr(step) = peak                                  for step < start
           = peak * ((1 + cos(pi * t)) / 2) ** 2   t = (step - start) / (total - start)
  with start = total * (1 - rampdown_fraction). Depends only on the step, so
  a resumed run continues the schedule exactly.
  """

  def __init__(self, peak, total_steps, rampdown_fraction=0.3):
    self.peak = float(peak)
    self.total_steps = int(total_steps)
    self.rampdown_fraction = float(rampdown_fraction)

  def __call__(self, step):
    step = tf.cast(step, tf.float32)
    rampdown_steps = self.total_steps * self.rampdown_fraction
    if rampdown_steps <= 0:
      return tf.constant(self.peak, tf.float32)
    start = self.total_steps - rampdown_steps
    progress = tf.clip_by_value((step - start) / rampdown_steps, 0.0, 1.0)
    return self.peak * tf.square(0.5 + 0.5 * tf.cos(math.pi * progress))

  def get_config(self):
    return {'peak': self.peak, 'total_steps': self.total_steps,
            'rampdown_fraction': self.rampdown_fraction}
