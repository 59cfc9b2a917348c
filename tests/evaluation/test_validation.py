"""validate.py's library: the run's defaults, and the --follow sidecar."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from n2n import config as config_lib
from n2n import run_dir
from n2n.evaluation import validation
from n2n.training import distribute
from n2n.training import train_lib
from n2n.training import trainer as trainer_lib
from tests.conftest import REPO_ROOT

RUN = config_lib.train_config(train_data='x', model_dir='m', val_data='val', noise='poisson',
                             eval_noise_levels=(30.0, 10.0), seed=7, precision='float32',
                             max_eval_images=3)


def test_unset_values_come_from_the_run():
  plan = validation.resolve_plan(config_lib.ValidateConfig(checkpoint='m'), RUN)
  assert plan == validation.Plan('poisson', (30.0, 10.0), 7, 'float32', 'val', 0)
  follow = validation.resolve_plan(config_lib.ValidateConfig(checkpoint='m', follow=True), RUN)
  assert follow.max_images == 3


def test_given_values_win_and_another_noise_gets_its_own_default_levels():
  plan = validation.resolve_plan(config_lib.ValidateConfig(
      checkpoint='m', noise='gaussian', seed=0, data='other', precision='float32'), RUN)
  assert (plan.noise, plan.levels, plan.seed, plan.data) == ('gaussian', (25.0,), 0, 'other')


def test_no_data_anywhere_is_an_error():
  run = config_lib.train_config(train_data='x', model_dir='m')
  with pytest.raises(ValueError, match='--data is required: the run was trained without'):
    validation.resolve_plan(config_lib.ValidateConfig(checkpoint='m'), run)


def _scalars(directory):
  found = {}
  for path in tf.io.gfile.glob(os.path.join(directory, 'events.out.tfevents.*')):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.metadata.plugin_data.plugin_name == 'scalars':
          found[(event.step, value.tag)] = float(tf.make_ndarray(value.tensor))
  return found


@pytest.mark.slow
def test_follow_scores_new_checkpoints_as_they_appear_and_stops_at_the_last(
    tfrecord_dir, image_folder, tmp_path):
  model_dir = tmp_path / 'run'
  sidecar = subprocess.Popen(
      [sys.executable, os.path.join(REPO_ROOT, 'validate.py'), f'--checkpoint={model_dir}',
       '--follow', '--follow_timeout=240'],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  # The sidecar may start before the model_dir exists, as beside a real job.
  model_dir.mkdir()
  config = config_lib.train_config(
      train_data=str(tfrecord_dir / '*.tfrecord'), val_data=str(image_folder),
      model_dir=str(model_dir), crop_size=32, batch_size=2, train_steps=6, steps_per_loop=2,
      checkpoint_every=2, keep_checkpoints=5, eval_every=0, log_every=2, precision='float32',
      max_eval_images=2, seed=4, network_width=8)  # the sidecar's job does not depend on it
  run = train_lib.train_and_evaluate(config, distribute.create_strategy('default'))
  assert run.results is None
  stdout, stderr = sidecar.communicate(timeout=300)
  assert sidecar.returncode == 0, stderr[-2000:]
  assert stdout.strip().endswith('6; the run is finished')
  scalars = _scalars(str(model_dir / 'eval'))
  steps = sorted({step for step, _ in scalars})
  assert steps[-1] == 6 and set(steps) <= {2, 4, 6}
  assert {tag for _, tag in scalars} == {'psnr/gaussian_25', 'input_psnr/gaussian_25',
                                       'colour_error/gaussian_25'}
  # The number the sidecar logged is the one validate.py gives that checkpoint.
  text, results = validation.validate_once(config_lib.ValidateConfig(
      checkpoint=str(model_dir), max_images=2))
  assert 'step 6' in text.splitlines()[0]
  assert results[0].mean_psnr == pytest.approx(scalars[(6, 'psnr/gaussian_25')], abs=1e-4)


def test_follow_gives_up_after_its_timeout(tmp_path):
  with pytest.raises(ValueError, match=r'--follow: no new checkpoint in .* for 1 s \(scored '
                                       r'steps: none\)'):
    validation.follow(config_lib.ValidateConfig(checkpoint=str(tmp_path), follow=True,
                                                follow_timeout=1), poll_seconds=0.2)


def test_follow_goes_on_when_a_checkpoint_is_deleted_before_it_is_loaded(image_folder, tmp_path,
                                                                        monkeypatch):
  model_dir = tmp_path / 'run'
  config = config_lib.train_config(train_data='unused', val_data=str(image_folder),
                                  model_dir=str(model_dir), train_steps=2, precision='float32',
                                  max_eval_images=1, seed=4)
  trainer = trainer_lib.Trainer(config, tf.distribute.get_strategy(), 'float32',
                                checkpoint_dir=str(model_dir))
  run_dir.write_config(str(model_dir), config)
  trainer.step.assign(1)
  deleted = trainer.save(1)
  trainer.step.assign(2)
  last = trainer.save(2)
  for path in tf.io.gfile.glob(deleted + '.*'):
    tf.io.gfile.remove(path)  # as --keep_checkpoints does while the sidecar loads its data
  monkeypatch.setattr(validation.tf.train, 'checkpoints_iterator',
                      lambda *args, **kwargs: iter([deleted, last]))
  scored = validation.follow(config_lib.ValidateConfig(checkpoint=str(model_dir), follow=True))
  assert scored == [2]  # the deleted one passed over, no NotFound
