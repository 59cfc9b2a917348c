"""diagnose.py as a user runs it: scenes and single images of simulated noise
get their kind of noise and method, the picture and JSON are written once, and
errors are one line."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from bench.recipes.images import write_clean_photo_splits
from n2n import config as config_lib
from n2n.apps import diagnose
from n2n.data import simulated_scenes
from tests.conftest import REPO_ROOT


@pytest.fixture(scope='module')
def simulated(tmp_path_factory):
  """Scenes of 2 captures of the demo's two validation photographs through the
  camera and sensor pipelines (real photographs: a single-image estimate needs
  flat areas, which tests' blocky synthetic images lack)."""
  root = tmp_path_factory.mktemp('diagnose')
  photos = os.path.join(REPO_ROOT, 'datasets', 'demo', 'val')
  for pipeline in ('camera', 'sensor'):
    simulated_scenes.write_scenes(photos, str(root / pipeline), captures=2, pipeline=pipeline,
                                  gain=0.002, read_variance=0.0001)
  write_clean_photo_splits(root, [('photos', 3)], 96, 128)
  return root


def _config(**values):
  return config_lib.DiagnoseConfig(**values)


def test_camera_scenes_read_as_correlated_and_train_as_pairs(simulated):
  diagnosis = diagnose.diagnose(_config(input=str(simulated / 'camera'), scenes=True))
  profile, advice, text = diagnosis.profile, diagnosis.recommendation, str(diagnosis)
  assert profile.source == 'pairs' and profile.correlation_x[0] > 0.3
  assert 'measured from two captures of each of 2 image(s)' in text
  assert 'Recommended: python train.py --noise=none --method=pairs' in text
  assert advice.kind == 'correlated'


def test_single_images_of_independent_noise_train_with_a_single_image_method(simulated):
  captures = ','.join(str(simulated / 'sensor' / name / 'capture_00.png')
                      for name in ('chelsea', 'coffee'))
  diagnosis = diagnose.diagnose(_config(input=captures))
  profile, advice, text = diagnosis.profile, diagnosis.recommendation, str(diagnosis)
  assert profile.source == 'single' and advice.kind == 'independent'
  assert 'Recommended: python train.py --noise=none --method=neighbor2neighbor' in text


def test_the_picture_and_json_are_written_once_unless_overwrite(simulated, tmp_path):
  config = _config(input=str(simulated / 'camera'), scenes=True, output_dir=str(tmp_path))
  diagnosis = diagnose.diagnose(config)
  profile = diagnosis.profile
  svg_path, json_path = diagnose.write_outputs(config, diagnosis)
  root = ElementTree.parse(svg_path).getroot()
  cells = [node for node in root.iter() if node.tag.endswith('rect')]
  assert len(cells) == 2 + 81  # background, the plot's frame, the 9x9 correlation map
  saved = json.loads(open(json_path).read())
  assert saved['kind'] == 'correlated' and saved['recommended_flags'][-1] == '--method=pairs'
  np.testing.assert_allclose(saved['noise']['correlation_x'], profile.correlation_x, atol=1e-4)
  with pytest.raises(ValueError, match='noise_diagnosis.svg exists; pass --overwrite'):
    diagnose.write_outputs(config, diagnosis)
  overwriting = _config(input=config.input, scenes=True, output_dir=str(tmp_path), overwrite=True)
  assert diagnose.write_outputs(overwriting, diagnosis) == [svg_path, json_path]


def test_a_folder_of_different_photographs_is_no_scene(simulated):
  with pytest.raises(ValueError, match=r'photo0.png and .*photo1.png look like two different '
                     r'views \(correlation'):
    diagnose.diagnose(_config(input=str(simulated / 'clean_photos'), scenes=True))


@pytest.mark.slow
def test_a_missing_input_is_one_line_naming_it():
  result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'diagnose.py'),
                           '--input=/nonexistent/*.png'], capture_output=True, text=True,
                          timeout=120, cwd=REPO_ROOT)
  assert result.returncode == 1
  assert result.stderr.strip().splitlines() == [
      "diagnose.py: error: --input: nothing matches '/nonexistent/*.png'"]


@pytest.mark.slow
def test_diagnose_py_writes_its_picture_and_json_and_leaves_the_temp_folder_as_found(
    simulated, tmp_path):
  # Its own temp folder, empty, to see that the program leaves it as it found it.
  temp = tmp_path / 'temp'
  temp.mkdir()
  result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'diagnose.py'),
                           f'--input={simulated / "camera"}', '--scenes',
                           f'--output_dir={tmp_path / "out"}'], capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT, env={**os.environ, 'TMPDIR': str(temp)})
  assert result.returncode == 0, result.stderr[-2000:]
  assert sorted(path.name for path in (tmp_path / 'out').iterdir()) == [
      'noise_diagnosis.json', 'noise_diagnosis.svg']
  assert not list(temp.iterdir())
