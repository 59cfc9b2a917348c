"""The Python front door's functions: n2n.train, n2n.diagnose and n2n.export
(n2n/__init__.py re-exports them, and n2n.Denoiser, lazily: `import n2n` loads
none of this). Each is what its program does, for arrays and Python values
(docs/python_api.md).
"""

import os

from n2n import autograph_files
from n2n import config as config_lib
from n2n.diagnosis import arrays as diagnosis_arrays
from n2n.exports import export_run
from n2n.training import array_runs
from n2n.training import launch
from n2n.training import progress_bar as progress_bar_lib


def train(config, strategy=None, *, noisy=None, captures=None, clean=None, val=None, axes='',
          white_level=0.0, stop=None, progress=None, progress_bar=True):
  """Trains (or resumes) a run as train.py does, from config.data.train_data
  (TFRecords built on first use from config.data.train_images_dir) or from
  numpy arrays given here (docs/python_api.md).

  Arrays (give one of noisy, captures, clean; each a list, one item per scene):
    noisy: arrays, one noisy capture of each scene (noise='none', a
      single-image method such as method='neighbor2neighbor').
    captures: tuples of two or more registered captures of one scene each
      (noise='none'; method='pairs' or any other).
    clean: clean arrays; the config's synthetic noise is added as training
      goes. 2D ones are trained as 8-bit RGB, as clean image files are.
    val: validation arrays of the same kind (evaluated every eval_every steps).
    axes: the arrays' axes in their own order, as denoise.py's --axes (YX, YXC,
      ZYX, TYX, ZYXC, TZYX...); '' takes [H, W] and [H, W, 1 or 3] as images.
      Stacks train the 3D network, or their planes the 2D one with
      spatial_dims=2 in the config.
    white_level: the value that maps to 1.0; 0: for integer arrays their
      brightest value rounded up to a whole number of bits (511 for data up
      to 400), 1.0 for floats; or normalization='percentile' in the config.
  The arrays are written once into model_dir/arrays (TFRecords, with a
  fingerprint of the arrays beside them); config.json records data.arrays.
  Called again with the same arrays and model_dir, training resumes without
  writing them again; other arrays for a run that has started are refused.

  Args:
    config: n2n.TrainConfig (n2n.train_config(...)).
    strategy: a tf.distribute.Strategy, or None for config.run.strategy's.
    stop: None, or a threading.Event (anything with is_set()) to stop from
      another thread: after the loop of steps that is running, a checkpoint is
      saved and train returns (TrainedRun.stopped is True); calling train
      again resumes from that step.
    progress: None, or fn(step, total_steps, logs), called in the training
      thread once at the start (logs {}) and after every loop of
      config.run.steps_per_loop steps, with logs {'loss': mean training loss
      of those steps, 'seconds_per_step': float}, 'reconstruction_loss' (the
      loss without the method's own term, for Neighbor2Neighbor, whose
      regulariser's weight rises over the run) and, after an evaluation,
      'psnr' (dB), 'held_out_loss' or 'noisy_target_mse' as the validation
      data gives them. Keep it quick: a GUI should hand the values to its own
      thread.
    progress_bar: draw a tqdm bar (a widget in a notebook, text in a terminal).

  Returns:
    n2n.training.train_lib.TrainedRun (model, step, last evaluation, stopped).

  Raises:
    ValueError: bad configuration or input, with a one-line message naming
      the argument (and the array's index) at fault.
    n2n.training.preemption.TrainingInterrupted: stopped by SIGTERM/SIGINT
      after saving a checkpoint (train.py exits 128 + its signal number).
  """
  autograph_files.install()
  arrays = array_runs.TrainingArrays(noisy, captures, clean, val, axes, white_level)
  bar = progress_bar_lib.ProgressBar() if progress_bar else None
  try:
    return launch.train(config, strategy, arrays, stop,
                        progress_bar_lib.combined(bar, progress))
  finally:
    if bar is not None:
      bar.close()


def diagnose(images=None, white_level=0.0, *, captures=None, max_images=0):
  """What is the noise of these images, and what should I train on it? What
  diagnose.py prints for files, for numpy arrays (docs/diagnosis.md).

  Args:
    images: list of [H, W] or [H, W, C] arrays, single noisy images of one kind
      of camera: the noise is estimated from their flattest patches.
    white_level: the value that is 1.0 (0: the dtype's maximum, 1.0 for floats).
    captures: instead of images, a list of tuples of two or more registered
      captures of one scene each: the noise is measured from the first two.
    max_images: use at most this many images or scenes (0: all).

  Returns:
    n2n.diagnosis.report.Diagnosis: .kind, .noise_level, .correlation_x and
    .correlation_y (lags 1 to 4), .profile (levels per signal and channel),
    .method, .flags (train.py's), .settings (n2n.train_config's keywords);
    str() is the text diagnose.py prints.

  Raises:
    ValueError: naming the argument and the array's index at fault.
  """
  return diagnosis_arrays.diagnose_arrays(images, white_level, captures, max_images)


def export(model, output, tflite=False, onnx=False, bioimageio=False, overwrite=False):
  """Exports a run as export.py does: a SavedModel with config.json and
  README.md in output, and the formats asked for beside it.

  Args:
    model: a run's model_dir (newest checkpoint) or a checkpoint prefix.
    output: the export folder; one that holds files is replaced only with overwrite.
    tflite, onnx, bioimageio: also write model.tflite, model.onnx,
      bioimageio_model.zip (the last two need `pip install n2n[export]`).

  Returns:
    Paths written: output, then each optional file.

  Raises:
    ValueError: a bad setting, missing extras, or a non-empty output (nothing written).
  """
  autograph_files.install()
  config = config_lib.ExportConfig(model=os.fspath(model), output=os.fspath(output),
                                   overwrite=overwrite, tflite=tflite, onnx=onnx,
                                   bioimageio=bioimageio)
  _, written = export_run.export_run(config)
  return [config.output, *written]
