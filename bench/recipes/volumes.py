"""Phantom stack datasets and short 3D runs: the data and runs of the tests of 3D training
and denoising (tests/training/test_volume_*.py, tests/methods/test_single_image_volumes.py,
tests/methods/test_neighbouring_frames.py, and others that need a small 3D run)."""

import numpy as np

from n2n import config as config_lib
from n2n.data import phantom
from n2n.data import scene_writer
from n2n.data import volumes
from n2n.inference import loading
from n2n.inference import noisy_volumes
from n2n.training import distribute
from n2n.training import train_lib

SPEC = phantom.PhantomSpec(shape=(16, 64, 64), nuclei=5, nucleus_radius=10.0, filaments=6)
# The phantom's counts reach about 100 + 8 * (2 + 30) plus noise: 600 maps them near 1.
WHITE_LEVEL = 600.0
# The 3D tests' runs use a U-Net of half the paper's width: its convolutions cost about
# a quarter (bench/network_width.py times the step on these tests' crops). The 60-step
# learning bounds hold at this width (python -m bench.volume_learning_spread,
# docs/bench/volume_learning_spread_width24.json); tests/model builds the paper's width.
NETWORK_WIDTH = 24


def write_stack(path, array, axes, volume_format='imagej'):
  """Writes an array laid out in `axes` as a TIFF stack with voxel sizes (0.4, 0.1, 0.1)."""
  like = volumes.Volume(volumes.to_canonical(array, axes), axes, volume_format,
                        (0.4, 0.1, 0.1), 'micron' if volume_format == 'imagej' else 'µm')
  volumes.write_volume(str(path), like.pixels, like)


def write_phantom_dataset(root, count=3, first_seed=10, white_level=WHITE_LEVEL):
  """root/raw/scene_i/{acquisition_0,1,reference}.tif (ZYX) and root/records (white_level
  0: the default, the type's maximum); returns both."""
  for index in range(count):
    captures, reference = phantom.phantom_scene(SPEC, seed=first_seed + index)
    folder = root / 'raw' / f'scene_{index}'
    folder.mkdir(parents=True)
    for number, capture in enumerate(captures):
      write_stack(folder / f'acquisition_{number}.tif', capture, 'ZYX')
    write_stack(folder / 'reference.tif', reference, 'ZYX')
  scene_writer.write_scene_dataset(str(root / 'raw'), str(root / 'records'),
                                   white_level=white_level)
  return root / 'records', root / 'raw'


def train_config(records, model_dir='unused', **overrides):
  """A small 3D pairs run's TrainConfig on the phantom records."""
  values = dict(train_data=str(records), model_dir=str(model_dir), noise='none', crop_size=32,
                crop_depth=8, batch_size=2, precision='float32', seed=1,
                network_width=NETWORK_WIDTH)
  values.update(overrides)
  return config_lib.train_config(**values)


def train_run(records, model_dir, steps, **overrides):
  """Trains a 3D pairs run of `steps` steps (5e-4, no ramp-down) into model_dir."""
  config = train_config(records, model_dir, train_steps=steps, steps_per_loop=10, log_every=20,
                        checkpoint_every=steps, learning_rate=5e-4, rampdown_fraction=0.0,
                        batch_size=4, **overrides)
  train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  return model_dir


def psnr(estimate, reference):
  """PSNR in dB against the reference's own range (max - min), float64."""
  error = np.mean((np.asarray(estimate, np.float64) - reference) ** 2)
  return 10 * np.log10(float(reference.max() - reference.min()) ** 2 / error)


def denoise_py_gains(model_dir, scored):
  """PSNR gains in dB of a 3D run over its noisy stacks, each denoised as denoise.py
  does by default (tiles as deep as the run's training crops, overlapping by half).

  Args:
    model_dir: the run.
    scored: [(noisy [D, H, W], reference [D, H, W])] in counts. Each noisy
      volume goes through denoise.py's own mapping (noisy_volumes.denoise_volume:
      the run's white level, or the volume's own percentiles, and back to its
      dtype, so a float volume comes back unrounded).
  """
  network = loading.from_checkpoint(str(model_dir), 'float32')
  tile, overlap = config_lib.default_volume_tiling(network.serving.volume_depth)
  denoise = loading.volume_function(network, tile, overlap, 1)
  # Float counts (drawn here) are not the run's dtype: they are given its white level.
  white_level = 0.0 if network.serving.rule.per_image else (network.serving.white_level or 0.0)
  gains = []
  for noisy, reference in scored:
    estimate = noisy_volumes.denoise_volume(noisy[..., np.newaxis], denoise, network.serving,
                                            white_level)[..., 0]
    gains.append(psnr(estimate, reference) - psnr(noisy, reference))
  return gains


def write_single_acquisition_dataset(root, count=3, first_seed=10):
  """root/raw/volume_i.tif: one noisy acquisition of each phantom volume (ZYX), written
  as a --noisy_images dataset to root/records; returns (records, [(noisy, reference)])."""
  (root / 'raw').mkdir(parents=True)
  scored = []
  for index in range(count):
    captures, reference = phantom.phantom_scene(SPEC, seed=first_seed + index, acquisitions=1)
    write_stack(root / 'raw' / f'volume_{index}.tif', captures[0], 'ZYX')
    scored.append((captures[0], reference))
  scene_writer.write_scene_dataset(str(root / 'raw'), str(root / 'records'),
                                   white_level=WHITE_LEVEL, noisy_images=True)
  return root / 'records', scored


def write_clean_stack_dataset(root, count=3, first_seed=10):
  """root/raw/clean_i.tif: the reference (clean) phantom volumes (ZYX uint16),
  written as a --clean_stacks dataset to root/records; returns the records."""
  (root / 'raw').mkdir(parents=True)
  for index in range(count):
    _, reference = phantom.phantom_scene(SPEC, seed=first_seed + index)
    write_stack(root / 'raw' / f'clean_{index}.tif', reference, 'ZYX')
  scene_writer.write_scene_dataset(str(root / 'raw'), str(root / 'records'),
                                   white_level=WHITE_LEVEL, clean_stacks=True)
  return root / 'records'


def gaussian_held_out_volumes(sigma, seeds=(20, 21), noise_seed=0):
  """[(noisy [D, H, W] float64, reference [D, H, W] uint16)]: phantom volumes
  not trained on, with Gaussian noise of sigma (0-255 units of the white level)
  drawn here with NumPy, in counts."""
  rng = np.random.default_rng(noise_seed)
  scored = []
  for seed in seeds:
    _, reference = phantom.phantom_scene(SPEC, seed=seed)
    scored.append((reference + rng.normal(0.0, sigma / 255.0 * WHITE_LEVEL, reference.shape),
                   reference))
  return scored


def movie_dataset(root, movies):
  """root/raw/<i>.tif (TYX movies, one noisy acquisition each) as a noisy-image dataset."""
  (root / 'raw').mkdir(parents=True)
  for index, movie in enumerate(movies):
    write_stack(root / 'raw' / f'movie_{index}.tif', movie, 'TYX')
  scene_writer.write_scene_dataset(str(root / 'raw'), str(root / 'records'),
                                   white_level=WHITE_LEVEL, noisy_images=True)
  return root / 'records'


def drifting_movies():
  """[(noisy, reference)] of two 48-frame phantom movies drifting 0.1 and 0.05 px a frame."""
  spec = phantom.PhantomSpec(shape=(16, 64, 64), nuclei=6, nucleus_radius=10.0, filaments=6)
  return [phantom.phantom_movie(spec, seed, 48, drift_per_frame=(0.0, 0.1, 0.05))
          for seed in (1, 2)]
