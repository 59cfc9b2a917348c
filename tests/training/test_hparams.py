import os

import tensorflow as tf

from n2n import config as config_lib
from n2n.training import hparams


def test_flat_hparams_are_plain_values_with_section_prefixes():
  config = config_lib.resolve_data(
      config_lib.train_config(train_data='x', model_dir='runs/a', learning_rate=1e-3), 3, 'uint8',
      255)
  flat = hparams.flat_hparams(config)
  assert flat['optimisation.learning_rate'] == 1e-3 and flat['model.channels'] == 3
  assert flat['data.dtype'] == 'uint8' and flat['data.white_level'] == 255
  assert flat['corruption.noise_range'] == '0,50' and flat['data.augment.flips'] is True
  assert flat['method.blind_spot.fraction'] == 0.002 and flat['method.name'] == 'pairs'
  assert all(isinstance(value, (str, int, float, bool)) for value in flat.values())


def test_the_run_is_written_as_one_hparams_session(tmp_path):
  config = config_lib.train_config(train_data='x', model_dir=str(tmp_path), learning_rate=1e-3)
  hparams.write_hparams(str(tmp_path), config)
  plugins = set()
  for path in tf.io.gfile.glob(os.path.join(str(tmp_path), 'events.out.tfevents.*')):
    for event in tf.compat.v1.train.summary_iterator(path):
      plugins.update(value.metadata.plugin_data.plugin_name for value in event.summary.value)
  assert plugins == {'hparams'}
