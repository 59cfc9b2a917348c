"""The network through its method's inference scheme (n2n/inference/schemes.py),
against references written with numpy's padding and strided slices."""

import json

import keras
import numpy as np
import pytest

from n2n import config as config_lib
from n2n.inference import schemes
from n2n.inference import serving
from n2n.methods import base
from n2n.model import unet


def _network(function, channels=3):
  """A weightless keras.Model [N, H, W, C] -> same applying function."""
  images = keras.Input((None, None, channels))
  return keras.Model(images, keras.layers.Lambda(function)(images))


def _run(model, images):
  return np.asarray(model(images.astype(np.float32)))


@pytest.mark.parametrize('stride', [2, 3, 5])
@pytest.mark.parametrize('height,width', [(33, 47), (31, 64), (1, 7)])
def test_the_scheme_round_trips_every_pixel_at_odd_sizes(stride, height, width):
  images = np.random.default_rng(stride).uniform(size=(2, height, width, 3))
  model = schemes.with_scheme(_network(lambda x: x), base.InferenceScheme(stride=stride))
  np.testing.assert_array_equal(_run(model, images), images.astype(np.float32))


def _reference_shuffled(images, stride, per_sub_image):
  """numpy: reflect-pad to a multiple of stride * 32, apply per_sub_image to
  every strided slice, put it back, crop."""
  _, height, width, _ = images.shape
  multiple = stride * unet.SIZE_MULTIPLE
  padded = np.pad(images, ((0, 0), (0, -height % multiple), (0, -width % multiple), (0, 0)),
                  mode='reflect')
  output = np.empty_like(padded)
  for row in range(stride):
    for column in range(stride):
      output[:, row::stride, column::stride] = per_sub_image(
          padded[:, row::stride, column::stride])
  return output[:, :height, :width]


def test_each_sub_image_is_denoised_as_an_image_of_its_own():
  # A network whose output depends on its whole input image (its mean): a sub-image
  # mixed with another, or a pad that is not the reflection, changes the result.
  images = np.random.default_rng(0).uniform(size=(2, 45, 70, 3)).astype(np.float32)
  subtract_mean = lambda x: x - np.mean(x, axis=(1, 2), keepdims=True)
  model = schemes.with_scheme(
      _network(lambda x: x - keras.ops.mean(x, axis=(1, 2), keepdims=True)),
      base.InferenceScheme(stride=2))
  np.testing.assert_allclose(_run(model, images),
                             _reference_shuffled(images, 2, subtract_mean), atol=1e-6)


def test_the_refinement_averages_passes_over_the_denoised_image_with_noisy_pixels_put_back():
  # The network subtracts its input image's mean: the shuffled pass works on
  # each sub-image's mean, the refinement's passes (at stride 1) on the whole
  # image's, so a pass at another stride, or without the shuffle, differs.
  images = np.random.default_rng(1).uniform(size=(1, 70, 130, 3)).astype(np.float32)
  images[:, ::2, ::2] += 1.0  # sub-images with means of their own
  scheme = base.InferenceScheme(stride=2, refinement_passes=3, refinement_share=0.25)
  model = schemes.with_scheme(
      _network(lambda x: x - keras.ops.mean(x, axis=(1, 2), keepdims=True)), scheme)
  subtract_mean = lambda x: x - np.mean(x, axis=(1, 2), keepdims=True)
  denoised = _reference_shuffled(images, 2, subtract_mean)
  pattern = schemes.refinement_pattern(3, 0.25)
  passes = []
  for mask in pattern:
    tiled = np.tile(mask, (2, 3, 1))[np.newaxis, :70, :130]
    mixed = np.where(tiled, images, denoised)
    # The pass pads to a multiple of 32 (reflect) like any whole image, and
    # its mean is over the padded image.
    padded = np.pad(mixed, ((0, 0), (0, 96 - 70), (0, 160 - 130), (0, 0)), mode='reflect')
    passes.append(mixed - np.mean(padded, axis=(1, 2), keepdims=True))
  np.testing.assert_allclose(_run(model, images), np.mean(passes, axis=0), atol=1e-5)
  # About the share asked for is put back, and each pass puts back other pixels.
  assert abs(pattern.mean() - 0.25) < 0.02
  assert (pattern[0] != pattern[1]).mean() > 0.3


def test_the_plain_scheme_is_the_network_itself():
  network = unet.build_unet(3, seed=1)
  assert schemes.with_scheme(network, base.InferenceScheme()) is network
  pairs_config = config_lib.train_config(method='pairs')
  assert schemes.with_scheme(network, serving.of_run(pairs_config).scheme) is network


def test_a_runs_strides_and_refinement_reach_its_scheme():
  config = config_lib.train_config(method='blind_spot', blind_spot_stride=4,
                                   blind_spot_inference_stride=2,
                                   blind_spot_refinement_passes=8)
  model = schemes.with_scheme(unet.build_unet(3, seed=1), serving.of_run(config).scheme)
  layer = model.get_layer('inference_scheme')
  assert layer.scheme == base.InferenceScheme(stride=2, refinement_passes=8)
  # The wrapper shares the network's weights and adds none.
  assert len(model.weights) == len(layer.network.weights)


def test_eight_orientations_average_the_scheme_over_every_flip_and_rotation_turned_back():
  # A network that is not equivariant to turns or flips (it adds a ramp along x), on
  # an image that is not square, through pixel-shuffle stride 2: each orientation's
  # output differs, and only turning each back before the mean gives the reference.
  images = np.random.default_rng(3).uniform(size=(2, 37, 50, 3)).astype(np.float32)
  ramp = lambda x: x + keras.ops.cumsum(keras.ops.ones_like(x), axis=2) * 0.01
  plain = schemes.with_scheme(_network(ramp), base.InferenceScheme(stride=2))
  averaged = schemes.with_scheme(_network(ramp), base.InferenceScheme(stride=2, orientations=8))
  reference = np.zeros(images.shape, np.float64)
  for turns in range(4):
    for flip in (False, True):
      turned = np.rot90(images, turns, axes=(1, 2))
      turned = turned[:, :, ::-1] if flip else turned
      output = _run(plain, np.ascontiguousarray(turned))
      output = output[:, :, ::-1] if flip else output
      reference += np.rot90(output, -turns, axes=(1, 2))
  np.testing.assert_allclose(_run(averaged, images), reference / 8, atol=1e-5)
  assert not np.allclose(_run(plain, images), reference / 8, atol=1e-3)


def test_a_run_whose_scheme_averages_orientations_takes_no_second_tta():
  averaging = config_lib.train_config(method='neighbor2neighbor', neighbor2neighbor_stride=2,
                                      neighbor2neighbor_inference_orientations=8)
  plain = config_lib.train_config(method='neighbor2neighbor', neighbor2neighbor_stride=2,
                                  neighbor2neighbor_inference_orientations=1)
  assert serving.of_run(averaging).scheme.orientations == 8
  assert not serving.of_run(averaging).whole_image_tta(True)
  plain_serving = serving.of_run(plain)
  assert plain_serving.whole_image_tta(True) and not plain_serving.whole_image_tta(False)


def test_a_run_saved_before_the_orientations_denoises_in_one_and_takes_tta():
  # A config.json of a stride-2/2 run written before inference_orientations existed.
  saved = json.loads(config_lib.train_config(
      method='neighbor2neighbor', neighbor2neighbor_stride=2,
      neighbor2neighbor_inference_stride=2).to_json())
  del saved['method']['neighbor2neighbor']['inference_orientations']
  config = config_lib.read_train_config(saved)
  assert serving.of_run(config).scheme == base.InferenceScheme(stride=2)
  assert serving.of_run(config).whole_image_tta(True)
