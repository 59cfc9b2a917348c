"""The noise of a run's training records of real captures (--noise=none),
diagnosed when training starts."""

from absl import logging
import numpy as np
import tensorflow as tf

from n2n.data import tfrecord
from n2n.data import traced
from n2n.diagnosis import noise_statistics

# Scene records read at start: enough pixels for the statistics, little time.
MAX_RECORDS = 8


# Planes of each stack the diagnosis reads (evenly spaced through its depth).
VOLUME_PLANES = 4


def diagnose_records(files, dtype, channels, white_level, max_records=MAX_RECORDS):
  """The noise of the first max_records scene records of files: measured from
  two captures where a record holds two or more, else estimated from its one
  capture (a noisy-image dataset).

  Args:
    files: TFRecord paths of a scene or noisy-image dataset.
    dtype, channels, white_level: the dataset's pixel type, channels and
      1.0 (its manifest's).

  Returns:
    (NoiseProfile, records read), or (None, 0) where no record could be read.
  """
  pairs, singles = [], []
  try:
    dataset = tf.data.TFRecordDataset(files).take(max_records).map(traced.as_written(tfrecord.parse_scene))
    for scene in dataset:
      volume = int(scene['depth']) > 0
      decode = tfrecord.decode_volume if volume else tfrecord.decode_pixels
      captures = [decode(serialized, tf.as_dtype(dtype), channels).numpy()
                  for serialized in scene['captures'][:2]]
      # A stack's noise is read plane by plane (in xy): up to VOLUME_PLANES of them,
      # each converted on its own (a whole record in float64 is four times its bytes).
      planes = (np.unique(np.linspace(0, len(captures[0]) - 1, VOLUME_PLANES).astype(int))
                if volume else [None])
      for plane in planes:
        picked = [(capture[plane] if volume else capture).astype(np.float64) / white_level
                  for capture in captures]
        if len(picked) == 2:
          pairs.append(picked)
        else:
          singles.append(picked[0])
    if pairs:
      return noise_statistics.measure_pairs(pairs), len(pairs)
    if singles:
      return noise_statistics.estimate_single(singles), len(singles)
  except (tf.errors.OpError, ValueError) as error:
    # A diagnosis is advice: a corrupt or tiny record is training's to refuse
    # or skip (--skip_corrupt_records), not the diagnosis's.
    logging.warning('The training data\'s noise was not diagnosed (%s).',
                    str(error).splitlines()[0])
  return None, 0
