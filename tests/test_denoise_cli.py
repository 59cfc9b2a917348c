"""denoise.py as a user runs it, on a small trained-from-scratch run."""

import os
import subprocess
import sys
import types

import numpy as np
import pytest

from bench.recipes.images import smooth_image
from n2n import config as config_lib
from n2n import hardware
from n2n.apps import denoise as denoise_app
from n2n.data import native_images
from n2n.exports import export_run
from tests.conftest import REPO_ROOT


@pytest.fixture(scope='module')
def model_dir(denoise_model_dir):
  return denoise_model_dir


def _denoise(*flags, temp=None):
  """denoise.py with flags; temp: its temp folder (TMPDIR), else the session's."""
  return subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), *flags],
                        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
                        env={**os.environ, **({'TMPDIR': str(temp)} if temp else {})})


def _write(path, pages):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_bytes(native_images.encode_pages(pages, native_images.family_of(str(path))))


def test_every_layout_comes_back_as_it_went_in(model_dir, tmp_path):
  rng = np.random.default_rng(0)
  inputs = tmp_path / 'noisy'
  rgb8 = smooth_image(rng, 45, 70)
  gray16 = smooth_image(rng, 50, 40, 1)[:, :, 0].astype(np.uint16) * 257
  float_tiff = rng.uniform(-0.2, 1.3, (33, 31)).astype(np.float32)
  rgba = np.concatenate([smooth_image(rng, 40, 40), np.full((40, 40, 1), 9, np.uint8)], -1)
  _write(inputs / 'rgb8.png', [rgb8])
  _write(inputs / 'sub' / 'gray16.png', [gray16])
  _write(inputs / 'float.tif', [float_tiff])
  _write(inputs / 'rgba.png', [rgba])
  _write(inputs / 'pages.tif', [rgb8, rgb8[:, :, 0]])
  _write(inputs / 'photo.jpg', [rgb8])
  (inputs / 'broken.png').write_bytes(b'\x89PNG\r\n\x1a\n nope')
  output = tmp_path / 'denoised'
  (tmp_path / 'temp').mkdir()
  result = _denoise(f'--model={model_dir}', f'--input={inputs}', f'--output_dir={output}',
                    temp=tmp_path / 'temp')
  assert not list((tmp_path / 'temp').iterdir())  # the temp folder left as it was found
  # The first line names the precision: by default what this hardware runs natively.
  assert result.stdout.splitlines()[0] == f'precision {hardware.resolve_precision("auto")} (auto)'
  # 3: some files were skipped (broken.png), the rest written.
  assert result.returncode == 3, result.stderr[-3000:]
  assert 'denoised 6 of 7 files, 1 skipped' in result.stdout
  assert 'broken.png' in result.stdout and 'Skipping' in result.stderr
  expected = {'rgb8.png': ((45, 70, 3), np.uint8), 'sub/gray16.png': ((50, 40), np.uint16),
              'float.tif': ((33, 31), np.float32), 'rgba.png': ((40, 40, 4), np.uint8),
              'photo.png': ((45, 70, 3), np.uint8)}
  for name, (shape, dtype) in expected.items():
    (page,) = native_images.read_pages(str(output / name))
    assert page.shape == shape and page.dtype == dtype, name
  (float_page,) = native_images.read_pages(str(output / 'float.tif'))
  assert float_tiff.min() <= float_page.min() and float_page.max() <= float_tiff.max()
  (rgba_page,) = native_images.read_pages(str(output / 'rgba.png'))
  assert (rgba_page[..., 3] == 9).all()
  pages = native_images.read_pages(str(output / 'pages.tif'))
  assert [page.shape for page in pages] == [(45, 70, 3), (45, 70)]


def test_refusals_are_one_line_and_nothing_readable_fails(model_dir, tmp_path):
  inputs = tmp_path / 'noisy'
  inputs.mkdir()
  (inputs / 'broken.png').write_bytes(b'not an image')
  # Nothing readable: the program's own exit status and last line (a process).
  nothing = _denoise(f'--model={model_dir}', f'--input={inputs}', f'--output_dir={tmp_path}/o')
  assert nothing.returncode == 2
  assert nothing.stderr.strip().splitlines()[-1] == (
      'denoise.py: error: no file could be denoised')
  # Refusals before any work: the messages denoise.py prints after 'denoise.py:
  # error: ' (tests/test_cli.py checks that form), from the functions its main
  # calls, without a process each.
  settings = lambda **values: config_lib.DenoiseConfig(
      **{'model': str(model_dir), 'input': str(inputs), 'output_dir': f'{tmp_path}/o', **values})
  with pytest.raises(ValueError, match=r"^--output_dir='.*' is inside the input folder"):
    denoise_app.plan(settings(output_dir=f'{inputs}/out'))
  with pytest.raises(ValueError, match=f"^--model: no checkpoint in '{tmp_path}'$"):
    denoise_app.load_network(settings(model=str(tmp_path)))
  with pytest.raises(ValueError, match='^--shard=auto: neither SLURM_ARRAY_TASK_ID'):
    denoise_app.plan(settings(shard='auto'))


@pytest.mark.slow
def test_export_then_denoise_with_the_export_gives_the_same_file(model_dir, tmp_path):
  rng = np.random.default_rng(2)
  _write(tmp_path / 'noisy' / 'a.png', [smooth_image(rng, 40, 52)])
  exported = tmp_path / 'exported'
  # Its own temp folder, to see that the program leaves it as it found it (empty).
  (tmp_path / 'temp').mkdir()
  result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'export.py'),
                           f'--model={model_dir}', f'--output={exported}', '--tflite', '--onnx',
                           '--bioimageio'],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
                          env={**os.environ, 'TMPDIR': str(tmp_path / 'temp')})
  assert result.returncode == 0, result.stderr[-3000:]
  assert not list((tmp_path / 'temp').iterdir())
  assert 'step 0' in result.stdout and (exported / 'README.md').exists()
  assert f'wrote {exported / "model.onnx"}' in result.stdout
  # The ONNX model gives every pixel the SavedModel beside it gives, on the
  # network's scale (an 8-bit file divided by 255): measured at most 7e-6 apart.
  import onnxruntime  # pylint: disable=g-import-not-at-top  (an export extra)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  (noisy,) = native_images.read_pages(str(tmp_path / 'noisy' / 'a.png'))
  values = noisy[np.newaxis].astype(np.float32) / 255
  session = onnxruntime.InferenceSession(str(exported / 'model.onnx'))
  (from_onnx,) = session.run(None, {'images': values})
  loaded = tf.saved_model.load(str(exported))
  # model.tflite holds every weight of the network in float32 (4 bytes each), and its
  # graph (3.98 MB for the paper's 991,203 weights; 131 kB for width 8's 28,274).
  weights = sum(variable.shape.num_elements() for variable in loaded.variables)
  assert (exported / 'model.tflite').stat().st_size > 4 * weights > 100_000
  serving = loaded.signatures['serving_default']
  from_saved_model = serving(images=tf.constant(values))['denoised'].numpy()
  assert from_onnx.shape == values.shape
  np.testing.assert_allclose(from_onnx, from_saved_model, rtol=0, atol=1e-4)
  assert (exported / 'bioimageio_model.zip').stat().st_size > 1_000_000
  again = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'export.py'),
                          f'--model={model_dir}', f'--output={exported}'],
                         capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
  assert again.stderr.strip().splitlines()[-1].startswith("export.py: error: --output='")
  # --overwrite replaces the whole export: the earlier model.tflite does not stay behind
  # (export.py's call, export_run, without a process: the one above ran the program).
  (exported / 'notes.txt').write_text('mine')
  export_run.export_run(config_lib.ExportConfig(model=str(model_dir), output=str(exported),
                                                overwrite=True))
  assert (exported / 'saved_model.pb').exists() and (exported / 'README.md').exists()
  assert not (exported / 'model.tflite').exists() and not (exported / 'notes.txt').exists()
  assert not (exported / 'model.onnx').exists()
  assert sorted(path.name for path in tmp_path.iterdir()) == ['exported', 'noisy', 'temp']
  for source, name in ((model_dir, 'from_run'), (exported, 'from_export')):
    # An export runs in float32, as saved: the run is asked for the same.
    result = _denoise(f'--model={source}', f'--input={tmp_path / "noisy"}',
                      f'--output_dir={tmp_path / name}', '--precision=float32')
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith('precision float32')
  (from_run,) = native_images.read_pages(str(tmp_path / 'from_run' / 'a.png'))
  (from_export,) = native_images.read_pages(str(tmp_path / 'from_export' / 'a.png'))
  assert np.abs(from_run.astype(int) - from_export.astype(int)).max() <= 1
  # And denoise.py's file from the run: within one 8-bit level of the ONNX output, every pixel.
  onnx_8_bits = np.round(np.clip(from_onnx[0], 0, 1) * 255)
  assert np.abs(from_run.astype(int) - onnx_8_bits).max() <= 1


def _odd_corpus(folder, rng):
  """A folder as users have them: 24 entries, each odd in its own way.

  Returns:
    {name: True if it must be denoised, False if it must be skipped, None if either}.
  """
  import io  # pylint: disable=g-import-not-at-top
  import tifffile  # pylint: disable=g-import-not-at-top
  from PIL import Image  # pylint: disable=g-import-not-at-top
  from tests.conftest import pillow_bytes  # pylint: disable=g-import-not-at-top
  folder.mkdir()
  rgb = smooth_image(rng, 48, 64)
  expected = {}

  def add(name, data, denoised):
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    expected[name] = denoised

  png = native_images.encode_pages([rgb], 'png')
  jpeg = native_images.encode_pages([rgb], 'jpeg')
  tiff = native_images.encode_pages([rgb], 'tiff')
  add('truncated.png', png[:len(png) // 2], False)
  add('cut_short.jpg', jpeg[:len(jpeg) // 3], None)  # libjpeg may fill in a grey tail
  add('cut_short.tif', tiff[:len(tiff) // 2], False)
  add('zero_bytes.png', b'', False)  # 'empty file (0 bytes)'
  add('one_pixel.png', native_images.encode_pages([rgb[:1, :1]], 'png'), True)
  add('cmyk.jpg', pillow_bytes(rgb, 'CMYK', 'JPEG'), True)
  rgba16 = np.concatenate([rgb.astype(np.uint16) * 257, np.full((48, 64, 1), 60000, np.uint16)],
                          -1)
  add('rgba16.png', native_images.encode_pages([rgba16], 'png'), True)
  non_finite = rng.uniform(0, 1, (40, 40)).astype(np.float32)
  non_finite[3, 4], non_finite[5, 6], non_finite[7, 8] = np.nan, np.inf, -np.inf
  add('nan_inf.tif', native_images.encode_pages([non_finite], 'tiff'), True)
  add('pages_of_two_sizes.tif', native_images.encode_pages([rgb, rgb[:20, :30, 0]], 'tiff'), True)
  add('palette.png', pillow_bytes(rgb, 'P', 'PNG'), True)
  # A valid PNG signature and header claiming 100000 x 100000 pixels, then nothing.
  header = bytearray(png[:33])
  header[16:24] = (100000).to_bytes(4, 'big') * 2
  add('huge_header.png', bytes(header), False)
  add('text.png', b'these are my notes, not an image\n', False)
  add('x.png/inside.png', png, True)  # a folder named x.png: its file is an image
  planar = io.BytesIO()
  tifffile.imwrite(planar, np.moveaxis(rgb, -1, 0).copy(), planarconfig='separate',
                   photometric='rgb')
  add('planar.tif', planar.getvalue(), True)
  extra = io.BytesIO()
  tifffile.imwrite(extra, np.concatenate([rgb, rgb[:, :, :2]], -1), photometric='rgb',
                   extrasamples=['unspecified', 'unspecified'])
  add('extra_samples.tif', extra.getvalue(), True)
  hyperstack = io.BytesIO()
  tifffile.imwrite(hyperstack, rng.integers(0, 4000, (2, 3, 2, 24, 32), dtype=np.uint16),
                   imagej=True, metadata={'axes': 'TZCYX'})
  add('hyperstack.tif', hyperstack.getvalue(), True)
  rotated = Image.fromarray(rgb)
  exif = rotated.getexif()
  exif[0x0112] = 6  # EXIF orientation: rotate 90 degrees clockwise to view
  buffer = io.BytesIO()
  rotated.save(buffer, 'JPEG', exif=exif)
  add('phone.jpg', buffer.getvalue(), True)
  add('gray_alpha.png', pillow_bytes(rgb, 'LA', 'PNG'), True)
  add('photo.webp', pillow_bytes(rgb, 'RGB', 'WEBP'), True)
  add('screen.bmp', pillow_bytes(rgb, 'RGB', 'BMP'), True)
  add('animation.gif', pillow_bytes(rgb, 'P', 'GIF'), True)
  add('unreadable.png', png, None)  # chmod 000: root reads it anyway
  os.chmod(folder / 'unreadable.png', 0)
  os.symlink('loop.png', folder / 'loop.png')  # a link to itself
  expected['loop.png'] = False
  os.symlink('nowhere.png', folder / 'dangling.png')
  expected['dangling.png'] = False
  return expected


@pytest.mark.slow
def test_a_messy_folder_is_denoised_or_skipped_file_by_file_and_never_overwritten(model_dir,
                                                                                 tmp_path):
  inputs, output = tmp_path / 'messy', tmp_path / 'denoised'
  expected = _odd_corpus(inputs, np.random.default_rng(5))
  assert len(expected) >= 20
  first = _denoise(f'--model={model_dir}', f'--input={inputs}', f'--output_dir={output}')
  assert first.returncode == 3, first.stderr[-3000:]  # some skipped, the rest written
  skipped = {line.split(': ', 1)[0].split('skipped ', 1)[1]: line
             for line in first.stdout.splitlines() if line.startswith('  skipped ')}
  skipped_names = {os.path.relpath(path, inputs) for path in skipped}
  for name, denoised in expected.items():
    if denoised is True:
      assert name not in skipped_names, skipped.get(str(inputs / name))
    elif denoised is False:
      assert name in skipped_names, first.stdout
  # Every skip is one plain line: no TensorFlow op, device or traceback in it or around it.
  for text in (first.stdout, first.stderr):
    for marker in ('{{function_node', '[Op:', 'Traceback', 'local_rendezvous', 'png_io.cc'):
      assert marker not in text, text[-3000:]
  assert '1000 MP this tool decodes' in skipped[str(inputs / 'huge_header.png')]
  assert skipped[str(inputs / 'zero_bytes.png')].endswith(': empty file (0 bytes)')
  written = sorted(str(path.relative_to(output)) for path in output.rglob('*') if path.is_file())
  assert len(written) + len(skipped) == len(expected)
  assert not [name for name in written if 'partial' in name]
  # Layouts come back as they went in.
  (phone,) = native_images.read_pages(str(output / 'phone.png'))
  assert phone.shape == (64, 48, 3)  # upright: EXIF orientation applied
  (planar,) = native_images.read_pages(str(output / 'planar.tif'))
  (extra,) = native_images.read_pages(str(output / 'extra_samples.tif'))
  assert planar.shape == (48, 64, 3) and extra.shape == (48, 64, 5)
  np.testing.assert_array_equal(extra[:, :, :3], planar)  # same pixels, same denoising
  np.testing.assert_array_equal(extra[:, :, 3:], smooth_image(np.random.default_rng(5), 48,
                                                              64)[:, :, :2])
  (nan_inf,) = native_images.read_pages(str(output / 'nan_inf.tif'))
  assert np.isnan(nan_inf[3, 4]) and nan_inf[5, 6] == np.inf and nan_inf[7, 8] == -np.inf
  assert np.isfinite(nan_inf).sum() == 40 * 40 - 3
  import tifffile  # pylint: disable=g-import-not-at-top
  with tifffile.TiffFile(output / 'hyperstack.tif') as stack:
    assert stack.is_imagej and stack.series[0].axes == 'TZCYX'
    assert stack.series[0].shape == (2, 3, 2, 24, 32)
  assert [page.shape for page in native_images.read_pages(
      str(output / 'pages_of_two_sizes.tif'))] == [(48, 64, 3), (20, 30)]
  # A rerun finds every output done: nothing is written again, the failures are listed again.
  times = {path: path.stat().st_mtime_ns for path in output.rglob('*') if path.is_file()}
  again = _denoise(f'--model={model_dir}', f'--input={inputs}', f'--output_dir={output}')
  assert again.returncode == 3
  assert f'denoised 0 of {len(expected)} files, {len(written)} already done' in again.stdout
  assert {path: path.stat().st_mtime_ns for path in times} == times


def test_two_inputs_for_one_output_are_refused_before_any_work(model_dir, tmp_path):
  rng = np.random.default_rng(6)
  _write(tmp_path / 'in' / 'a.png', [smooth_image(rng, 32, 32)])
  _write(tmp_path / 'in' / 'a.jpg', [smooth_image(rng, 32, 32)])
  result = _denoise(f'--model={model_dir}', f'--input={tmp_path / "in"}',
                    f'--output_dir={tmp_path / "out"}')
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == (
      f'denoise.py: error: --input: {tmp_path}/in/a.jpg and {tmp_path}/in/a.png would both be '
      f'written to {tmp_path}/out/a.png; move or rename one of them (nothing was written)')
  assert not (tmp_path / 'out').exists()


@pytest.mark.slow
def test_tta_keeps_the_files_bit_depth_and_averages_eight_passes(model_dir, tmp_path):
  rng = np.random.default_rng(5)
  page = (smooth_image(rng, 37, 50, 1)[:, :, 0].astype(np.uint16) * 250)
  _write(tmp_path / 'in' / 'frame.png', [page])
  # float32, as the library's reference below (bfloat16 keeps about 3 significant digits).
  result = _denoise(f'--model={model_dir}', f'--input={tmp_path / "in"}',
                    f'--output_dir={tmp_path / "tta"}', '--precision=float32', '--tta')
  assert result.returncode == 0, result.stderr[-3000:]
  (written,) = native_images.read_pages(str(tmp_path / 'tta' / 'frame.png'))
  assert written.dtype == np.uint16 and written.shape == page.shape
  # The file holds the library's 8-pass mean (grayscale as three equal channels
  # for this RGB network, their mean written back), rounded to 16 bits.
  from n2n.inference import whole_images  # pylint: disable=g-import-not-at-top
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  model = restore.restore_model(str(model_dir)).model
  rgb = np.repeat(page[:, :, np.newaxis].astype(np.float32) / 65535, 3, axis=2)
  denoise = whole_images.make_denoiser(model)
  to_16_bits = lambda output: np.clip(output.mean(axis=2), 0, 1) * 65535
  # Not the one pass denoise.py writes without --tta (the library's, rounded as the file).
  assert (written != np.round(to_16_bits(denoise(rgb)))).mean() > 0.5
  expected = whole_images.with_test_time_augmentation(denoise)(rgb)
  assert np.abs(written.astype(float) - to_16_bits(expected)).max() <= 1.0


def _reference_scheme(network, image, stride, passes):
  """The scheme in numpy around the bare network: every stride-th pixel's
  sub-image denoised on its own, put back; then each refinement pass over the
  denoised image with its pattern's pixels put back to noisy. image: [H, W, C]
  with H and W multiples of stride * 32 (no padding to reproduce)."""
  from n2n.inference import schemes  # pylint: disable=g-import-not-at-top
  run = lambda batch: np.asarray(network(batch.astype(np.float32), training=False))
  denoised = np.empty_like(image)
  for row in range(stride):
    for column in range(stride):
      denoised[row::stride, column::stride] = run(image[np.newaxis, row::stride,
                                                        column::stride])[0]
  if not passes:
    return denoised
  height, width = image.shape[:2]
  refined = []
  for pattern in schemes.refinement_pattern(passes, 0.16):
    noisy_back = np.tile(pattern, (height // 64 + 1, width // 64 + 1, 1))[:height, :width]
    refined.append(run(np.where(noisy_back, image, denoised)[np.newaxis])[0])
  return np.mean(refined, axis=0)


def _turned_back_schemes(network, image, stride, passes):
  """[8 x [H, W, C]]: _reference_scheme on each flipped and quarter-turned copy of
  image, turned back (H and W multiples of stride * 32)."""
  turned_back = []
  for flipped in (False, True):
    for quarter_turns in range(4):
      view = np.rot90(image[:, ::-1] if flipped else image, quarter_turns)
      output = np.rot90(_reference_scheme(network, np.ascontiguousarray(view), stride, passes),
                        -quarter_turns)
      turned_back.append(output[:, ::-1] if flipped else output)
  return turned_back


def _exported_outputs(model_dir, tmp_path, image):
  """{'saved_model', 'onnx', 'tflite': [H, W, C]} of export.py's call on model_dir
  (SavedModel, TFLite and ONNX), each run on image ([H, W, C] float32)."""
  import onnxruntime  # pylint: disable=g-import-not-at-top  (an export extra)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  exported = tmp_path / 'exported'
  export_run.export_run(config_lib.ExportConfig(model=str(model_dir), output=str(exported),
                                                tflite=True, onnx=True))
  batch = image[np.newaxis]
  serving = tf.saved_model.load(str(exported)).signatures['serving_default']
  outputs = {'saved_model': serving(images=tf.constant(batch))['denoised'].numpy()[0]}
  session = onnxruntime.InferenceSession(str(exported / 'model.onnx'))
  outputs['onnx'] = session.run(None, {'images': batch})[0][0]
  runner = tf.lite.Interpreter(model_path=str(exported / 'model.tflite')).get_signature_runner(
      'serving_default')
  outputs['tflite'] = runner(images=batch)['denoised'][0]
  return outputs


def test_a_pixel_shuffle_run_denoises_the_same_through_denoise_py_and_every_export(
    scheme_model_dir, tmp_path):
  """denoise.py runs a pixel-shuffle run's inference scheme, and so do the
  SavedModel, TFLite and ONNX exports of it: each against a numpy reference of
  the scheme around the bare network."""
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(5)
  image = smooth_image(rng, 128, 128)  # a multiple of stride 2 x 32: nothing padded
  _write(tmp_path / 'noisy' / 'a.png', [image])
  values = image.astype(np.float32) / 255
  network = restore.restore_model(str(scheme_model_dir)).network
  expected = _reference_scheme(network, values, 2, 2)
  result = _denoise(f'--model={scheme_model_dir}', f'--input={tmp_path / "noisy"}',
                    f'--output_dir={tmp_path / "out"}', '--precision=float32')
  assert result.returncode == 0, result.stderr[-3000:]
  (from_run,) = native_images.read_pages(str(tmp_path / 'out' / 'a.png'))
  expected_8_bits = np.round(np.clip(expected, 0, 1) * 255)
  assert np.abs(from_run.astype(int) - expected_8_bits).max() <= 1
  # Without the scheme the output would be another image: the check can fail.
  plain = np.asarray(network(values[np.newaxis], training=False))[0]
  assert np.abs(np.round(np.clip(plain, 0, 1) * 255) - expected_8_bits).max() > 1
  # export.py's call (test_export_then_denoise_with_the_export_gives_the_same_file runs
  # the program).
  for name, output in _exported_outputs(scheme_model_dir, tmp_path, values).items():
    np.testing.assert_allclose(output, expected, atol=1e-4, err_msg=name)
  # The BMZ package holds this ONNX graph and SavedModel (bioimageio_package.py
  # writes them with the same functions); the halo it declares for a scheme:
  # tests/exports/test_bioimageio_package.py.


@pytest.mark.slow
def test_a_run_of_eight_orientations_denoises_their_mean_through_denoise_py_and_every_export(
    orientations_model_dir, tmp_path):
  """A run whose scheme averages the 8 orientations: denoise.py and the
  SavedModel, TFLite and ONNX exports each give the mean of the numpy scheme
  over the flipped and turned copies, turned back; --tta adds nothing."""
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  image = smooth_image(np.random.default_rng(7), 128, 64)  # not square; multiples of 2 x 32
  _write(tmp_path / 'noisy' / 'a.png', [image])
  values = image.astype(np.float32) / 255
  network = restore.restore_model(str(orientations_model_dir)).network
  turned_back = _turned_back_schemes(network, values, 2, 0)
  expected = np.mean(turned_back, axis=0)
  expected_8_bits = np.round(np.clip(expected, 0, 1) * 255)
  # One orientation alone is another image: the checks can fail.
  assert np.abs(np.round(np.clip(turned_back[0], 0, 1) * 255) - expected_8_bits).max() > 1
  written = {}
  for name, extra in (('plain', ()), ('tta', ('--tta',))):
    result = _denoise(f'--model={orientations_model_dir}', f'--input={tmp_path / "noisy"}',
                      f'--output_dir={tmp_path / name}', '--precision=float32', *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    (written[name],) = native_images.read_pages(str(tmp_path / name / 'a.png'))
  assert np.abs(written['plain'].astype(int) - expected_8_bits).max() <= 1
  np.testing.assert_array_equal(written['tta'], written['plain'])
  for name, output in _exported_outputs(orientations_model_dir, tmp_path, values).items():
    np.testing.assert_allclose(output, expected, atol=1e-4, err_msg=name)


@pytest.mark.slow
def test_tta_on_a_pixel_shuffle_run_averages_the_scheme_over_the_eight_orientations(
    scheme_model_dir, tmp_path):
  """--tta runs the run's inference scheme on each flipped and rotated copy:
  against a numpy reference of the scheme, turned back and averaged."""
  from n2n.inference import restore  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(6)
  image = smooth_image(rng, 128, 128)
  _write(tmp_path / 'noisy' / 'a.png', [image])
  values = image.astype(np.float32) / 255
  network = restore.restore_model(str(scheme_model_dir)).network
  turned_back = _turned_back_schemes(network, values, 2, 2)
  expected = np.round(np.clip(np.mean(turned_back, axis=0), 0, 1) * 255)
  result = _denoise(f'--model={scheme_model_dir}', f'--input={tmp_path / "noisy"}',
                    f'--output_dir={tmp_path / "out"}', '--precision=float32', '--tta')
  assert result.returncode == 0, result.stderr[-3000:]
  (from_run,) = native_images.read_pages(str(tmp_path / 'out' / 'a.png'))
  assert np.abs(from_run.astype(int) - expected).max() <= 1
  # One orientation alone is another image: the check can fail.
  assert np.abs(np.round(np.clip(turned_back[0], 0, 1) * 255) - expected).max() > 1


def test_an_ome_zarr_output_records_the_model_by_its_weights_not_its_path(tmp_path):
  """Two runs' checkpoints of one name differ; one checkpoint reached by two paths
  (another mount, a relative path) does not; an export is named by its own weights."""
  identity = lambda model, source: denoise_app.model_identity(
      config_lib.DenoiseConfig(model=str(model), input='-', output_dir='-'),
      types.SimpleNamespace(source=str(source)))
  for run, weights in (('run_a', b'weights of a'), ('run_b', b'weights of b')):
    (tmp_path / run / 'best').mkdir(parents=True)
    (tmp_path / run / 'best' / 'ckpt-300.index').write_bytes(weights)
  first = identity(tmp_path / 'run_a', tmp_path / 'run_a' / 'best' / 'ckpt-300')
  assert first.startswith('ckpt-300 ')
  assert identity(tmp_path / 'run_b', tmp_path / 'run_b' / 'best' / 'ckpt-300') != first
  os.symlink(tmp_path / 'run_a', tmp_path / 'elsewhere')
  assert identity(tmp_path / 'elsewhere', tmp_path / 'elsewhere' / 'best' / 'ckpt-300') == first
  (tmp_path / 'export' / 'variables').mkdir(parents=True)
  (tmp_path / 'export' / 'saved_model.pb').write_bytes(b'graph')
  (tmp_path / 'export' / 'variables' / 'variables.index').write_bytes(b'weights of a')
  exported = identity(tmp_path / 'export', 'the export ' + str(tmp_path / 'export'))
  assert exported.startswith('export ') and exported.split()[1] == first.split()[1]
