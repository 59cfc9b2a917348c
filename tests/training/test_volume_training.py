"""Training the 3D network on stacks (--spatial_dims=3): datasets of TIFF stacks,
their crops, the checks before the first step, a short run that learns, and
denoise.py giving stacks back as they came."""

import json
import os
import shutil
import subprocess
import sys

import imageio
import numpy as np
import pytest
import tensorflow as tf
import tifffile

from bench.recipes import volumes as volume_helpers
from n2n import config as config_lib
from n2n.data import scene_writer
from n2n.data import volume_pipeline
from n2n.data import volumes
from n2n.inference import loading
from n2n.training import preflight
from tests.conftest import REPO_ROOT

_write_stack = volume_helpers.write_stack
_config = volume_helpers.train_config
WHITE_LEVEL = volume_helpers.WHITE_LEVEL


@pytest.fixture(scope='module')
def stack_data(tmp_path_factory):
  """(records folder, raw scene folder): three phantom volumes, two acquisitions each."""
  return volume_helpers.write_phantom_dataset(tmp_path_factory.mktemp('stacks'))


def test_a_dataset_of_stacks_says_so_in_its_manifest(stack_data):
  records, _ = stack_data
  manifest = json.loads((records / 'manifest.json').read_text())
  assert manifest['spatial_dims'] == 3 and manifest['depth']['max'] == 16
  assert (manifest['height']['max'], manifest['width']['max']) == (64, 64)
  assert manifest['num_captures'] == 6 and manifest['num_references'] == 3


def _resolved(config):
  checked = preflight.check_training_inputs(config, tf.distribute.get_strategy())
  return checked.config


def test_crops_of_input_and_target_come_from_one_window_of_two_acquisitions(stack_data):
  records, raw = stack_data
  config = _resolved(_config(records, target='clean', augment_flips=False,
                             augment_rotations=False, crops_per_image=2))
  assert config_lib.model_spatial_dims(config) == 3
  batch = next(iter(volume_pipeline.build_volume_dataset(config, 2, cache=False)))
  assert batch['input'].shape == (2, 8, 32, 32, 1) and batch['target'].shape == (2, 8, 32, 32, 1)
  stacks = {}
  for scene in sorted(os.listdir(raw)):
    stacks[scene] = [volumes.read_volume(str(raw / scene / name)).pixels[0] / WHITE_LEVEL
                     for name in ('acquisition_0.tif', 'acquisition_1.tif', 'reference.tif')]
  for crop_input, crop_target in zip(batch['input'].numpy(), batch['target'].numpy()):
    found = []
    for scene, (first, second, reference) in stacks.items():
      for z in range(16 - 8 + 1):
        for y in range(64 - 32 + 1):
          for x in range(64 - 32 + 1):
            window = (slice(z, z + 8), slice(y, y + 32), slice(x, x + 32))
            if np.allclose(reference[window], crop_target, atol=1e-6):
              inputs = [np.allclose(acquisition[window], crop_input, atol=1e-6)
                        for acquisition in (first, second)]
              found.append((scene, z, y, x, inputs))
    # The target is the reference at exactly one window, and the input is an
    # acquisition of the same scene at that same window.
    assert len(found) == 1 and any(found[0][4]), found


def _labelled_volume(depth=4, size=6):
  return np.arange(depth * size * size, dtype=np.float32).reshape(depth, size, size, 1)


def test_augmentation_turns_and_flips_xy_and_flips_z_but_never_swaps_z():
  volume = _labelled_volume()
  allowed = []
  for turns in range(4):
    for flip_x in (False, True):
      for flip_z in (False, True):
        moved = np.rot90(volume, turns, axes=(1, 2))
        moved = moved[:, :, ::-1] if flip_x else moved
        allowed.append(moved[::-1] if flip_z else moved)
  seen = set()
  for seed in range(200):
    output = volume_pipeline.augment_volume(tf.constant(volume), tf.constant([seed, 7])).numpy()
    matches = [index for index, candidate in enumerate(allowed)
               if np.array_equal(candidate, output)]
    assert len(matches) == 1, seed
    seen.add(matches[0])
  assert len(seen) == 16  # every orientation is drawn


@pytest.mark.parametrize('overrides, message', [
    (dict(spatial_dims=2), r'--spatial_dims=2: --train_data holds TIFF stacks.*'
                           r'make_tfrecords\.py --planes'),
    (dict(method='blind_spot', blind_spot_stride=2, crop_size=64),
     r'--blind_spot_stride=2: pixel-shuffle strides are 2D only'),
    (dict(method='neighbor2neighbor', crop_size=32), r'--crop_size=32: --method=neighbor2neighbor needs a multiple of 64'),
    (dict(crop_depth=12), r'--crop_depth=12 must be a multiple of 8'),
    (dict(method='neighbor2neighbor', crop_size=64, neighbor2neighbor_cells='xyz', crop_depth=8),
     r'--crop_depth=8 must be a multiple of 16 \(2\*\*--z_pools, --z_pools=3 times 2: '
     r'--neighbor2neighbor_cells=xyz halves the depth\)'),
    (dict(crop_depth=24), r'--crop_depth=24 is deeper than every stack'),
    (dict(downsampling='max_blur_pool'), r'--downsampling=max_blur_pool does not work with '
                                         r'--spatial_dims=3 yet'),
    (dict(method='blind_spot', blind_spot_refinement_passes=2),
     r'--blind_spot_refinement_passes=2: the refinement is 2D only'),
    (dict(method='neighbor2neighbor', crop_size=64, neighbor2neighbor_inference_orientations=8),
     r'--neighbor2neighbor_inference_orientations=8: the inference scheme is 2D only'),
])
def test_what_3d_training_cannot_do_is_refused_in_one_line(stack_data, overrides, message):
  records, _ = stack_data
  with pytest.raises(ValueError, match=message):
    preflight.check_training_inputs(_config(records, **overrides), tf.distribute.get_strategy())


def test_images_and_stacks_are_not_mixed_and_stacks_with_time_and_z_are_refused(tmp_path):
  mixed = tmp_path / 'mixed'
  for scene, shape in (('a_images', (32, 32)), ('b_stacks', (4, 32, 32))):
    (mixed / scene).mkdir(parents=True)
    for number in range(2):
      _write_stack(mixed / scene / f'{number}.tif', np.zeros(shape, np.uint16),
                   'YX' if len(shape) == 2 else 'ZYX')
  with pytest.raises(ValueError, match=r'b_stacks/0\.tif is a stack but .*a_images/0\.tif is an '
                     'image'):
    scene_writer.write_scene_dataset(str(mixed), str(tmp_path / 'out'))
  both = tmp_path / 'both'
  both.mkdir()
  for number in range(2):
    _write_stack(both / f'{number}.tif', np.zeros((2, 3, 32, 32), np.uint16), 'TZYX')
  with pytest.raises(ValueError, match=r'0\.tif has 2 time points of 3 planes \(TZYX\)'):
    scene_writer.write_scene_dataset(str(both), str(tmp_path / 'out2'))


def test_plain_multipage_stacks_need_their_axes_once(tmp_path):
  folder = tmp_path / 'plain'
  folder.mkdir()
  for number in range(2):
    with tifffile.TiffWriter(str(folder / f'{number}.tif')) as writer:
      for plane in range(8):
        writer.write(np.full((32, 32), plane, np.uint16), metadata=None)
  with pytest.raises(ValueError, match=r'0\.tif: the file does not say what its axes are.*--axes'):
    scene_writer.write_scene_dataset(str(folder), str(tmp_path / 'out'))
  manifest = scene_writer.write_scene_dataset(str(folder), str(tmp_path / 'out'), axes='ZYX')
  assert manifest['spatial_dims'] == 3 and manifest['depth']['max'] == 8


def test_a_3d_run_refuses_validation_images_and_single_noisy_stacks_in_one_line(stack_data,
                                                                               tmp_path):
  records, _ = stack_data
  flat = tmp_path / 'flat' / 'scene'
  flat.mkdir(parents=True)
  for name in ('a.tif', 'b.tif'):
    tifffile.imwrite(flat / name, np.full((32, 32), 300, np.uint16))
  with pytest.raises(ValueError, match=r'--val_data: .*a\.tif is a 2D image but the run is 3D'):
    preflight.check_training_inputs(_config(records, val_data=str(tmp_path / 'flat'),
                                            eval_every=10), tf.distribute.get_strategy())
  # A blind-spot run's folder of single noisy stacks, flat (as --noisy_images
  # takes them) or one per folder: not scored (held-out losses are 2D), and the
  # flat one is not read as one scene of different specimens either.
  for layout in ('flat/volume_0.tif', 'flat/volume_1.tif', 'nested/a/stack.tif'):
    (tmp_path / layout).parent.mkdir(parents=True, exist_ok=True)
    _write_stack(tmp_path / layout, np.full((8, 32, 32), 300, np.uint16), 'ZYX')
  for folder in ('flat', 'nested'):
    with pytest.raises(ValueError, match=r'--val_data: .* holds no reference\.\*, so its stacks '
                                         r'are taken as single noisy stacks'):
      preflight.check_training_inputs(
          _config(records, val_data=str(tmp_path / folder), eval_every=10, method='blind_spot'),
          tf.distribute.get_strategy())
  # train.py has no --axes: validation stacks that do not say theirs are named.
  plain = tmp_path / 'plain' / 'scene'
  plain.mkdir(parents=True)
  for name in ('a.tif', 'b.tif'):
    tifffile.imwrite(plain / name, np.full((8, 32, 32), 300, np.uint16))
  with pytest.raises(ValueError, match=r'--val_data: .*a\.tif does not say its axes; validation '
                                       'stacks must'):
    preflight.check_training_inputs(_config(records, val_data=str(tmp_path / 'plain'),
                                            eval_every=10), tf.distribute.get_strategy())


@pytest.fixture(scope='module')
def volume_run(stack_data, tmp_path_factory):
  """60 steps of 3D pairs, evaluated at steps 30 and 60 on the raw scenes (--val_data)."""
  records, raw = stack_data
  return volume_helpers.train_run(records, tmp_path_factory.mktemp('volume_run'), 60,
                                  val_data=str(raw), eval_every=30)


@pytest.mark.slow
def test_60_steps_of_3d_pairs_denoise_a_phantom_volume(volume_run, stack_data):
  _, raw = stack_data
  saved = json.loads((volume_run / 'config.json').read_text())
  assert (saved['model']['spatial_dims'], saved['model']['z_pools']) == (3, 3)
  scored = []
  for scene in sorted(os.listdir(raw)):
    noisy = volumes.read_volume(str(raw / scene / 'acquisition_0.tif')).pixels[0, ..., 0]
    scored.append((noisy, volumes.read_volume(str(raw / scene / 'reference.tif')).pixels[0, ..., 0]))
  gains = volume_helpers.denoise_py_gains(volume_run, scored)
  # bench/volume_learning_spread.py (docs/bench/volume_learning_spread.json, AMD
  # AVX512-BF16 host, float32), seeds 1-4: the least gain of the three volumes 3.20-5.08 dB
  # denoised as denoise.py does (docs/bench/volume_tile_depth.json: 1.27-3.50 in one
  # whole-volume tile, at 3 seeds). At the tests' width 24 (NETWORK_WIDTH in
  # bench/recipes/volumes.py; docs/bench/volume_learning_spread_width24.json, AMD AVX2 host),
  # seeds 1-3: 2.86-6.21 dB.
  assert min(gains) > 1.5, gains


@pytest.mark.slow
def test_denoise_py_gives_stacks_back_with_their_axes_dtype_and_sizes(volume_run, tmp_path):
  inputs = tmp_path / 'in'
  inputs.mkdir()
  rng = np.random.default_rng(0)
  cases = {'zstack.tif': ('ZYX', (16, 40, 70), 'imagej'),
           'movie.tif': ('TYX', (12, 48, 40), 'imagej'),
           'timelapse.ome.tif': ('TZYX', (2, 8, 40, 40), 'ome')}
  for name, (axes, shape, volume_format) in cases.items():
    _write_stack(inputs / name, rng.integers(100, 500, shape).astype(np.uint16), axes,
                 volume_format)
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, 'denoise.py'), f'--model={volume_run}',
       f'--input={inputs}', f'--output_dir={tmp_path / "out"}', '--precision=float32',
       '--volume_tile=8,32,32', '--volume_overlap=2,8,8'],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  # The same network in this process, on the volumes the files hold: a z-stack
  # is one volume per time point, a movie without z one volume of its frames.
  network = loading.from_checkpoint(str(volume_run), 'float32')
  denoise = loading.volume_function(network, (8, 32, 32), (2, 8, 8), 1)
  expected = {
      'zstack.tif': lambda pixels: [pixels[0]],
      'movie.tif': lambda pixels: [pixels[:, 0]],
      'timelapse.ome.tif': lambda pixels: [pixels[0], pixels[1]],
  }
  for name, volumes_of in expected.items():
    pixels = volumes.read_volume(str(inputs / name)).pixels
    denoised = volumes.read_volume(str(tmp_path / 'out' / name)).pixels
    outputs = [np.clip(np.round(denoise(volume.astype(np.float32) / WHITE_LEVEL) * WHITE_LEVEL),
                       0, WHITE_LEVEL) for volume in volumes_of(pixels)]
    assert np.abs(np.stack(volumes_of(denoised)).astype(np.float64) - np.stack(outputs)).max() <= 1
  for name, (axes, shape, volume_format) in cases.items():
    before = volumes.read_volume(str(inputs / name))
    after = volumes.read_volume(str(tmp_path / 'out' / name))
    assert (after.axes, after.format, after.pixels.dtype) == (axes, volume_format, np.uint16)
    assert after.pixels.shape == before.pixels.shape
    np.testing.assert_allclose(after.spacing, (0.4, 0.1, 0.1), rtol=1e-6)
    assert not np.array_equal(after.pixels, before.pixels)


def _voxel_psnr(estimate, reference):
  """dB over every voxel, both on the [0, 1] scale, float64."""
  error = np.mean((np.asarray(estimate, np.float64) - np.asarray(reference, np.float64)) ** 2)
  return 10.0 * np.log10(1.0 / error)


@pytest.mark.slow
def test_validate_py_scores_a_3d_run_over_every_voxel_as_denoise_py_denoises(volume_run,
                                                                             stack_data, tmp_path):
  # pylint: disable=g-import-not-at-top
  from n2n.evaluation import validation
  _, raw = stack_data
  text, [scores] = validation.validate_once(config_lib.ValidateConfig(
      checkpoint=str(volume_run), data=str(raw), precision='float32',
      output_dir=str(tmp_path / 'scored')))
  assert 'captures' in text
  # The reference: each scene's first acquisition through denoise.py's own
  # network function (its tiling is tested against whole volumes elsewhere) in
  # its default tiles, written out here (8 planes deep as the training crops,
  # overlapping by 4: 3 tiles over the 16 planes; the 64 x 64 planes fit one
  # tile across), then clipped and rounded to the data's 1/600 steps in NumPy,
  # against the reference stack.
  network = loading.from_checkpoint(str(volume_run), 'float32')
  denoise = loading.volume_function(network, (8, 128, 128), (4, 32, 32), 1)
  assert [image.name for image in scores.images] == sorted(os.listdir(raw))
  for image in scores.images:
    noisy = volumes.read_volume(str(raw / image.name / 'acquisition_0.tif')).pixels[0]
    clean = volumes.read_volume(str(raw / image.name / 'reference.tif')).pixels[0] / WHITE_LEVEL
    output = denoise(noisy.astype(np.float32) / WHITE_LEVEL)
    quantized = np.round(np.clip(output, 0.0, 1.0) * WHITE_LEVEL) / WHITE_LEVEL
    assert abs(image.psnr - _voxel_psnr(quantized, clean)) < 0.01, image.name
    assert abs(image.input_psnr - _voxel_psnr(noisy / WHITE_LEVEL, clean)) < 0.01, image.name
    # --output_dir: the middle xy plane of each denoised stack as an 8-bit PNG.
    written = imageio.v3.imread(tmp_path / 'scored' / 'captures' / f'{image.name}.png')
    middle = np.round(np.clip(output[noisy.shape[0] // 2, ..., 0], 0, 1) * 255)
    assert np.abs(written.astype(np.float64) - middle).max() <= 1
  assert scores.mean_psnr > scores.mean_input_psnr + 1.5


def _eval_events(model_dir):
  """{tag: (step, value proto)} of the run's eval folder, the last of each tag."""
  found = {}
  for path in sorted((model_dir / 'eval').glob('events.out.tfevents.*')):
    for record in tf.data.TFRecordDataset(str(path)):
      event = tf.compat.v1.Event.FromString(record.numpy())
      for value in event.summary.value:
        found[value.tag] = (event.step, value)
  return found


@pytest.mark.slow
def test_3d_training_evaluates_its_val_data_shows_middle_planes_and_keeps_the_best(
    volume_run, stack_data, tmp_path):
  # pylint: disable=g-import-not-at-top
  from n2n.evaluation import validation
  _, raw = stack_data
  found = _eval_events(volume_run)
  step, value = found['psnr/captures']
  assert step == 60
  _, [scores] = validation.validate_once(config_lib.ValidateConfig(
      checkpoint=str(volume_run), data=str(raw), precision='float32'))
  # validate.py reports what the evaluation during training reported.
  assert abs(float(tf.make_ndarray(value.tensor)) - scores.mean_psnr) < 1e-3
  # Three strips (eval_image_summaries' default): noisy | denoised | reference |
  # colour error of the 64 x 64 middle plane of each 16-plane stack.
  strips = sorted(tag for tag in found if tag.startswith('captures/'))
  assert strips == [f'captures/{scene}' for scene in sorted(os.listdir(raw))]
  _, strip = found[strips[0]]
  picture = tf.io.decode_png(strip.tensor.string_val[2]).numpy()
  assert picture.shape[:2] == (64, 4 * 64)
  noisy = volumes.read_volume(str(raw / 'scene_0' / 'acquisition_0.tif')).pixels[0]
  expected = np.round(np.clip(noisy[8, ..., 0] / WHITE_LEVEL, 0, 1) * 255)
  assert np.abs(picture[:, :64, 0].astype(np.float64) - expected).max() <= 1
  # The best of the two evaluations (30 and 60) is kept, whichever it is.
  # pylint: disable-next=g-import-not-at-top
  from n2n.evaluation import summaries
  logged = summaries.read_scalars(str(volume_run / 'eval'))['psnr/captures']
  assert [step for step, _ in logged] == [30, 60]
  best_step, best_psnr = max(logged, key=lambda entry: entry[1])
  best = json.loads((volume_run / 'best' / 'best.json').read_text())
  assert best['step'] == best_step and abs(best['score'] - best_psnr) < 1e-3
  _, [best_scores] = validation.validate_once(config_lib.ValidateConfig(
      checkpoint=str(volume_run / 'best'), data=str(raw), precision='float32'))
  assert abs(best_scores.mean_psnr - best_psnr) < 1e-3
  # validate.py --follow rebuilds the 3D network and logs the same curve.
  followed = tmp_path / 'followed'
  shutil.copytree(volume_run, followed)
  shutil.rmtree(followed / 'eval')
  assert validation.follow(config_lib.ValidateConfig(checkpoint=str(followed), follow=True,
                                                     follow_timeout=5)) == [60]
  step, value = _eval_events(followed)['psnr/captures']
  assert step == 60 and abs(float(tf.make_ndarray(value.tensor)) - scores.mean_psnr) < 1e-3
