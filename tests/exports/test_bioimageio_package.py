"""export.py --bioimageio: a BioImage Model Zoo package that validates offline
with bioimageio.spec and passes bioimageio.core's model test (issue 23).

The export extras (requirements-export.txt, part of requirements-test.txt) are
imported plainly: where one is missing, collecting this file fails instead of
its tests passing as skips. Without the extras, leave the file out with
--ignore=tests/exports/test_bioimageio_package.py; -m "not slow" leaves out the
package tests (tens of seconds each).
"""

import os
import zipfile

import bioimageio.core  # pylint: disable=unused-import  (an export extra: fail if missing)
import keras
import numpy as np
import onnxruntime  # pylint: disable=unused-import  (an export extra: fail if missing)
import pytest
import tf2onnx  # pylint: disable=unused-import  (an export extra: fail if missing)

from n2n import config as config_lib
from n2n.exports import bioimageio_package
from n2n.inference import serving
from n2n.inference import whole_images
from n2n.model import unet


# The halo tests' networks are 8 channels wide (the paper's 48): how far a pixel
# reaches is set by the kernels and the pooling, and each kernel below averages
# its input channels, so the width changes neither the field nor the values in it.
HALO_TEST_WIDTH = 8


@pytest.mark.parametrize('downsampling, top_skip', [('max_pool', True), ('max_blur_pool', False)],
                         ids=['paper', 'n2v2'])
def test_the_halo_is_the_farthest_any_pixel_reaches_in_the_network(downsampling, top_skip):
  # The paper's network and N2V2's. Non-negative kernels and zero biases on a
  # zero (centred) image: a positive impulse changes every pixel it can reach
  # by a positive amount, which passes every max, so the change covers the
  # whole field (random kernels give negative changes that a max pool drops)
  # and is exactly 0 beyond it. One impulse per position on the 32-pixel
  # pooling grid, each in its own image, tall enough that nothing touches the border.
  model = unet.build_unet(1, seed=1, upsampling='resize', downsampling=downsampling,
                          top_skip=top_skip, width=HALO_TEST_WIDTH)
  for weight in model.weights:
    input_channels = weight.shape[2] if len(weight.shape) == 4 else 1
    weight.assign(np.full(weight.shape, 1.0 / input_channels if len(weight.shape) == 4 else 0.0,
                          np.float32))
  # The output before the +0.5 of 'uncentre', where a small change would round away.
  network = keras.Model(model.input, model.get_layer('to_float32').output)
  height, width, centre = 512, 32, 256
  images = np.full((unet.SIZE_MULTIPLE, height, width, 1), 0.5, np.float32)
  for phase in range(unet.SIZE_MULTIPLE):
    images[phase, centre + phase, width // 2, 0] = 1.5
  changes = network(images).numpy()[..., 0]
  assert changes.min() == 0.0  # never negative: 0 means unreached, exactly
  above, below = [], []
  for phase in range(unet.SIZE_MULTIPLE):
    rows = np.nonzero(changes[phase].max(axis=1) > 0)[0]
    assert 0 < rows.min() and rows.max() < height - 1, phase  # clear of the border
    # The field is one block of rows: no unreached row inside it.
    assert rows.max() - rows.min() + 1 == len(rows), phase
    above.append(centre + phase - rows.min())
    below.append(rows.max() - centre - phase)
  # Each output pixel depends on inputs up to the halo away and no farther, on both sides.
  assert bioimageio_package.halo(downsampling) == max(above) == max(below)
  assert bioimageio_package.receptive_field(downsampling) == max(
      up + down + 1 for up, down in zip(above, below))
  # Consumers' smallest tile leaves output after the halo is cropped, and the
  # test tensors are a size consumers may choose.
  minimum = bioimageio_package.min_input_size(downsampling)
  assert minimum > 2 * bioimageio_package.halo(downsampling) and minimum % unet.SIZE_MULTIPLE == 0
  assert bioimageio_package.TEST_SIZE >= minimum
  assert (bioimageio_package.TEST_SIZE - minimum) % unet.SIZE_MULTIPLE == 0


# The paper's network (one channel, percentile map in the graph) and N2V2's
# (RGB, white level in pre- and postprocessing), each as its method trains it,
# at a sixth of the paper's width: the package's code and its halo do not depend
# on the width, and bioimageio.core's test runs the network on a 384x384 tile in
# both weight formats.
PACKAGE_TEST_WIDTH = 8
@pytest.mark.slow
@pytest.mark.parametrize('channels, dtype, white_level, rule, method, network', [
    (1, 'uint16', 4095.0, 'percentile', 'neighbor2neighbor', config_lib.ModelConfig()),
    (3, 'uint8', 255.0, 'white_level', 'blind_spot',
     config_lib.ModelConfig(downsampling='max_blur_pool', top_skip=False))],
    ids=['paper', 'n2v2'])
def test_the_package_validates_and_passes_its_own_test(channels, dtype, white_level, rule, method,
                                                       network, tmp_path, monkeypatch):
  from bioimageio.spec import load_description  # pylint: disable=g-import-not-at-top
  model = unet.build_unet(channels, seed=2, upsampling='resize',
                          downsampling=network.downsampling, top_skip=network.top_skip,
                          width=PACKAGE_TEST_WIDTH)
  run_config = config_lib.resolve_data(
      config_lib.train_config(train_data='data/noisy', model_dir='runs/x', noise='none',
                             method=method, crop_size=64, normalization=rule,
                             downsampling=network.downsampling, top_skip=network.top_skip,
                             network_width=PACKAGE_TEST_WIDTH),
      channels, dtype, white_level)
  path = bioimageio_package.write_package(model, serving.of_run(run_config), str(tmp_path), 100,
                                          authors=('A. Tester',))
  description = load_description(path)
  assert description.validation_summary.status == 'valid-format', description.validation_summary
  (tmp_path / 'cwd').mkdir()
  monkeypatch.chdir(tmp_path / 'cwd')
  environment = dict(os.environ)
  passed, failure = bioimageio_package.test_package(path)
  assert passed, failure
  # core's TensorFlow adapter unzips into its working folder: never the user's.
  assert not list((tmp_path / 'cwd').iterdir())
  # core's test sets TF_ENABLE_ONEDNN_OPTS=0 in its process's environment; every
  # later subprocess (here: the rest of the suite's) would inherit it.
  assert dict(os.environ) == environment
  names = set(zipfile.ZipFile(path).namelist())
  assert {'rdf.yaml', 'model.onnx', 'tensorflow_saved_model.zip', 'test_input.npy',
          'test_output.npy', 'cover.png', 'README.md'} <= names
  rdf = zipfile.ZipFile(path).read('rdf.yaml').decode()
  assert 'Noise2Noise' in rdf and ('Neighbor2Neighbor' if method == 'neighbor2neighbor'
                                    else 'N2V2') in rdf
  # The halo of this network (158 or 189 pixels): the other one's would leave seams or waste.
  assert f'halo: {bioimageio_package.halo(network.downsampling)}' in rdf
  assert f'min: {bioimageio_package.min_input_size(network.downsampling)}' in rdf
  # Both weight formats, each tested by core's test_model above.
  assert 'tensorflow_saved_model_bundle:' in rdf and 'onnx:' in rdf
  # n2n's scaling: by the white level in pre- and postprocessing, or by the
  # percentiles inside the graph (no scaling in rdf.yaml).
  assert ('scale_linear' in rdf) == (rule == 'white_level')
  # The test output is n2n's own output, in the data's units.
  with zipfile.ZipFile(path) as package:
    package.extractall(tmp_path / 'unpacked')
  test_input = np.load(tmp_path / 'unpacked' / 'test_input.npy')
  test_output = np.load(tmp_path / 'unpacked' / 'test_output.npy')
  assert test_input.shape == (1, bioimageio_package.TEST_SIZE, bioimageio_package.TEST_SIZE,
                              channels)
  if rule == 'percentile':
    low, high = np.percentile(test_input, [1, 99.8])
    ours = whole_images.make_denoiser(model)((test_input[0] - low) / (high - low)) * (high - low) + low
  else:
    ours = whole_images.make_denoiser(model)(test_input[0] / white_level) * white_level
  np.testing.assert_allclose(test_output[0], ours, atol=1e-3 * white_level)
  page = (tmp_path / 'unpacked' / 'README.md').read_text()
  assert (f'white level {white_level:g}' if rule == 'white_level' else '1 and 99.8 percentiles'
          ) in page


def test_without_the_extras_the_package_is_refused_in_one_line(monkeypatch, tmp_path):
  monkeypatch.setattr(bioimageio_package, 'extras_installed', lambda: False)
  with pytest.raises(ValueError, match=r'^--bioimageio needs the optional export extras'):
    bioimageio_package.write_package(unet.build_unet(1), serving.of_run(config_lib.train_config(
        train_data='x', model_dir='y')), str(tmp_path), 1)


def test_a_description_that_does_not_validate_is_refused_in_one_line(tmp_path):
  with pytest.raises(ValueError, match='^the BioImage Model Zoo description does not validate: '
                     ) as raised:
    bioimageio_package.write_package(
        unet.build_unet(1, upsampling='resize'),
        serving.of_run(config_lib.train_config(train_data='x', model_dir='y')), str(tmp_path), 1,
        license_id='no such licence')
  assert '\n' not in str(raised.value) and 'license' in str(raised.value)
  assert not (tmp_path / bioimageio_package.PACKAGE_NAME).exists()


@pytest.mark.parametrize('passes, slack', [(0, 8), (1, 32)])
def test_a_schemes_halo_bounds_how_far_a_pixel_reaches_through_it(passes, slack):
  # The same monotone network as above, through pixel-shuffle at stride 2
  # (n2n/inference/schemes.py): a pixel reaches the network's halo in
  # sub-image pixels, 2 image pixels each; the refinement's pass at stride 1
  # adds the network's halo once more. Every 4th of the 64 positions on the
  # stride x 32 grid is tried, so without refinement the farthest reach found is
  # within 2 x 4 pixels of the halo; with it the declared halo is the sum of the
  # two passes' worst cases, which no one position meets (measured 446 of 474).
  from n2n.inference import schemes  # pylint: disable=g-import-not-at-top
  from n2n.methods import base  # pylint: disable=g-import-not-at-top
  model = unet.build_unet(1, seed=1, upsampling='resize', width=HALO_TEST_WIDTH)
  for weight in model.weights:
    input_channels = weight.shape[2] if len(weight.shape) == 4 else 1
    weight.assign(np.full(weight.shape, 1.0 / input_channels if len(weight.shape) == 4 else 0.0,
                          np.float32))
  network = keras.Model(model.input, model.get_layer('to_float32').output)
  scheme = base.InferenceScheme(stride=2, refinement_passes=passes)
  halo = bioimageio_package.halo('max_pool', scheme)
  assert halo == (2 + passes) * bioimageio_package.halo('max_pool')
  phases = range(0, 2 * unet.SIZE_MULTIPLE, 4)
  height, width, centre = 1280, 32, 640
  images = np.full((len(phases), height, width, 1), 0.5, np.float32)
  for index, phase in enumerate(phases):
    images[index, centre + phase, width // 2, 0] = 1.5
  with_scheme = schemes.with_scheme(network, scheme)
  # The flat baseline in a batch of the same shape: oneDNN picks its kernels by shape, and a
  # batch of one summed in another order left round-off of 2e-5 where nothing reaches.
  changes = with_scheme(images).numpy() - with_scheme(np.full_like(images, 0.5)).numpy()
  assert changes.min() >= 0.0
  above, below = [], []
  for index, phase in enumerate(phases):
    rows = np.nonzero(changes[index, ..., 0].max(axis=1) > 0)[0]
    assert 0 < rows.min() and rows.max() < height - 1, phase
    above.append(centre + phase - rows.min())
    below.append(rows.max() - centre - phase)
  assert halo - slack <= max(above) <= halo and halo - slack <= max(below) <= halo, (above, below)
  assert bioimageio_package.min_input_size('max_pool', scheme) > 2 * halo


@pytest.mark.slow
def test_n2n_reads_its_own_package_as_the_network_it_was_written_from(tmp_path, monkeypatch):
  import n2n  # pylint: disable=g-import-not-at-top
  import tempfile  # pylint: disable=g-import-not-at-top
  model = unet.build_unet(3, seed=4, upsampling='resize', width=PACKAGE_TEST_WIDTH)
  run_config = config_lib.resolve_data(
      config_lib.train_config(train_data='data/noisy', model_dir='runs/x', noise='none',
                             method='neighbor2neighbor', crop_size=64,
                             network_width=PACKAGE_TEST_WIDTH),
      3, 'uint8', 255.0)
  path = bioimageio_package.write_package(model, serving.of_run(run_config), str(tmp_path), 100,
                                          authors=('A. Tester',))
  noisy = np.random.default_rng(5).integers(0, 256, (40, 56, 3)).astype(np.uint8)
  # The package is unzipped into a temporary folder: a private one here, to see it go.
  (tmp_path / 'temp').mkdir()
  monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path / 'temp'))
  denoiser = n2n.Denoiser.load(path)
  assert not list((tmp_path / 'temp').iterdir())
  denoised = denoiser(noisy)  # the weights were restored into memory before the folder went
  # The network the package was written from, on the same 8-bit scale, rounded as files are.
  reference = whole_images.make_denoiser(model)(noisy / 255.0) * 255
  assert denoised.dtype == np.uint8 and denoised.shape == noisy.shape
  assert np.abs(denoised.astype(float) - np.clip(np.round(reference), 0, 255)).max() <= 1
  # Another tool's package (a zip without n2n's SavedModel): one line naming it.
  foreign = tmp_path / 'other.zip'
  with zipfile.ZipFile(foreign, 'w') as package:
    package.writestr('rdf.yaml', 'format_version: 0.5.4\n')
    package.writestr('weights.pt', b'torch')
  with pytest.raises(ValueError, match=(
      f"^--model: '{foreign}' is a zip without tensorflow_saved_model.zip: n2n reads the "
      'BioImage Model Zoo packages that export.py --bioimageio writes')):
    n2n.Denoiser.load(str(foreign))
