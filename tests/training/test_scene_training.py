"""Training on scenes of real noisy captures (--noise=none): the trainer sees only
noisy 16-bit files with a noise none of the built-in corruptions makes, and
still learns to denoise; validation scores against references and, without
any, by the noisy-target error."""

import json

import pytest

from bench.recipes import scenes
from n2n import config as config_lib
from n2n.data import scene_writer
from n2n.evaluation import validation
from n2n.training import distribute
from n2n.training import preflight


@pytest.fixture(scope='module')
def scene_data(tmp_path_factory):
  return scenes.write_scene_data(tmp_path_factory.mktemp('scene_data'))


# The scene run's bound; over seeds 1-6 (python -m bench.learning_test_spread --tests=scenes;
# docs/bench/learning_test_spread_scenes.json): gains of 2.1-4.0 dB.
MIN_SCENE_GAIN_DB = 1.0


@pytest.fixture(scope='module')
def scene_run(scene_data, tmp_path_factory):
  model_dir = tmp_path_factory.mktemp('scene_run')
  return model_dir, scenes.train_scene_run(*scene_data, model_dir)


def test_training_on_noisy_captures_alone_beats_the_noisy_input(scene_run):
  model_dir, run = scene_run
  scores, = run.results
  assert scores.tag == 'captures' and len(scores.images) == 2
  assert scores.mean_psnr > scores.mean_input_psnr + MIN_SCENE_GAIN_DB, (
      scores.mean_psnr, scores.mean_input_psnr)
  assert 0 < scores.mean_noisy_target_mse < 0.05
  saved = json.loads((model_dir / 'config.json').read_text())
  assert saved['model']['channels'] == 1 and saved['data']['channels'] == 1
  assert (saved['data']['dtype'], saved['data']['white_level']) == ('uint16', 65535.0)


def test_validate_scores_scenes_like_training_did(scene_run, scene_data):
  model_dir, run = scene_run
  text, results = validation.validate_once(config_lib.ValidateConfig(checkpoint=str(model_dir)))
  assert 'noisy-target MSE' in text and 'captures' in text
  assert results[0].mean_psnr == pytest.approx(run.results[0].mean_psnr, abs=1e-4)
  assert results[0].mean_noisy_target_mse == pytest.approx(run.results[0].mean_noisy_target_mse,
                                                           rel=1e-4)


def test_scenes_without_reference_are_scored_by_the_noisy_target_error(scene_run, scene_data,
                                                                      tmp_path):
  model_dir, _ = scene_run
  _, val = scene_data
  for scene in val.iterdir():
    target = tmp_path / scene.name
    target.mkdir()
    for capture in sorted(scene.glob('capture_*')):
      (target / capture.name).write_bytes(capture.read_bytes())
  text, results = validation.validate_once(config_lib.ValidateConfig(
      checkpoint=str(model_dir), data=str(tmp_path), output_dir=str(tmp_path / 'out')))
  assert results[0].mean_psnr is None and results[0].mean_noisy_target_mse > 0
  metrics = json.loads((tmp_path / 'out' / 'metrics.json').read_text())
  assert metrics['levels']['captures']['mean_noisy_target_mse'] == pytest.approx(
      results[0].mean_noisy_target_mse)
  row = text.splitlines()[-1].split()
  assert row[:3] == ['mean', '-', '-'] and float(row[3]) > 0, text


def test_wrong_noise_or_target_for_the_data_is_one_line(scene_data, tfrecord_dir, image_folder,
                                                        tmp_path):
  records, val = scene_data
  strategy = distribute.create_strategy('default')
  checks = [
      (scenes.run_config(str(tfrecord_dir), str(image_folder), tmp_path / 'a'),
       '--noise=none needs scenes of real noisy captures'),
      (scenes.run_config(records, val, tmp_path / 'b', noise='gaussian'),
       '--noise=gaussian: --train_data holds real noisy captures; train them with --noise=none'),
  ]
  for config, message in checks:
    with pytest.raises(ValueError, match=message):
      preflight.check_training_inputs(config, strategy)
  without_reference = tmp_path / 'no_reference'
  for scene in (val.parent / 'train').iterdir():
    for capture in sorted(scene.glob('capture_*')):
      (without_reference / scene.name).mkdir(parents=True, exist_ok=True)
      (without_reference / scene.name / capture.name).write_bytes(capture.read_bytes())
  scene_writer.write_scene_dataset(str(without_reference), str(tmp_path / 'records'))
  with pytest.raises(ValueError, match=r'--target=clean needs a reference.\* in every scene; 4 '
                     'have none: photo0, photo1'):
    preflight.check_training_inputs(
        scenes.run_config(tmp_path / 'records', val, tmp_path / 'c', target='clean'), strategy)
