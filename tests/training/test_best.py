"""model_dir/best/: the checkpoint with the best validation score, and the
warnings when a validation score falls."""

import json

import numpy as np
import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir
from n2n.evaluation import scoring
from n2n.evaluation import summaries
from n2n.inference import restore
from n2n.training import best
from n2n.training import trainer as trainer_lib


def _results(psnr, input_psnr=20.0, noise='gaussian'):
  image = scoring.ImageScore('a.png', psnr, input_psnr)
  return [scoring.LevelScores(noise, 25.0, (image,))]


def _scenes_without_reference(mse):
  image = scoring.ImageScore('s', None, None, noisy_target_mse=mse)
  return [scoring.LevelScores('none', 0.0, (image,))]


def test_headline_score_is_psnr_or_minus_the_noisy_target_error_or_held_out_loss():
  assert best.headline_score(_results(27.5)) == (27.5, 'psnr_db')
  assert best.headline_score(_scenes_without_reference(0.004)) == (-0.004,
                                                                   'minus_noisy_target_mse')
  held_out = [scoring.LevelScores('none', 0.0, (scoring.ImageScore('n', None, None,
                                                                   held_out_loss=0.02),))]
  assert best.headline_score(held_out) == (-0.02, 'minus_held_out_loss')


def test_warnings_for_a_psnr_below_the_input_or_far_below_the_best():
  record = {'step': 800, 'score': 28.0, 'metric': 'psnr_db'}
  assert best.falling_score_warnings(_results(27.5), record, 1.0) == []
  below_best, = best.falling_score_warnings(_results(26.5), record, 1.0)
  assert below_best.startswith('validation PSNR 26.50 dB is 1.50 dB below the best (28.00 dB at '
                               'step 800')
  assert best.falling_score_warnings(_results(26.5), record, 0.0) == []
  warnings = best.falling_score_warnings(_results(13.3, input_psnr=18.6), record, 1.0)
  assert warnings[0] == ('validation PSNR at gaussian_25 is 13.30 dB, below the noisy input '
                         '(18.60 dB)') and len(warnings) == 2


def _event_texts(directory):
  texts = []
  for path in tf.io.gfile.glob(str(directory / 'events.out.tfevents.*')):
    for event in summaries.read_events(path):
      for value in event.summary.value:
        if value.tag == 'warnings/validation':
          texts.append((event.step, tf.make_ndarray(value.tensor).item().decode()))
  return texts


def test_the_best_checkpoint_is_kept_restorable_and_survives_a_resume(tmp_path):
  config = config_lib.resolve_data(
      config_lib.train_config(train_data='unused', model_dir=str(tmp_path), precision='float32'),
      3, 'uint8', 255)
  trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'float32')
  writer = tf.summary.create_file_writer(str(tmp_path / 'eval'))
  keeper = best.BestCheckpoint(str(tmp_path), trainer.model, trainer.step, config, 1.0, writer)
  kernel = trainer.model.trainable_variables[0]
  weights_at = {}
  for step, psnr in ((100, 25.0), (200, 27.0), (300, 24.0)):
    trainer.step.assign(step)
    kernel.assign(tf.fill(kernel.shape, float(step)))
    weights_at[step] = kernel.numpy()
    keeper(step, _results(psnr))
  record = json.loads((tmp_path / 'best' / 'best.json').read_text())
  assert record == {'step': 200, 'score': 27.0, 'metric': 'psnr_db'}
  restored = restore.restore_model(str(tmp_path / run_dir.BEST_SUBDIR))
  assert restored.step == 200
  np.testing.assert_array_equal(restored.model.trainable_variables[0].numpy(), weights_at[200])
  texts = _event_texts(tmp_path / 'eval')
  assert [step for step, _ in texts] == [300] and '3.00 dB below the best' in texts[0][1]
  # A resumed run starts from the best on disk: a worse score does not replace it.
  resumed = best.BestCheckpoint(str(tmp_path), trainer.model, trainer.step, config, 1.0, writer)
  assert resumed.best['step'] == 200
  resumed(400, _results(26.0))
  assert json.loads((tmp_path / 'best' / 'best.json').read_text())['step'] == 200
  resumed(500, _results(27.5))
  assert json.loads((tmp_path / 'best' / 'best.json').read_text())['step'] == 500
  assert len(tf.io.gfile.glob(str(tmp_path / 'best' / 'ckpt-*.index'))) == 1
