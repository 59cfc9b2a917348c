"""The single-image methods' held-out loss: a score without clean images or
second captures that ranks denoisers as the true error does (issue 22)."""

import numpy as np
import pytest

from bench.recipes.images import smooth_image
from n2n import config as config_lib
from n2n import settings as settings_lib
from n2n.data import native_images
from n2n import noise_model
from n2n.evaluation import eval_data
from n2n.evaluation import held_out
from n2n.evaluation import report
from n2n.evaluation import scoring
from n2n.methods import registry as methods_registry
from n2n.pipelines import registry as pipelines


def _box_blur(size):
  """A denoiser that averages size x size neighbourhoods (edge-padded)."""

  def denoise(image):
    if size == 1:
      return image
    half = size // 2
    padded = np.pad(image, [(half, half), (half, half), (0, 0)], mode='edge')
    height, width = image.shape[:2]
    return np.mean([padded[row:row + height, column:column + width]
                    for row in range(size) for column in range(size)], axis=0)

  return denoise


def recorruption_model(channels=3, sigma=0.1):
  """--method=recorrupted's model of white noise of this sigma."""
  return noise_model.NoiseModel(np.pad([[1.0]], noise_model.MAX_LAG), np.eye(channels),
                                np.array([0.5]), np.full((1, channels), sigma))


# The noise of the ranking test, as --method=recorrupted's model: white, sigma 0.1.
_WHITE_NOISE_MODEL = recorruption_model()


@pytest.mark.parametrize('method', methods_registry.SINGLE_IMAGE_NAMES)
def test_the_held_out_loss_ranks_denoisers_as_the_true_error_does(method):
  rng = np.random.default_rng(0)
  rows, columns = np.mgrid[0:192, 0:256]
  clean = np.repeat((0.5 + 0.3 * np.sin(columns / 8) * np.cos(rows / 10.4))[..., np.newaxis],
                    3, axis=2).astype(np.float32)
  noisy = clean + rng.normal(0.0, 0.1, clean.shape).astype(np.float32)
  # Too little, about right, far too much smoothing: true errors 0.0011, 0.0004,
  # 0.0048. (Closer ones need not rank alike: Neighbor2Neighbor's loss judges a
  # denoiser on half-resolution sub-images, where a blur reaches twice as far.)
  denoisers = [_box_blur(size) for size in (3, 5, 25)]
  true = [float(np.mean(np.square(denoise(noisy) - clean))) for denoise in denoisers]
  config = None
  # The noise's variance; Recorrupted-to-Recorrupted's target y - n holds twice
  # it, and its input y + n is judged, whose noise is twice the variance too.
  offset = 0.01
  if method == 'recorrupted':
    # Its held-out loss draws from the run's noise model (without one, from the
    # image's own single-image estimate, which this sinusoid's curvature misleads).
    config = config_lib.train_config(method=method,
                                     recorrupted_noise_model=_WHITE_NOISE_MODEL.to_json())
    true = [float(np.mean(np.square(denoise(noisy + rng.normal(0.0, 0.1, noisy.shape)) - clean)))
            for denoise in denoisers]
    offset = 0.02
  scored = [held_out.make_held_out_loss(method, denoise, 0, config)(noisy, 0)
            for denoise in denoisers]
  assert list(np.argsort(scored)) == list(np.argsort(true)) == [1, 0, 2], (scored, true)
  # Its offset is about the target's noise variance, as the expected value says.
  assert 0.8 * offset < min(scored) - min(true) < 1.2 * offset, (scored, true)
  if method == 'neighbor2neighbor':
    # No denoising scores about twice the variance, worse than either useful
    # denoiser. (A blind-spot network never sees the masked pixel; the identity
    # would return the median there, so the blind-spot loss cannot judge it.)
    unchanged = held_out.make_held_out_loss(method, _box_blur(1), 0)(noisy, 0)
    assert unchanged > 1.5 * 0.01 and unchanged > max(scored[:2])


def test_the_held_out_draws_are_fixed_per_image_and_differ_between_images():
  rng = np.random.default_rng(1)
  noisy = rng.uniform(size=(64, 64, 1)).astype(np.float32)
  blur = _box_blur(3)
  for method in methods_registry.SINGLE_IMAGE_NAMES:
    # Recorruptions draw from the run's model (this image is too small to read one).
    config = (config_lib.train_config(method=method, noise='none',
                                      recorrupted_noise_model=recorruption_model(1).to_json())
              if method == 'recorrupted' else None)
    score = held_out.make_held_out_loss(method, blur, 7, config)
    assert score(noisy, 0) == score(noisy, 0)
    assert score(noisy, 0) != score(noisy, 1)
  assert held_out.make_held_out_loss('pairs', blur, 7) is None


def test_a_folder_of_noisy_images_is_scored_by_the_held_out_loss_alone(tmp_path):
  rng = np.random.default_rng(2)
  (tmp_path / 'day2').mkdir()
  for name, height in (('a.png', 70), ('day2/b.tif', 90)):
    page = (smooth_image(rng, height, 80, 1)[:, :, 0].astype(np.uint16) * 250
            + rng.integers(0, 2000, (height, 80)).astype(np.uint16))
    (tmp_path / name).write_bytes(native_images.encode_pages([page],
                                                             native_images.family_of(name)))
  config = config_lib.resolve_data(
      config_lib.train_config(train_data='x', model_dir='y', noise='none',
                             method='neighbor2neighbor', crop_size=64), 1, 'uint16', 65535.0)
  images = eval_data.load_eval_data(str(tmp_path), config, 'none')
  assert [(image.name, image.first.shape, image.second) for image in images] == [
      ('a.png', (70, 80, 1), None), ('day2/b.tif', (90, 80, 1), None)]
  denoise = _box_blur(3)
  scores, = scoring.score(denoise, images, 'none', (), 0,
                          held_out_loss=held_out.make_held_out_loss('neighbor2neighbor',
                                                                    denoise, 0))
  assert scores.mean_psnr is None and scores.mean_noisy_target_mse is None
  assert all(image.held_out_loss > 0 for image in scores.images)
  table = report.format_table([scores])
  assert 'held-out loss' in table and 'mean error per channel' in table
  entry = report.metrics_dict('ckpt', 5, [scores])['levels'][scoring.CAPTURES_TAG]
  assert entry['mean_held_out_loss'] == pytest.approx(scores.mean_held_out_loss)
  # A pairs run reads the same folder as scenes, and says what is wrong with it.
  pairs = config_lib.resolve_data(config_lib.train_config(train_data='x', model_dir='y',
                                                         noise='none'), 1, 'uint16', 65535.0)
  with pytest.raises(ValueError, match='--val_data: .* holds one capture'):
    eval_data.load_eval_data(str(tmp_path), pairs, 'none')


# The single-image methods with pixel-shuffle strides (Recorrupted-to-Recorrupted has
# none: its recorruptions carry the noise's correlation).
_PIXEL_SHUFFLE_NAMES = [name for name in methods_registry.SINGLE_IMAGE_NAMES
                        if methods_registry.get(name).flag_prefix + 'stride' in
                        {spec.flag for spec in settings_lib.settings_of(config_lib.TrainConfig)}]


def test_every_single_image_method_but_recorruptions_has_strides():
  assert _PIXEL_SHUFFLE_NAMES == ['neighbor2neighbor', 'blind_spot']


@pytest.mark.parametrize('method', _PIXEL_SHUFFLE_NAMES)
def test_a_pixel_shuffle_run_is_scored_on_the_sub_images_it_trains_on(method):
  """With a training stride the held-out loss is the method's loss on each
  stride-th pixel's sub-image (the network never trained on the whole image),
  each with a draw of its own, averaged."""
  rng = np.random.default_rng(2)
  noisy = rng.uniform(size=(64, 67, 3)).astype(np.float32)
  config = config_lib.train_config(method=method, **{
      f'{methods_registry.get(method).flag_prefix}stride': 2})
  seen = []

  def denoise(image):
    seen.append(image.copy())
    return _box_blur(3)(image)

  score = held_out.make_held_out_loss(method, denoise, 7, config)(noisy, 0)
  assert len(seen) == 4
  views = [noisy[row:64:2, column:66:2] for row in range(2) for column in range(2)]
  for image, view in zip(seen, views):
    # Blind-spot sees the view with its masked pixels replaced, Neighbor2Neighbor
    # one of its neighbour sub-images: either way most pixels are the view's own.
    if method == 'blind_spot':
      assert image.shape == view.shape and (image == view).mean() > 0.98
    else:
      assert image.shape == (16, 16, 3)
      assert np.isin(image, view).mean() == 1.0
  # Each view's own draw: the average of the views' losses with their folded seeds.
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  single_image_pipeline = pipelines.get(method)
  base_seed = held_out.held_out_seed(7, 0)
  expected = np.mean([single_image_pipeline.held_out_view_loss(
      _box_blur(3), view,
      tf.cast(tf.random.experimental.stateless_fold_in(base_seed, index), tf.int32), config)
                      for index, view in enumerate(views)])
  assert score == pytest.approx(expected, rel=1e-6)
