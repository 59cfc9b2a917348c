"""The regression adaptive gradient clipping exists for (issue 15): one Poisson batch at
lambda near the paper's floor in an otherwise ordinary run, with and without clipping,
and how far the run fell: the runs of tests/training/test_gradient_clipping.py."""

import glob
import os

import imageio.v3 as iio
import numpy as np
import tensorflow as tf

from bench import REPO_ROOT
from n2n import config as config_lib
from n2n.corruptions import noise as noise_lib
from n2n.evaluation import metrics
from n2n.training import trainer as trainer_lib


def _clean_crops(rng, images, count, size):
  crops = []
  for _ in range(count):
    image = images[rng.integers(len(images))]
    top, left = (rng.integers(extent - size + 1) for extent in image.shape[:2])
    crops.append(image[top:top + size, left:left + size])
  return np.stack(crops).astype(np.float32) / 255.0


OUTLIER_RUN_STEPS = 120


def outlier_batch_training():
  """train(clip_multiple, seed=1) -> (validation PSNR every 10 steps, clipped steps):
  120 steps of clean-target Poisson training (lambda 5-50, crops of 32, batch 4,
  lr 1e-3, float32) whose step 61 is one batch at lambda 0.002 (pixels 0 or 500),
  the issue's trigger; 16 held-out crops at lambda 30. The data are the same for
  every call; seed is the network's."""
  images = []
  for path in sorted(glob.glob(os.path.join(REPO_ROOT, 'datasets', 'demo', 'train', '*.png'))):
    image = iio.imread(path)
    images.append(np.repeat(image[..., None], 3, -1) if image.ndim == 2 else image[..., :3])
  rng = np.random.default_rng(0)
  steps, batch, size = OUTLIER_RUN_STEPS, 4, 32
  clean = _clean_crops(rng, images, steps * batch, size).reshape(steps, batch, size, size, 3)
  levels = rng.uniform(5, 50, (steps, batch)).astype(np.float32)
  levels[60] = 0.002
  noisy = np.stack([noise_lib.corrupt_batch(tf.constant(clean[step]), 'poisson',
                                            tf.constant(levels[step]),
                                            tf.constant([step, 1]))[0].numpy()
                    for step in range(steps)])
  val_clean = _clean_crops(np.random.default_rng(1), images, 16, 64)
  val_noisy = noise_lib.corrupt_batch(tf.constant(val_clean), 'poisson', tf.fill([16], 30.0),
                                      tf.constant([7, 7]))[0]
  dataset = tf.data.Dataset.from_tensor_slices(
      {'input': noisy.reshape(-1, size, size, 3), 'target': clean.reshape(-1, size, size, 3)})

  def train(clip_multiple, seed=1):
    """Validation PSNR every 10 steps."""
    config = config_lib.train_config(
        train_data='unused', model_dir='', noise='poisson', target='clean', crop_size=size,
        batch_size=batch, train_steps=steps, learning_rate=1e-3, rampdown_fraction=0.0,
        seed=seed, gradient_clip_multiple=clip_multiple)
    trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'float32')
    trainer.attach_dataset(dataset.batch(batch))
    psnrs, clipped = [], 0
    for _ in range(steps // 10):
      clipped += trainer.train(10).clipped_steps
      denoised = trainer.model(val_noisy).numpy()
      psnrs.append(np.mean([metrics.psnr(out, ref) for out, ref in zip(denoised, val_clean)]))
    return psnrs, clipped

  return train


def fall_at_outlier(psnrs):
  """dB from the best evaluation before the outlier (step 61) to the first after it (step 70)."""
  return max(psnrs[:6]) - psnrs[6]


def below_best_at_end(psnrs):
  """dB from the run's best evaluation to its last."""
  return max(psnrs) - psnrs[-1]
