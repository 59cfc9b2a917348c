"""export.py --bioimageio: a BioImage Model Zoo package that validates offline
with bioimageio.spec and passes bioimageio.core's model test (issue 23)."""

import zipfile

import numpy as np
import pytest

from n2n import config as config_lib
from n2n.inference import bioimageio_package
from n2n.inference import denoiser
from n2n.model import unet

pytest.importorskip('bioimageio.core', reason='optional export extras not installed')
pytest.importorskip('tf2onnx', reason='optional export extras not installed')


def test_the_halo_is_half_the_networks_receptive_field():
  # One bright pixel: the network's output moves exactly within the receptive field.
  model = unet.build_unet(1, seed=1)
  size = 416
  base = np.full((1, size, size, 1), 0.5, np.float32)
  poked = base.copy()
  poked[0, 200, 200, 0] = 1.0
  moved = np.abs(model(poked).numpy() - model(base).numpy())[0, :, 200, 0] > 0
  reach = np.nonzero(moved)[0]
  field = bioimageio_package.receptive_field()
  assert field == 286
  assert reach.max() - reach.min() + 1 <= field
  assert bioimageio_package.halo() == 143 and bioimageio_package.min_input_size() == 288
  assert bioimageio_package.receptive_field('max_blur_pool') == 348


@pytest.mark.parametrize('channels, dtype, white_level, rule', [
    (1, 'uint16', 4095.0, 'percentile'), (3, 'uint8', 255.0, 'white_level')])
def test_the_package_validates_and_passes_its_own_test(channels, dtype, white_level, rule,
                                                       tmp_path, monkeypatch):
  from bioimageio.spec import load_description  # pylint: disable=g-import-not-at-top
  model = unet.build_unet(channels, seed=2, upsampling='resize')
  run_config = config_lib.resolve_data(
      config_lib.TrainConfig(train_data='data/noisy', model_dir='runs/x', noise='none',
                             method='neighbor2neighbor', crop_size=64, normalization=rule),
      channels, dtype, white_level)
  path = bioimageio_package.write_package(model, run_config, str(tmp_path), 100,
                                          authors=('A. Tester',))
  description = load_description(path)
  assert description.validation_summary.status == 'valid-format', description.validation_summary
  (tmp_path / 'cwd').mkdir()
  monkeypatch.chdir(tmp_path / 'cwd')
  passed, failure = bioimageio_package.test_package(path)
  assert passed, failure
  # core's TensorFlow adapter unzips into its working folder: never the user's.
  assert not list((tmp_path / 'cwd').iterdir())
  names = set(zipfile.ZipFile(path).namelist())
  assert {'rdf.yaml', 'model.onnx', 'tensorflow_saved_model.zip', 'test_input.npy',
          'test_output.npy', 'cover.png', 'README.md'} <= names
  rdf = zipfile.ZipFile(path).read('rdf.yaml').decode()
  assert 'Neighbor2Neighbor' in rdf and 'Noise2Noise' in rdf and 'halo: 143' in rdf
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
    ours = denoiser.make_denoiser(model)((test_input[0] - low) / (high - low)) * (high - low) + low
  else:
    ours = denoiser.make_denoiser(model)(test_input[0] / white_level) * white_level
  np.testing.assert_allclose(test_output[0], ours, atol=1e-3 * white_level)
  page = (tmp_path / 'unpacked' / 'README.md').read_text()
  assert (f'white level {white_level:g}' if rule == 'white_level' else '1 and 99.8 percentiles'
          ) in page


def test_without_the_extras_the_package_is_refused_in_one_line(monkeypatch, tmp_path):
  monkeypatch.setattr(bioimageio_package, 'extras_installed', lambda: False)
  with pytest.raises(ValueError, match=r'^--bioimageio needs the optional export extras'):
    bioimageio_package.write_package(unet.build_unet(1), config_lib.TrainConfig(
        train_data='x', model_dir='y'), str(tmp_path), 1)


def test_a_description_that_does_not_validate_is_refused_in_one_line(tmp_path):
  with pytest.raises(ValueError, match='^the BioImage Model Zoo description does not validate: '
                     ) as raised:
    bioimageio_package.write_package(
        unet.build_unet(1, upsampling='resize'),
        config_lib.TrainConfig(train_data='x', model_dir='y'), str(tmp_path), 1,
        license_id='no such licence')
  assert '\n' not in str(raised.value) and 'license' in str(raised.value)
  assert not (tmp_path / bioimageio_package.PACKAGE_NAME).exists()
