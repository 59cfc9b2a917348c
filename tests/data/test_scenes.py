"""Scene folders: discovery, the rules a scene must keep, and reading at native bit depth."""

import numpy as np
import pytest

from bench.recipes.images import smooth_image
from n2n.data import native_images
from n2n.data import scenes
from n2n.data import simulated_scenes


def _write(path, array):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_bytes(native_images.encode_pages([array], native_images.family_of(str(path))))


def _scene(folder, count=2, dtype=np.uint16, shape=(40, 48), reference=True, seed=0):
  rng = np.random.default_rng(seed)
  top = np.iinfo(dtype).max if np.issubdtype(dtype, np.integer) else 1.0
  for index in range(count):
    _write(folder / f'c{index}.png' if dtype != np.float32 else folder / f'c{index}.tif',
           (rng.uniform(0, top, shape)).astype(dtype))
  if reference:
    _write(folder / ('reference.png' if dtype != np.float32 else 'reference.tif'),
           np.full(shape, top / 2).astype(dtype))


def test_every_folder_holding_images_is_a_scene_and_reference_is_apart(tmp_path):
  _scene(tmp_path / 'a', count=3)
  _scene(tmp_path / 'b' / 'deeper', reference=False)
  (tmp_path / 'b' / 'notes.txt').write_text('not an image')
  found = scenes.find_scenes(str(tmp_path))
  assert [scene.name for scene in found] == ['a', 'b/deeper']
  assert [len(scene.captures) for scene in found] == [3, 2]
  assert found[0].reference.endswith('reference.png') and found[1].reference is None
  arrays = scenes.read_scene(found[0])
  assert arrays.captures.shape == (3, 40, 48, 1) and arrays.captures.dtype == np.uint16
  assert arrays.reference.shape == (40, 48, 1)


def test_native_dtypes_and_channels_are_kept(tmp_path):
  _scene(tmp_path / 'gray8', dtype=np.uint8)
  _scene(tmp_path / 'rgb16', shape=(40, 48, 3))
  _scene(tmp_path / 'float', dtype=np.float32)
  read = {scene.name: scenes.read_scene(scene) for scene in scenes.find_scenes(str(tmp_path))}
  assert (read['gray8'].dtype, read['gray8'].captures.shape[-1]) == ('uint8', 1)
  assert (read['rgb16'].dtype, read['rgb16'].captures.shape[-1]) == ('uint16', 3)
  assert read['float'].dtype == 'float32'
  assert scenes.default_white_level('uint16') == 65535 and scenes.default_white_level(
      'float32') == 1.0
  assert scenes.quantization_step('uint8', 255) == pytest.approx(1 / 255)
  assert scenes.quantization_step('float32', 1.0) == 0.0


@pytest.mark.parametrize('make,message', [
    (lambda root: _scene(root / 's', count=1), r's holds one capture \(.*c0.png\)'),
    (lambda root: _scene(root / 's', count=0), 's holds only a reference'),
    (lambda root: (_scene(root / 's'), _write(root / 's' / 'c2.png', np.zeros((40, 50), np.uint16))),
     r'c2.png is 50x40 with 1 channel\(s\) but .*c0.png is 48x40'),
    (lambda root: (_scene(root / 's'), _write(root / 's' / 'c2.png', np.zeros((40, 48, 3),
                                                                              np.uint16))),
     r'c2.png is 48x40 with 3 channel\(s\)'),
    (lambda root: (_scene(root / 's'), _write(root / 's' / 'c2.png', np.zeros((40, 48), np.uint8))),
     'c2.png is uint8 but .*c0.png is uint16; a scene mixes bit depths'),
])
def test_a_scene_that_breaks_the_rules_is_one_line_naming_the_file(tmp_path, make, message):
  make(tmp_path)
  with pytest.raises(scenes.SceneError, match=message):
    for scene in scenes.find_scenes(str(tmp_path)):
      scenes.read_scene(scene)


def test_values_above_the_white_level_are_an_error_naming_the_file(tmp_path):
  folder = tmp_path / 's'
  _write(folder / 'c0.png', np.full((8, 8), 4000, np.uint16))
  _write(folder / 'c1.png', np.full((8, 8), 5000, np.uint16))
  scene, = scenes.find_scenes(str(tmp_path))
  assert scenes.read_scene(scene, white_level=5000).captures.max() == 5000
  with pytest.raises(scenes.SceneError, match=r'c1.png holds values up to 5000, above '
                     r'--white_level=4095'):
    scenes.read_scene(scene, white_level=4095)


def test_simulated_captures_have_signal_dependent_noise(tmp_path):
  rng = np.random.default_rng(0)
  clean = np.concatenate([np.full((200, 100, 1), 0.2), np.full((200, 100, 1), 0.8)], axis=1)
  noisy = np.stack([simulated_scenes.sensor_noise(clean, 0.01, 0.0004, rng) for _ in range(4)])
  dark, bright = noisy[..., :100, :].var(), noisy[..., 100:, :].var()
  assert dark == pytest.approx(0.01 * 0.2 + 0.0004, rel=0.1)
  assert bright == pytest.approx(0.01 * 0.8 + 0.0004, rel=0.1)
  source = tmp_path / 'clean'
  source.mkdir()
  _write(source / 'photo.png', smooth_image(rng, 48, 64))
  written = simulated_scenes.write_scenes(str(source), str(tmp_path / 'scenes'), captures=3,
                                          grayscale=True)
  scene, = scenes.find_scenes(str(tmp_path / 'scenes'))
  arrays = scenes.read_scene(scene)
  assert len(written) == 1 and arrays.captures.shape == (3, 48, 64, 1)
  assert arrays.dtype == 'uint16' and arrays.reference is not None
  assert not np.array_equal(arrays.captures[0], arrays.captures[1])
