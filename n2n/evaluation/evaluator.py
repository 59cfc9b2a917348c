"""Evaluating a model at a training step: score, write summaries, log one line
(and a warning for each image whose colours the model moved).

The training loop and validate.py --follow both use Evaluator, so a run's
eval curves are the same whoever computed them.
"""

from absl import logging

from n2n import config as config_lib
from n2n.evaluation import held_out
from n2n.evaluation import scoring
from n2n.evaluation import summaries
from n2n.inference import schemes
from n2n.inference import serving as serving_lib
from n2n.inference import whole_images


def scoring_functions(network, serving, seed):
  """(denoise, held_out_loss) that score a network as denoise.py runs it.

  Args:
    network: keras.Model, the bare network as it trains; the functions run its
      weights as they are now (frozen: make them again after it trains on).
    serving: serving.Serving of the run (restore.RestoredModel's, or of_run of
      the training config), or serving.without_run (--method=pairs in 2D).
    seed: the evaluation seed (held-out draws).

  Returns:
    denoise: fn([H, W, C] float32) -> same, through the method's inference
      scheme (n2n/inference/schemes.py); for a 3D run fn([D, H, W, C]) -> same
      in denoise.py's default tiles.
    held_out_loss: held_out.make_held_out_loss's fn of the bare network, or
      None (methods with references; every 3D run: the held-out losses are
      defined on 2D images, so a 3D run is scored against references or second
      captures, which eval_data asks of its folder).
  """
  run_config = serving.run_config
  if run_config is None:
    return whole_images.make_denoiser(network), None
  with_scheme = schemes.with_scheme(network, serving.scheme)
  if serving.is_volume:
    return whole_images.make_volume_denoiser(with_scheme, serving), None
  network_denoise = whole_images.make_denoiser(network)
  denoise = (network_denoise if with_scheme is network
             else whole_images.make_denoiser(with_scheme))
  return denoise, held_out.make_held_out_loss(run_config.method.name, network_denoise, seed,
                                              run_config)


class Evaluator:
  """fn(step) -> list of scoring.LevelScores, with summaries and a log line."""

  def __init__(self, model, images, noise, levels, seed, image_summaries, writer,
               colour_shift_warning=0.0, run_config=None, final_step=None):
    """
    Args:
      model: keras.Model whose current weights are scored at each call.
      images: list of (name, [H, W, C] uint8) clean evaluation images, or
        of eval_data.EvalScene for noise 'none' (eval_data.load_eval_data;
        volumes for a 3D run).
      noise, levels, seed: the fixed evaluation corruption (scoring.score).
      image_summaries: comparison strips written for the first this many images.
      writer: tf.summary writer of the run's eval folder.
      colour_shift_warning: warn about images whose denoised per-channel mean
        moved by more than this (0-1 scale) and than the noise explains; 0: never.
      run_config: the run's TrainConfig, or None (--method=pairs): the
        network is scored through its method's inference scheme
        (n2n/inference/schemes.py), and a single-image method's held-out
        loss of the bare network too (n2n/evaluation/held_out.py).
      final_step: the run's last step (--train_steps), or None. Colour shifts
        found before it are logged as provisional notes: an undertrained model
        often moves a colour it gets right later (the demo's coffee.png, B
        +0.032 at step 800 of 2400), and a warning then reads as a fault.
    """
    self._model = model
    # Resolved once: the run's Serving is the same at every evaluation.
    self._serving = (serving_lib.without_run(model.input_shape[-1]) if run_config is None
                     else serving_lib.of_run(run_config))
    self._images = images
    self._noise, self._levels, self._seed = noise, tuple(levels), seed
    self._image_summaries = image_summaries
    self._corrupt = None if noise == config_lib.NO_NOISE else scoring.make_corruption(noise)
    self._writer = writer
    self._colour_shift_warning = colour_shift_warning
    self._final_step = final_step

  def __call__(self, step):
    # Made anew at each call: they run the weights frozen as they are now
    # (n2n/inference/frozen_weights.py), and the model trains on between calls.
    denoise, held_out_loss = scoring_functions(self._model, self._serving, self._seed)
    results = scoring.score(denoise, self._images, self._noise, self._levels, self._seed,
                            keep_images=self._image_summaries, corrupt=self._corrupt,
                            held_out_loss=held_out_loss)
    summaries.write_evaluation(self._writer, step, results)
    logging.info('Evaluation at step %d: %s', step, scoring.format_results(results))
    note = ''
    if self._final_step is not None and step < self._final_step:
      note = (f'step {step} of {self._final_step}: provisional, as colours often drift early in '
              'training and come back; the last evaluation warns if they stay')
    summaries.write_warnings(self._writer, step, 'colour',
                             scoring.colour_shift_warnings(results, self._colour_shift_warning),
                             note)
    return results
