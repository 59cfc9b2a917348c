"""export.py with a 3D run: the SavedModel and ONNX take volumes [N, D, H, W, C] of any
size and give the network's output on them, TFLite is refused in one line, and the BioImage
Model Zoo package has z among its axes and passes bioimageio.core's model test.

The export extras are imported plainly, as in test_onnx_model.py: where one is missing,
collecting this file fails instead of its tests passing as skips.
"""

import json
import shutil
import zipfile

import numpy as np
import onnxruntime
import pytest
import tensorflow as tf
import yaml

from bench.recipes import volumes as volume_helpers
from n2n import config as config_lib
from n2n.exports import export_run
from n2n.data import normalization
from n2n.exports import bioimageio_package
from n2n.exports import saved_model
from n2n.inference import exported_model
from n2n.inference import loading
from n2n.inference import restore

# Odd sizes on every axis, one thinner than the z pooling, one of a single voxel.
SIZES = ((11, 40, 45), (3, 33, 64), (1, 1, 1), (16, 64, 64))


@pytest.fixture(scope='module')
def thin_run(tmp_path_factory):
  """A 3D pairs run of 4 steps on 8-plane crops (its weights, not its quality, matter).
  Width 8: what the exports must keep (axes, halos, tiling, the checkpoint's
  output) does not depend on the width, and bioimageio.core's model test runs
  the network on a whole test volume (the 2D package tests' reason too)."""
  root = tmp_path_factory.mktemp('volume_export')
  records, _ = volume_helpers.write_phantom_dataset(root, count=2)
  return volume_helpers.train_run(records, root / 'run', 4, crop_depth=8, network_width=8)


def _reference(model, volume):
  """The bare network on the volume reflect-padded by numpy up to multiples of 8 (z) and
  32 (y, x), cropped back: what the export's graph must compute."""
  depth, height, width = volume.shape[:3]
  up = lambda size, multiple: -(-size // multiple) * multiple - size
  padded = np.pad(volume, [(0, up(depth, 8)), (0, up(height, 32)), (0, up(width, 32)), (0, 0)],
                  mode='reflect' if min(volume.shape[:3]) > 1 else 'edge')
  return model(padded[np.newaxis], training=False)[0].numpy()[:depth, :height, :width]


@pytest.mark.slow
def test_saved_model_and_onnx_take_volumes_of_any_size_and_tile_like_the_checkpoint(thin_run, tmp_path):
  export_run.export_run(config_lib.ExportConfig(model=str(thin_run), output=str(tmp_path / 'e'),
                                               onnx=True))
  saved = config_lib.read_train_config(json.loads((tmp_path / 'e' / 'config.json').read_text()))
  assert config_lib.model_spatial_dims(saved) == 3
  model = restore.restore_model(str(thin_run), 'float32', upsampling='resize').model
  signature = tf.saved_model.load(str(tmp_path / 'e')).signatures[exported_model.SIGNATURE]
  session = onnxruntime.InferenceSession(str(tmp_path / 'e' / 'model.onnx'))
  rng = np.random.default_rng(2)
  for size in SIZES:
    volume = rng.uniform(size=size + (1,)).astype(np.float32)
    expected = _reference(model, volume)
    served = signature(**{exported_model.INPUT_NAME: tf.constant(volume[np.newaxis])})
    onnx, = session.run(None, {exported_model.INPUT_NAME: volume[np.newaxis]})
    for name, output in (('SavedModel', served[exported_model.OUTPUT_NAME].numpy()),
                         ('ONNX', onnx)):
      assert output.shape == (1,) + size + (1,), (name, size)
      # float32 sums in another order: measured at most 3e-6 apart.
      np.testing.assert_allclose(output[0], expected, atol=1e-4, err_msg=f'{name} {size}')
  # denoise.py's path: the same tiles over the export and over the checkpoint.
  volume = rng.uniform(size=(20, 70, 50, 1)).astype(np.float32)
  tiled = [loading.volume_function(network, (8, 64, 64), (4, 32, 32), 1)(volume)
           for network in (loading.from_export(str(tmp_path / 'e')),
                           loading.from_checkpoint(str(thin_run), 'float32'))]
  np.testing.assert_allclose(tiled[0], tiled[1], atol=1e-4)


def test_a_percentile_export_maps_each_volume_by_its_own_percentiles_and_back(thin_run):
  model = restore.restore_model(str(thin_run), 'float32', upsampling='resize').model
  rule = normalization.Rule(normalization.PERCENTILE, 1.0, 99.8)
  serve = saved_model.serving_function(model, rule, (8, 32, 32))
  rng = np.random.default_rng(4)
  # Two volumes of one batch, one dim and one bright: each by its own map.
  batch = np.stack([rng.uniform(100, 400, (11, 40, 45, 1)),
                    rng.uniform(2000, 9000, (11, 40, 45, 1))]).astype(np.float32)
  served = serve(tf.constant(batch))[exported_model.OUTPUT_NAME].numpy()
  for volume, output in zip(batch, served):
    low, high = np.percentile(volume.astype(np.float64), [1.0, 99.8])
    mapped = ((volume - low) / (high - low)).astype(np.float32)
    expected = _reference(model, mapped).astype(np.float64) * (high - low) + low
    np.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-3 * (high - low))


def test_a_bioimageio_package_of_a_3d_percentile_run_is_refused_in_one_line(thin_run, tmp_path):
  # The same weights, recorded as a percentile run (what restore reads is config.json).
  run = tmp_path / 'percentile_run'
  shutil.copytree(thin_run, run)
  saved = json.loads((run / 'config.json').read_text())
  saved['data']['normalization'] = 'percentile'
  (run / 'config.json').write_text(json.dumps(saved))
  with pytest.raises(ValueError, match=r'^--bioimageio: --model=.* is a 3D '
                                       r'--normalization=percentile run, .* each mapped apart; '
                                       r'export it without --bioimageio'):
    export_run.export_run(config_lib.ExportConfig(model=str(run), output=str(tmp_path / 'e'),
                                                 bioimageio=True))
  assert not (tmp_path / 'e').exists()


def test_tflite_of_a_3d_run_is_refused_in_one_line_and_nothing_is_written(thin_run, tmp_path):
  with pytest.raises(ValueError, match=r'--tflite: --model=.* is a 3D run, and TensorFlow Lite '
                                       r'has no 3D pooling'):
    export_run.export_run(config_lib.ExportConfig(model=str(thin_run), output=str(tmp_path / 'e'),
                                                 tflite=True))
  assert not (tmp_path / 'e').exists()


@pytest.mark.slow
def test_the_bioimageio_package_of_a_3d_run_has_z_axes_and_passes_its_model_test(thin_run,
                                                                                 tmp_path):
  # export_run keeps the package only when bioimageio.core's model test passes.
  export_run.export_run(config_lib.ExportConfig(model=str(thin_run), output=str(tmp_path / 'e'),
                                               bioimageio=True))
  with zipfile.ZipFile(tmp_path / 'e' / bioimageio_package.PACKAGE_NAME) as package:
    rdf = yaml.safe_load(package.read('rdf.yaml'))
    test_input = np.load(package.open('test_input.npy'))
  input_axes = rdf['inputs'][0]['axes']
  output_axes = rdf['outputs'][0]['axes']
  assert [axis.get('id', axis['type']) for axis in input_axes] == ['batch', 'z', 'y', 'x',
                                                                   'channel']
  assert input_axes[1]['size'] == 8  # the training crops' depth
  halos = {axis['id']: axis['halo'] for axis in output_axes if 'halo' in axis}
  assert halos == {'z': 2, 'y': bioimageio_package.halo(), 'x': bioimageio_package.halo()}
  minimum = bioimageio_package.min_input_size()
  assert test_input.shape == (1, 8, minimum, minimum, 1)


@pytest.mark.slow
def test_a_3d_network_with_in_plane_levels_exports_to_saved_model_and_onnx(tmp_path):
  # An untrained narrow network: its in-plane levels (the planes through the 2D
  # convolution, n2n/model/conv.py) must survive both conversions.
  from n2n import run_dir  # pylint: disable=g-import-not-at-top
  from n2n.training import trainer as trainer_lib  # pylint: disable=g-import-not-at-top
  folder = tmp_path / 'run'
  config = config_lib.resolve_data(config_lib.train_config(
      train_data='unused', model_dir=str(folder), seed=3, precision='float32', noise='none',
      spatial_dims=3, xy_conv_levels=2, network_width=8, crop_size=32, crop_depth=8),
      1, 'uint16', 4095.0)
  trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'float32',
                                checkpoint_dir=str(folder))
  trainer.save(1)
  run_dir.write_config(str(folder), config)
  export_run.export_run(config_lib.ExportConfig(model=str(folder), output=str(tmp_path / 'e'),
                                               onnx=True))
  model = restore.restore_model(str(folder), 'float32', upsampling='resize').model
  assert model.get_layer('enc_conv0').kernel.shape[:3] == (1, 3, 3)
  assert model.get_layer('enc_conv3').kernel.shape[:3] == (3, 3, 3)
  volume = np.random.default_rng(2).uniform(size=(11, 40, 36, 1)).astype(np.float32)
  expected = _reference(model, volume)
  signature = tf.saved_model.load(str(tmp_path / 'e')).signatures[exported_model.SIGNATURE]
  served = signature(**{exported_model.INPUT_NAME: tf.constant(volume[np.newaxis])})
  session = onnxruntime.InferenceSession(str(tmp_path / 'e' / 'model.onnx'))
  onnx, = session.run(None, {exported_model.INPUT_NAME: volume[np.newaxis]})
  for name, output in (('SavedModel', served[exported_model.OUTPUT_NAME].numpy()),
                       ('ONNX', onnx)):
    np.testing.assert_allclose(output[0], expected, atol=1e-4, err_msg=name)
