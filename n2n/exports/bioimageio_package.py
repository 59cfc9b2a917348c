"""A trained network as a BioImage Model Zoo package (spec 0.5), for Fiji/deepImageJ,
napari, QuPath and ilastik (export.py --bioimageio).

The zip holds rdf.yaml, the ONNX weights (onnx_model.write_onnx: padding inside the
graph, so any tile size runs) and the TensorFlow SavedModel they were converted
from (for consumers with a TensorFlow engine but no ONNX one), a test input and the output n2n computes for
it (.npy), a cover image (noisy | denoised), and a documentation page written
from the run's config.json. The tensors are in the data's own units, so a
consumer hands over the raw pixels of a file, and n2n's scaling is reproduced
exactly: with --normalization=white_level the preprocessing divides by the
run's white level and the postprocessing multiplies by it again; with
--normalization=percentile the ONNX graph maps each input tensor by its own
percentiles and back (BMZ's scale_range has no inverse for the output). The
output axes carry a halo as far as an output pixel's inputs reach on one side
(halo()), so consumers that tile and crop it get no seams.

A 3D run's package has the axes batch, z, y, x, channel. Its z size is fixed at
the depth of the run's training crops, with a halo of a quarter of it: a 3D
network trained on thin crops denoises worse in deeper tiles
(docs/volumes.md), so consumers tile z as denoise.py does, in tiles as deep
as the training crops whose halves overlap.

Needs the optional export extras (requirements-export.txt): bioimageio.spec to
write and validate the package, onnxruntime and bioimageio.core to test it.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import tensorflow as tf

from n2n import errors
from n2n.data import normalization
from n2n.data import rgb_images
from n2n.exports import onnx_model
from n2n.exports import saved_model
from n2n.exports import tflite_model
from n2n.inference import whole_images
from n2n.inference import exported_model
from n2n.inference import frozen_weights
from n2n.inference import tiling
from n2n.model import receptive_field as receptive_field_lib
from n2n.model import unet

PACKAGE_NAME = 'bioimageio_model.zip'
SAVED_MODEL_ZIP = exported_model.PACKAGE_SAVED_MODEL  # what n2n's loader reads back
# Test tensors are TEST_SIZE x TEST_SIZE crops: a valid size of the input axes
# (min_input_size + k * unet.SIZE_MULTIPLE) for either downsampling (320 and
# 384) that is small enough to ship twice.
TEST_SIZE = 384
EXTRAS_MESSAGE = ('--bioimageio needs the optional export extras (bioimageio.spec, '
                  'bioimageio.core, tf2onnx, onnxruntime): pip install -r requirements-export.txt')
# The papers a package cites: the network's (every model), then the method's own
# (n2n/methods/).
NOISE2NOISE = ('Lehtinen et al. Noise2Noise: Learning Image Restoration without Clean Data. '
               'ICML 2018.', '10.48550/arXiv.1803.04189')


def extras_installed():
  """True when every package --bioimageio needs can be imported."""
  return onnx_model.onnx_extras_installed() and all(
      importlib.util.find_spec(name) for name in ('bioimageio.spec', 'bioimageio.core'))


def receptive_field(downsampling='max_pool'):
  """The U-Net's receptive field in pixels along one axis: the most output pixels
  in a row one input pixel reaches (286 for max_pool, 350 for max_blur_pool)."""
  return receptive_field_lib.receptive_field(downsampling)


def halo(downsampling='max_pool', scheme=None):
  """Pixels of context each side of an output pixel: the farthest any input
  pixel reaches on one side (158 for max_pool, 189 for max_blur_pool).

  Through an inference scheme (n2n/inference/schemes.py) with stride s, a
  pixel reaches only pixels of its own sub-image, s image pixels apart: the
  network's reach times s; the refinement's passes at stride 1 add the
  network's reach once more.

  More than half the receptive field: the pooling grid puts the field off
  centre by up to 31 pixels, so with half of it the output pixels near a
  cropped tile's edge would still depend on pixels outside the tile.
  """
  network = receptive_field_lib.halo(downsampling)
  if scheme is None:
    return network
  reach = network * scheme.stride
  return reach + network if scheme.refinement_passes else reach


def min_input_size(downsampling='max_pool', scheme=None):
  """The smallest tile side consumers may choose: a multiple of 32 above 2 * halo."""
  multiple = unet.SIZE_MULTIPLE
  return (2 * halo(downsampling, scheme) // multiple + 1) * multiple


def test_size(downsampling='max_pool', scheme=None):
  """The test tensors' side: TEST_SIZE, or the smallest input size where a
  scheme's halo asks for more."""
  return max(TEST_SIZE, min_input_size(downsampling, scheme))


def synthetic_sample(channels, size=TEST_SIZE, seed=0):
  """[size, size, channels] float32 in [0, 1]: smooth shapes plus Gaussian noise
  (sigma 0.1), a test input when no validation image is at hand."""
  rng = np.random.default_rng(seed)
  rows, columns = np.mgrid[0:size, 0:size] / size
  base = [0.5 + 0.3 * np.sin(6 * columns + phase) * np.cos(5 * rows - phase)
          for phase in range(channels)]
  clean = np.stack(base, axis=-1)
  return (clean + rng.normal(0.0, 0.1, clean.shape)).astype(np.float32)


def centre_crop(image, size=TEST_SIZE):
  """The centre size x size of [H, W, C] (reflect-padded first if smaller)."""
  height, width = image.shape[:2]
  if height < size or width < size:
    image = np.pad(image, [(0, max(0, size - height)), (0, max(0, size - width)), (0, 0)],
                   mode='reflect')
    height, width = image.shape[:2]
  top, left = (height - size) // 2, (width - size) // 2
  return image[top:top + size, left:left + size]


def default_name(run_config):
  """'n2n neighbor2neighbor denoiser (gaussian noise)': letters, digits, _+- () only,
  as the spec requires of names."""
  trained_on = ('real noisy captures' if run_config.corruption.noise == 'none'
                else f'{run_config.corruption.noise} noise')
  return f'n2n {run_config.method.name} denoiser ({trained_on})'


def _documentation(serving, step, validation_psnr):
  facts = '\n'.join(saved_model.model_facts(serving, step, validation_psnr))
  if serving.rule.per_image:
    scaling = ('The network\'s graph maps each input tensor by its own percentiles, denoises '
               'and maps the result back; a consumer that tiles an image maps each tile by the '
               'tile\'s percentiles, so give it tiles as large as memory allows.')
  else:
    scaling = ('The preprocessing divides by the white level, the network denoises, the '
               'postprocessing multiplies by it again.')
  depth = serving.volume_depth
  shape = (f'a volume (tiles of {depth} planes, as deep as the training crops, and any height '
           'and width; consumers tile it with the halo given in rdf.yaml), axes batch, z, y, x, '
           'channel' if depth else 'an image (any size; consumers tile it with the halo given '
           'in rdf.yaml), axes batch, y, x, channel')
  return f'# n2n denoiser (BioImage Model Zoo)\n\n{facts}\n\n' + (
      f'Input: the raw pixels of {shape}. {scaling} The output is in the input\'s units, '
      'not clipped.\n\nMade by n2n (export.py --bioimageio). Weights: ONNX (opset 17), and the '
      f'TensorFlow SavedModel it was converted from (TensorFlow {tf.__version__}).\n')


def write_package(model, serving, output_dir, step, validation_psnr=None, sample=None,
                  authors=('n2n user',), license_id='CC-BY-4.0', name='', saved_model_dir=None,
                  onnx_path=None):
  """Writes output_dir/bioimageio_model.zip and returns its path.

  Args:
    model: float32 keras.Model from build_unet(upsampling='resize'), with the
      run's inference scheme (n2n/inference/schemes.py).
    serving: serving.Serving of the run (its z depth, scheme and rule, what
      the package says it was trained as).
    output_dir: an existing folder (the export's).
    step, validation_psnr: as saved_model.export_model.
    sample: [H, W, C] float32 noisy image on the network's scale (1.0 at the
      white level) for the test tensors and the cover (its centre TEST_SIZE
      square; times the white level, it is the raw test input, for a
      percentile run mapped to a quarter to three quarters of it); None:
      synthetic_sample.
    authors: names for rdf.yaml; license_id: an SPDX licence of the weights;
    name: the model's name (default from the run).
    saved_model_dir: a folder saved_model.export_model wrote of this model
      (export_run's output): packed as it is, not exported again; None: the
      package exports its own.
    onnx_path: model.onnx onnx_model.write_onnx wrote of this model: packed
      as it is, not converted again; None: the package converts its own.

  Raises:
    ValueError: the optional extras are missing, or the description does not
      validate (one line, with the validator's message).
  """
  if not extras_installed():
    raise ValueError(EXTRAS_MESSAGE)
  from bioimageio.spec import save_bioimageio_package  # pylint: disable=g-import-not-at-top
  run_config, scheme, rule, depth = (serving.run_config, serving.scheme, serving.rule,
                                     serving.volume_depth)
  # A volume's test tensor is as small as its axes allow: the 3D network is slow on CPU.
  size = (min_input_size if depth else test_size)(run_config.model.downsampling, scheme)
  if depth:
    # Planes of the synthetic image, each with noise of its own: a 3D sample.
    noisy = np.stack([synthetic_sample(model.input_shape[-1], size, seed=plane)
                      for plane in range(depth)])
  else:
    noisy = centre_crop(synthetic_sample(model.input_shape[-1], size) if sample is None
                        else sample, size)
  # With a per-image map any positive scale and offset of the sample is the
  # same input to the network: keep the raw tensor well inside the data's
  # range, as real frames are, rather than crossing zero, where the BMZ test's
  # relative tolerance would fail on float rounding.
  raw = (noisy * np.float32(0.5) + np.float32(0.25) if rule.per_image
         else noisy) * np.float32(run_config.data.white_level)
  # The expected output by n2n's own rule (denoise.py's path), for the whole test tensor.
  pixel_map = normalization.image_map(raw, rule, run_config.data.white_level)
  values = normalization.normalize(raw, pixel_map)
  # Whole, as the BMZ runtime runs the test tensor (a scheme's test size may
  # pass denoise.py's tile).
  if depth:
    # Already a multiple of the pooling on every axis: the network as it is.
    denoised = frozen_weights.frozen_model(model)(tf.constant(values[np.newaxis]))[0].numpy()
  else:
    denoised = whole_images.make_denoiser(model, tile_size=tiling.round_up(size))(values)
  with tempfile.TemporaryDirectory() as folder:
    _write_weights(folder, model, serving, step, validation_psnr, saved_model_dir, onnx_path)
    _write_files(folder, (raw, normalization.denormalize(denoised, pixel_map)),
                 (values, denoised), serving, step, validation_psnr)
    try:
      description = _description(folder, serving, model.input_shape[-1], authors, license_id,
                                 name)
    except ValueError as error:  # pydantic's ValidationError: several lines per field
      raise ValueError('the BioImage Model Zoo description does not validate: '
                       + ' '.join(str(error).split())) from None
    path = os.path.join(output_dir, PACKAGE_NAME)
    written = save_bioimageio_package(description, output_path=path)
    if os.path.abspath(str(written)) != os.path.abspath(path):
      shutil.move(str(written), path)
  return path


def _write_weights(folder, model, serving, step, validation_psnr, saved_model_dir, onnx_path):
  """The package's two weights into folder: the ONNX model and the zipped
  SavedModel, each the export's where given (write_package's saved_model_dir
  and onnx_path), else made here."""
  if onnx_path:
    shutil.copy(onnx_path, os.path.join(folder, onnx_model.ONNX_NAME))
  else:
    onnx_model.write_onnx(model, folder, serving.rule, serving.multiples)
  if not saved_model_dir:
    saved_model_dir = os.path.join(folder, 'saved_model')
    saved_model.export_model(model, serving, saved_model_dir, step, validation_psnr)
  _zip_saved_model(saved_model_dir, os.path.join(folder, SAVED_MODEL_ZIP))


def _zip_saved_model(saved_model_dir, path):
  """Zips what saved_model.export_model wrote in saved_model_dir (serving_default,
  the same graph the ONNX weights were converted from, config.json, README.md)
  into path, as the spec asks: an export's other formats beside it are left out."""
  beside = {onnx_model.ONNX_NAME, tflite_model.TFLITE_NAME, PACKAGE_NAME}
  with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as archive:
    for where, folders, names in os.walk(saved_model_dir):
      folders.sort()
      for name in sorted(names):
        file_path = os.path.join(where, name)
        if where == saved_model_dir and name in beside:
          continue
        archive.write(file_path, os.path.relpath(file_path, saved_model_dir))


def _write_files(folder, test_tensors, network_values, serving, step, validation_psnr):
  """The package's test tensors, cover and page, into folder.

  Args:
    test_tensors: (input, expected output), [H, W, C] ([D, H, W, C]) float32 in
      the data's units.
    network_values: (noisy, denoised), the same on the network's scale (the
      cover: a volume's middle plane).
  """
  for name, tensor in zip(('test_input.npy', 'test_output.npy'), test_tensors):
    np.save(os.path.join(folder, name), tensor[np.newaxis].astype(np.float32))
  noisy, denoised = (values[len(values) // 2] if values.ndim == 4 else values
                     for values in network_values)
  cover = np.concatenate([noisy, np.ones_like(noisy[:, :8]), denoised], axis=1)
  cover = np.round(np.clip(cover, 0.0, 1.0) * 255).astype(np.uint8)
  with open(os.path.join(folder, 'cover.png'), 'wb') as cover_file:
    cover_file.write(rgb_images.encode_png(cover[..., 0] if cover.shape[-1] == 1 else cover))
  with open(os.path.join(folder, 'README.md'), 'w') as readme:
    readme.write(_documentation(serving, step, validation_psnr))


def _description(folder, serving, channels, authors, license_id, name):
  """The v0.5 ModelDescr of the files in folder (_write_files, onnx_model.write_onnx), its
  halo and smallest input those of the run's inference scheme."""
  from bioimageio.spec.model import v0_5 as bmz  # pylint: disable=g-import-not-at-top
  run_config, scheme = serving.run_config, serving.scheme
  white_level = float(run_config.data.white_level)
  # Percentile maps happen inside the graph: BMZ has no inverse of scale_range.
  scaled = not serving.rule.per_image
  downsampling = run_config.model.downsampling
  file_in = lambda name: bmz.FileDescr(source=os.path.join(folder, name))
  channel_names = ([bmz.Identifier('gray')] if channels == 1 else
                   [bmz.Identifier(colour) for colour in ('red', 'green', 'blue')])
  size = bmz.ParameterizedSize(min=min_input_size(downsampling, scheme), step=unet.SIZE_MULTIPLE)
  input_id = bmz.TensorId(exported_model.INPUT_NAME)
  depth = serving.volume_depth
  z_input = [bmz.SpaceInputAxis(id=bmz.AxisId('z'), size=depth)] if depth else []
  inputs = bmz.InputTensorDescr(
      id=input_id,
      # A volume's batch is one volume: bioimageio.core's model test then runs the 3D
      # network on batches of 1 only (of 2 too, it ran for over 5 minutes on 2 cores).
      axes=[bmz.BatchAxis(size=1 if depth else None), *z_input,
            bmz.SpaceInputAxis(id=bmz.AxisId('y'), size=size),
            bmz.SpaceInputAxis(id=bmz.AxisId('x'), size=size),
            bmz.ChannelAxis(channel_names=channel_names)],
      test_tensor=file_in('test_input.npy'), data=bmz.IntervalOrRatioDataDescr(type='float32'),
      preprocessing=[bmz.EnsureDtypeDescr(kwargs=bmz.EnsureDtypeKwargs(dtype='float32'))] + [
          bmz.ScaleLinearDescr(kwargs=bmz.ScaleLinearKwargs(gain=1.0 / white_level))][:scaled])
  output_axis = lambda axis, reach: bmz.SpaceOutputAxisWithHalo(
      id=bmz.AxisId(axis), size=bmz.SizeReference(tensor_id=input_id, axis_id=bmz.AxisId(axis)),
      halo=reach)
  xy_halo = halo(downsampling, scheme)
  z_output = [output_axis('z', depth // 4)] if depth else []
  outputs = bmz.OutputTensorDescr(
      id=bmz.TensorId(exported_model.OUTPUT_NAME),
      axes=[bmz.BatchAxis(size=1 if depth else None), *z_output, output_axis('y', xy_halo),
            output_axis('x', xy_halo),
            bmz.ChannelAxis(channel_names=channel_names)],
      test_tensor=file_in('test_output.npy'), data=bmz.IntervalOrRatioDataDescr(type='float32'),
      postprocessing=[bmz.ScaleLinearDescr(kwargs=bmz.ScaleLinearKwargs(gain=white_level))][
          :scaled])
  citations = [NOISE2NOISE] + list(serving.citations)
  return bmz.ModelDescr(
      name=name or default_name(run_config),
      description=f'trained as: {serving.trained_as}',
      authors=[bmz.Author(name=author) for author in authors],
      cite=[bmz.CiteEntry(text=text, doi=bmz.Doi(doi)) for text, doi in citations],
      license=bmz.LicenseId(license_id), documentation=file_in('README.md'),
      covers=[file_in('cover.png')], inputs=[inputs], outputs=[outputs],
      weights=bmz.WeightsDescr(
          tensorflow_saved_model_bundle=bmz.TensorflowSavedModelBundleWeightsDescr(
              source=os.path.join(folder, SAVED_MODEL_ZIP),
              tensorflow_version=bmz.Version(tf.__version__)),
          onnx=bmz.OnnxWeightsDescr(
              source=os.path.join(folder, onnx_model.ONNX_NAME), opset_version=onnx_model.ONNX_OPSET,
              parent='tensorflow_saved_model_bundle')))


# Run in a process of its own by test_package: prints one JSON line last.
_CORE_TEST = """
import json, sys
from bioimageio.core import test_model
summary = test_model(sys.argv[1])
failures = [f'{detail.name}: {"; ".join(str(error.msg) for error in detail.errors)}'
            for detail in summary.details if detail.status == 'failed']
print(json.dumps({'passed': summary.status == 'passed', 'failures': failures}))
"""


def test_package(path):
  """bioimageio.core's model test of a package (its own test tensors through its
  weights); returns (passed, first failure message or '').

  The test runs in a process of its own, in a scratch folder: it sets
  process-wide state (TF_ENABLE_ONEDNN_OPTS=0 in os.environ, which every later
  subprocess inherits, then running TensorFlow without oneDNN: bfloat16
  emulated, several times slower, other numerics; TensorFlow's, NumPy's and
  Python's global seeds) and unzips the SavedModel into
  ./bioimageio_unzipped_tf_weights. The scratch folder is its temp folder too:
  onnxruntime (1.32) writes TMPDIR/.ses on import and leaves it there.
  """
  path = os.path.abspath(path)
  with tempfile.TemporaryDirectory() as scratch:
    result = subprocess.run([sys.executable, '-c', _CORE_TEST, path], cwd=scratch,
                            env={**os.environ, 'TMPDIR': scratch}, capture_output=True,
                            text=True)
  lines = result.stdout.strip().splitlines()
  if result.returncode or not lines:
    return False, errors.first_line(result.stderr.strip().splitlines()[-1] if result.stderr.strip()
                                    else f'bioimageio.core exited with {result.returncode}')
  report = json.loads(lines[-1])
  return report['passed'], (report['failures'][0] if report['failures'] else '')
