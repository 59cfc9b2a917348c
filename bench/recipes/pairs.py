"""Gaussian Noise2Noise pairs on the suite's images (images.write_image_data): the small
run of tests/training/test_train_lib.py and its few-dozen-steps learning run."""

from n2n import config as config_lib
from n2n.evaluation import summaries
from n2n.training import distribute
from n2n.training import train_lib


def run_config(tfrecord_dir, image_folder, model_dir, **overrides):
  """A small run's TrainConfig (crops of 32, batch 4, 6 steps, float32, seed 3) on the
  records of image_folder, overrides on top."""
  values = dict(train_data=str(tfrecord_dir / '*.tfrecord'), val_data=str(image_folder),
                model_dir=str(model_dir), crop_size=32, batch_size=4, train_steps=6,
                steps_per_loop=2, checkpoint_every=4, eval_every=6, log_every=2,
                learning_rate=1e-3, precision='float32', max_eval_images=2, seed=3)
  values.update(overrides)
  return config_lib.train_config(**values)


# The run's length (the spread of its outcome over seeds: test_train_lib.py, by its bounds).
FEW_DOZEN_STEPS = 60


def few_dozen_steps(tfrecord_dir, image_folder, model_dir, seed, steps=FEW_DOZEN_STEPS,
                    network_width=config_lib.PAPER_NETWORK_WIDTH):
  """Trains Gaussian pairs (crops of 32, batch 4, float32) logging and evaluating
  every 10 steps. Returns (losses, PSNRs at sigma 25): the logged series."""
  config = run_config(tfrecord_dir, image_folder, model_dir, train_steps=steps,
                      steps_per_loop=10, log_every=10, eval_every=10, checkpoint_every=steps,
                      rampdown_fraction=0.0, seed=seed, network_width=network_width)
  train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  losses = summaries.read_scalars(str(model_dir / 'train'))['loss']
  psnrs = summaries.read_scalars(str(model_dir / 'eval'))['psnr/gaussian_25']
  return [value for _, value in losses], [value for _, value in psnrs]
