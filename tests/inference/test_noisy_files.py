"""denoise.py's library with a stand-in network: layouts, refusals, skips."""

import os

import imageio.v3 as iio
import numpy as np
import pytest

from n2n import config as config_lib
from n2n.data import camera_pipeline
from n2n.data import native_images
from n2n.inference import file_batch
from n2n.inference import noisy_files
from n2n.inference import serving as serving_lib
from tests.conftest import REPO_ROOT

RNG = np.random.default_rng(0)



def _serving(data_dtype, white_level):
  """The Serving of a 1-channel run as restore reads it, trained on data_dtype with
  white_level."""
  return serving_lib.of_run(config_lib.resolve_data(
      config_lib.train_config(train_data='x', model_dir='y'), 1, data_dtype, white_level))


def _identity(values):
  return values


@pytest.mark.parametrize('page', [
    RNG.integers(0, 256, (9, 7, 3), dtype=np.uint8),
    RNG.integers(0, 65536, (9, 7), dtype=np.uint16),
    RNG.uniform(-1, 2, (9, 7)).astype(np.float32),
    RNG.integers(0, 256, (9, 7, 4), dtype=np.uint8),
    RNG.integers(0, 65536, (9, 7, 2), dtype=np.uint16),
])
@pytest.mark.parametrize('model_channels', [1, 3])
def test_a_page_keeps_dtype_shape_and_alpha_whatever_the_models_channels(page, model_channels):
  seen = []

  def denoise(values):
    seen.append(values.shape[2])
    return values

  result = noisy_files.denoise_page(page, denoise, serving_lib.without_run(model_channels))
  assert result.dtype == page.dtype and result.shape == page.shape
  np.testing.assert_allclose(result, page, rtol=1e-6)  # RGB models average 3 float copies
  assert set(seen) == {model_channels}


def test_alpha_passes_through_untouched_while_colour_is_denoised():
  page = RNG.integers(0, 256, (6, 5, 4), dtype=np.uint8)
  result = noisy_files.denoise_page(page, lambda values: values * 0.0, serving_lib.without_run(3))
  assert not result[..., :3].any()
  np.testing.assert_array_equal(result[..., 3], page[..., 3])


def test_rgb_model_on_grayscale_returns_the_mean_of_its_channels():
  page = np.full((4, 4), 100, np.uint8)
  shifted = noisy_files.denoise_page(page, lambda values: values + np.array([0.0, 0.3, 0.6]),
                                     serving_lib.without_run(3))
  assert shifted.shape == (4, 4) and abs(int(shifted[0, 0]) - (100 + 0.3 * 255)) <= 0.5


def _write(path, array):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_bytes(native_images.encode_pages([array], native_images.output_family(str(path))))


def test_inputs_from_folders_globs_files_and_lists(tmp_path):
  _write(tmp_path / 'in' / 'a.png', np.zeros((4, 4), np.uint8))
  _write(tmp_path / 'in' / 'sub' / 'b.png', np.zeros((4, 4), np.uint8))
  _write(tmp_path / 'c.png', np.zeros((4, 4), np.uint8))
  found = noisy_files.find_inputs(f'{tmp_path}/in, {tmp_path}/c.*')
  assert [relative for _, relative in found] == ['a.png', 'sub/b.png', 'c.png']
  with pytest.raises(ValueError, match=r"--input: nothing matches '.*nothing\*'"):
    noisy_files.find_inputs(f'{tmp_path}/nothing*')


def test_outputs_keep_relative_paths_and_inputs_are_never_overwritten(tmp_path):
  _write(tmp_path / 'in' / 'sub' / 'b.jpg', np.zeros((4, 4, 3), np.uint8))
  inputs = noisy_files.find_inputs(str(tmp_path / 'in'))
  (job,) = noisy_files.plan_jobs(inputs, str(tmp_path / 'out'), 'auto', overwrite=False)
  assert job.destination == str(tmp_path / 'out' / 'sub' / 'b.png')
  for inside in (tmp_path / 'in', tmp_path / 'in' / 'denoised'):
    with pytest.raises(ValueError, match='is inside the input folder'):
      noisy_files.plan_jobs(inputs, str(inside), 'auto', overwrite=False)
  assert noisy_files.plan_jobs(inputs, str(tmp_path / 'in'), 'auto', overwrite=True)


def test_pixels_of_the_training_data_type_use_its_white_level():
  serving = _serving('uint16', 4095.0)
  seen = []

  def brighten(values):
    seen.append(values.max())
    return values + 0.5

  twelve_bit = np.array([[0, 1000, 4095]], np.uint16)
  out = noisy_files.denoise_page(twelve_bit, brighten, serving)
  # 4095 was 1.0 in training; results stay within the sensor's range.
  assert seen[-1] == pytest.approx(1.0)
  assert out.dtype == np.uint16 and out.tolist() == [[2048, 3048, 4095]]
  # Another dtype than the data's: its own full range, as for any run.
  eight_bit = np.array([[0, 255]], np.uint8)
  assert noisy_files.denoise_page(eight_bit, lambda values: values, serving).tolist() == [
      [0, 255]]
  assert seen[-1] == pytest.approx(1.0)
  assert _serving('uint8', 255.0).white_level_for(np.dtype('uint16')) is None
  assert serving_lib.without_run(1).white_level_for(np.dtype('uint8')) is None


def test_values_above_the_white_level_warn_naming_the_file_and_white_level_rescales(tmp_path,
                                                                                  caplog):
  serving = _serving('uint16', 4095.0)
  bright = np.array([[0, 1000, 4095, 9000]], np.uint16)
  _write(tmp_path / 'in' / 'bright.png', bright)
  job = noisy_files.Job(str(tmp_path / 'in' / 'bright.png'), str(tmp_path / 'out' / 'a.png'), 'png')
  with caplog.at_level('WARNING'):
    file_batch.denoise_files([job], _identity, serving)
  assert (f'{job.source} holds values up to 9000, above the white level 4095 the model was '
          'trained with; they are clipped to it. Pass --white_level') in caplog.text
  (page,) = native_images.read_pages(job.destination)
  assert page.tolist() == [[0, 1000, 4095, 4095]]
  caplog.clear()
  again = noisy_files.Job(job.source, str(tmp_path / 'out' / 'b.png'), 'png')
  with caplog.at_level('WARNING'):
    file_batch.denoise_files([again], _identity, serving, white_level_override=9000)
  assert 'above the white level' not in caplog.text
  (page,) = native_images.read_pages(again.destination)
  assert page.tolist() == bright.tolist()
  # An alpha channel at 16-bit full scale is passed through, not pixel data: no warning.
  with_alpha = np.stack([np.array([[0, 1000, 4095]], np.uint16),
                         np.full((1, 3), 65535, np.uint16)], axis=-1)
  _write(tmp_path / 'in' / 'alpha.png', with_alpha)
  caplog.clear()
  with caplog.at_level('WARNING'):
    file_batch.denoise_files([noisy_files.Job(str(tmp_path / 'in' / 'alpha.png'),
                                       str(tmp_path / 'out' / 'c.png'), 'png')],
                        _identity, serving)
  assert 'above the white level' not in caplog.text


def _noisy_photographs():
  """chelsea.png (the demo's) with pixel-independent noise, and through the
  camera simulator (noise correlated between neighbours), as uint8 pages."""
  photo = camera_pipeline.even_crop(
      iio.imread(os.path.join(REPO_ROOT, 'datasets', 'demo', 'val', 'chelsea.png'))[..., :3]
      / 255.0)
  rng = np.random.default_rng(0)
  independent = camera_pipeline.to_uint8(photo + 0.04 * rng.standard_normal(photo.shape))
  settings = camera_pipeline.random_settings(rng, shot_range=(0.004, 0.004))
  (correlated,), _ = camera_pipeline.captures_of(photo, settings, 1, rng)
  return independent, correlated


@pytest.mark.parametrize('noise,training_correlation,warned', [
    ('none', 0.0, (False, True)),
    ('none', 0.55, (False, False)),
    ('none', -1.0, (False, False)),
    # Gaussian runs from before the correlation was recorded: independent all the same.
    ('gaussian', -1.0, (False, True)),
    ('text', -1.0, (False, False))])
def test_correlated_noise_warns_once_for_a_model_of_independent_noise(
    noise, training_correlation, warned, monkeypatch):
  """A model trained on pixel-independent noise (synthetic, or captures read
  as such) warns on a camera's correlated noise, naming the file; a model of
  correlated noise, or one whose training noise is unknown, does not."""
  serving = serving_lib.of_run(config_lib.with_noise_correlation(
      config_lib.resolve_data(config_lib.train_config(train_data='x', model_dir='y', noise=noise),
                              3, 'uint8', 255.0), training_correlation))
  for page, expected in zip(_noisy_photographs(), warned):
    seen = []
    monkeypatch.setattr(noisy_files.logging, 'warning',
                        lambda message, *args: seen.append(message % args))
    noisy_files.warn_unlike_training('in/photo.png', page, None, serving)
    assert len(seen) == expected, seen
    if expected:
      assert seen[0].startswith('in/photo.png: its noise looks correlated between neighbouring '
                                'pixels (lag-1 correlation 0.')
      assert 'trained on pixel-independent noise (0.00)' in seen[0]
