"""Training on scenes of simulated noisy 16-bit captures alone (--noise=none): the data and
run of tests/training/test_scene_training.py."""

from bench.recipes import images
from n2n import config as config_lib
from n2n.data import scene_writer
from n2n.data import simulated_scenes
from n2n.training import distribute
from n2n.training import train_lib


def write_scene_data(root):
  """(training records, validation scene folder) of simulated grayscale 16-bit captures,
  written under root."""
  images.write_clean_photo_splits(root, (('train', 4), ('val', 2)), 64, 80)
  simulated_scenes.write_scenes(str(root / 'clean_train'), str(root / 'train'), captures=3,
                                grayscale=True, seed=1)
  simulated_scenes.write_scenes(str(root / 'clean_val'), str(root / 'val'), captures=2,
                                grayscale=True, seed=2)
  scene_writer.write_scene_dataset(str(root / 'train'), str(root / 'records'))
  return root / 'records', root / 'val'


def run_config(records, val, model_dir, **overrides):
  """A 60-step run's TrainConfig on scenes (crops of 32, batch 4, float32, seed 3),
  overrides on top."""
  values = dict(train_data=str(records), val_data=str(val), model_dir=str(model_dir),
                noise='none', crop_size=32, batch_size=4, train_steps=60, steps_per_loop=10,
                log_every=10, eval_every=30, checkpoint_every=60, learning_rate=1e-3,
                rampdown_fraction=0.0, precision='float32', seed=3)
  values.update(overrides)
  return config_lib.train_config(**values)


# The run's length (the spread of its outcome over seeds: test_scene_training.py, by its bound).
SCENE_STEPS = 60


def train_scene_run(records, val, model_dir, seed=3, steps=SCENE_STEPS,
                    network_width=config_lib.PAPER_NETWORK_WIDTH):
  """Trains on the noisy captures alone (60 steps by default) and returns the run."""
  config = run_config(records, val, model_dir, seed=seed, train_steps=steps,
                      checkpoint_every=steps, network_width=network_width)
  return train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
