"""The run's best checkpoint by the validation metric, and warnings when a
validation score falls.

A late collapse (a loss spike while the learning rate ramps down) must never
cost a user the model they had: after every evaluation the chief compares the
headline score with the best so far and, when it is better, writes the weights
to model_dir/best/ (a checkpoint plus config.json, so validate.py, denoise.py
and export.py take `--model=MODEL_DIR/best` like any model_dir) and records
step and score in model_dir/best/best.json.
"""

import json
import os

from absl import logging
import tensorflow as tf

from n2n import run_dir
from n2n.evaluation import scoring
from n2n.evaluation import summaries

BEST_SUBDIR = run_dir.BEST_SUBDIR
BEST_JSON = 'best.json'


def headline_score(results):
  """(score, metric name) of an evaluation; higher is better.

  The mean over levels of the mean PSNR; for scenes without any reference,
  minus the noisy-target error (it ranks checkpoints like the true error);
  for held-out noisy images on their own (single-image methods), minus their
  held-out loss.

  Args:
    results: list of scoring.LevelScores.
  """
  values = scoring.headline_values(results)
  if 'psnr' in values:
    return values['psnr'], 'psnr_db'
  if 'noisy_target_mse' in values:
    return -values['noisy_target_mse'], 'minus_noisy_target_mse'
  return -values['held_out_loss'], 'minus_held_out_loss'


def read_best(model_dir):
  """model_dir/best/best.json as a dict ({'step', 'score', 'metric', ...}), or None."""
  path = os.path.join(model_dir, BEST_SUBDIR, BEST_JSON)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as best_file:
    return json.load(best_file)


def falling_score_warnings(results, best, drop_db):
  """Warning lines for an evaluation: a level whose output PSNR is below its
  noisy input's, or a headline PSNR more than drop_db below the best so far.

  Args:
    results: list of scoring.LevelScores.
    best: read_best()'s dict or None.
    drop_db: margin in dB; 0 turns the drop warning off.

  Returns:
    list of str (empty when all is well).
  """
  warnings = []
  for scores in results:
    if scores.mean_psnr is not None and scores.mean_psnr < scores.mean_input_psnr:
      warnings.append(f'validation PSNR at {scores.tag} is {scores.mean_psnr:.2f} dB, below the '
                      f'noisy input ({scores.mean_input_psnr:.2f} dB)')
  score, metric = headline_score(results)
  if (drop_db and best is not None and metric == 'psnr_db' == best['metric']
      and best['score'] - score > drop_db):
    warnings.append(f'validation PSNR {score:.2f} dB is {best["score"] - score:.2f} dB below the '
                    f'best ({best["score"]:.2f} dB at step {best["step"]}, kept in '
                    f'{BEST_SUBDIR}/)')
  return warnings


class BestCheckpoint:
  """fn(step, results) -> results: keeps model_dir/best/ and warns on falls."""

  def __init__(self, model_dir, model, step, train_config, drop_warning_db, writer):
    """
    Args:
      model_dir: the run's folder; best/ is written inside it.
      model: the keras.Model being trained (its current weights are saved).
      step: the trainer's global step variable (saved beside the weights, as
        in the run's own checkpoints).
      train_config: the run's resolved TrainConfig (copied as best/config.json).
      drop_warning_db: warn when the headline PSNR falls more than this below
        the best (0: never).
      writer: tf.summary writer for the warnings (TensorBoard's Text tab).
    """
    self._dir = os.path.join(model_dir, BEST_SUBDIR)
    self._manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, step=step), self._dir, max_to_keep=1,
        checkpoint_name=run_dir.CHECKPOINT_PREFIX)
    self._config = train_config
    self._drop_warning_db = drop_warning_db
    self._writer = writer
    # On a resumed run the best so far is the one on disk.
    self.best = read_best(model_dir)

  def __call__(self, step, results):
    summaries.write_warnings(self._writer, step, 'validation',
                             falling_score_warnings(results, self.best, self._drop_warning_db))
    score, metric = headline_score(results)
    if self.best is None or metric != self.best['metric'] or score > self.best['score']:
      self._save(step, score, metric)
    return results

  def _save(self, step, score, metric):
    # Weights and config first, best.json last: best.json never names a
    # checkpoint that is not complete.
    self._manager.save(checkpoint_number=step)
    run_dir.write_config(self._dir, self._config)
    self.best = {'step': int(step), 'score': float(score), 'metric': metric}
    temporary = os.path.join(self._dir, BEST_JSON + '.tmp')
    with tf.io.gfile.GFile(temporary, 'w') as best_file:
      json.dump(self.best, best_file, indent=2)
    tf.io.gfile.rename(temporary, os.path.join(self._dir, BEST_JSON), overwrite=True)
    logging.info('Best validation score so far (%s %.4f) at step %d: kept in %s.', metric,
                 score, step, self._dir)
