"""Fine-tuning (--init_from): a new run starts from another run's or a shipped model's
weights, refuses another network in one line, and a run that has a checkpoint resumes
from it instead."""

import numpy as np
import pytest
import tensorflow as tf

from bench.recipes import arrays as arrays_recipe
import n2n
from n2n import shipped


def _config(model_dir, **overrides):
  values = dict(model_dir=str(model_dir), noise='none', method='neighbor2neighbor',
                crop_size=64, batch_size=2, train_steps=10, network_width=8,
                precision='float32', seed=1, steps_per_loop=5, log_every=5)
  values.update(overrides)
  return n2n.train_config(**values)


def _weights(model_dir):
  """{name: value} of the network's weights in model_dir's newest checkpoint (a
  Trainer's checkpoint keys them under the optimizer's trainable variables, in the
  network's order)."""
  reader = tf.train.load_checkpoint(str(model_dir))
  return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
          if name.startswith('optimizer/_trainable_variables/')}


def _largest_difference(first, second):
  assert first.keys() == second.keys() and first
  return max(float(np.abs(first[name] - second[name]).max()) for name in first)


@pytest.fixture(scope='module')
def noisy_arrays():
  rng = np.random.default_rng(0)
  return [arrays_recipe.noisy(rng, arrays_recipe.clean_image(rng, 80, 96)) for _ in range(2)]


@pytest.fixture(scope='module')
def source_run(tmp_path_factory, noisy_arrays):
  folder = tmp_path_factory.mktemp('source') / 'run'
  n2n.train(_config(folder), noisy=noisy_arrays, progress_bar=False)
  return folder


@pytest.mark.slow
def test_a_fine_tuned_run_starts_from_the_source_weights(tmp_path, source_run, noisy_arrays):
  # One step at a learning rate of 1e-9 moves each weight by about 1e-9 (Adam's first
  # step is the rate times the gradient's sign): the run's weights are then the
  # source's. Another method and seed, as fine-tuning on a user's images would have.
  tuned = tmp_path / 'tuned'
  n2n.train(_config(tuned, init_from=str(source_run), train_steps=1, learning_rate=1e-9,
                    method='blind_spot', seed=7), noisy=noisy_arrays, progress_bar=False)
  scratch = tmp_path / 'scratch'
  n2n.train(_config(scratch, train_steps=1, learning_rate=1e-9, method='blind_spot', seed=7),
            noisy=noisy_arrays, progress_bar=False)
  source = _weights(source_run)
  assert _largest_difference(_weights(tuned), source) < 1e-6
  assert _largest_difference(_weights(scratch), source) > 1e-2


@pytest.mark.slow
def test_another_network_is_refused_naming_the_flag_and_field(tmp_path, source_run,
                                                               noisy_arrays):
  with pytest.raises(ValueError, match=r'--init_from=.*network_width: 8 -> 16'):
    n2n.train(_config(tmp_path / 'wider', init_from=str(source_run), network_width=16),
              noisy=noisy_arrays, progress_bar=False)
  with pytest.raises(ValueError, match=r"--init_from: '.*nowhere' is missing"):
    n2n.train(_config(tmp_path / 'none', init_from=str(tmp_path / 'nowhere')),
              noisy=noisy_arrays, progress_bar=False)
  grey = tmp_path / 'grey'
  with pytest.raises(ValueError, match=r'--init_from=camera_srgb: .*channels: 3 -> 1'):
    n2n.train(_config(grey, init_from='camera_srgb', network_width=48), noisy=noisy_arrays,
              progress_bar=False)
  assert not (grey / 'checkpoint').exists()


@pytest.mark.slow
def test_a_run_with_a_checkpoint_resumes_instead(tmp_path, source_run, noisy_arrays):
  run = tmp_path / 'run'
  n2n.train(_config(run, train_steps=5, seed=3), noisy=noisy_arrays, progress_bar=False)
  own = _weights(run)
  n2n.train(_config(run, train_steps=6, seed=3, init_from=str(source_run), learning_rate=1e-9),
            noisy=noisy_arrays, progress_bar=False)
  assert _largest_difference(_weights(run), own) < 1e-6


@pytest.mark.slow
def test_a_run_starts_from_a_shipped_models_weights(tmp_path):
  # camera_srgb (n2n/shipped_models): an RGB network of the paper's width, as a user's
  # photographs would train; one step at 1e-9 leaves the shipped weights.
  rng = np.random.default_rng(3)
  photographs = [np.stack([arrays_recipe.noisy(rng, arrays_recipe.clean_image(rng, 96, 96))
                           for _ in range(3)], axis=-1) for _ in range(2)]
  tuned = tmp_path / 'tuned'
  n2n.train(_config(tuned, init_from='camera_srgb', network_width=48, train_steps=1,
                    learning_rate=1e-9), noisy=photographs, progress_bar=False)
  reader = tf.train.load_checkpoint(shipped.folder(shipped.CAMERA_SRGB))
  shipped_weights = [reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
                     if name.startswith('model/')]
  tuned_weights = list(_weights(tuned).values())
  # The package keys the network under 'model/' (bench/shipping.py), a run under the
  # optimizer's variables: each of the run's weights is one of the package's.
  assert len(tuned_weights) == len(shipped_weights) > 0
  for value in tuned_weights:
    assert any(other.shape == value.shape and np.abs(other - value).max() < 1e-6
               for other in shipped_weights)
