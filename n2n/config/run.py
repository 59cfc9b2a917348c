"""How a run optimises, evaluates while it trains, and executes."""

import dataclasses

from n2n.settings import check_settings
from n2n.settings import format_value
from n2n.settings import setting

PRECISIONS = ('auto', 'float32', 'mixed_bfloat16', 'mixed_float16')
# --learning_rate 0: chosen by the run (config.peak_learning_rate): short 2D runs, what a
# CPU trains in minutes, take SHORT_RUN_LEARNING_RATE, the others the paper's.
SHORT_RUN_STEPS = 5000
SHORT_RUN_LEARNING_RATE = 1e-3
PAPER_LEARNING_RATE = 3e-4
# 2D runs that start from another network's weights (--init_from; 3D fine-tuning is not
# measured and keeps the rule above): fine-tuning the shipped
# fluorescence model on w2s80's 80 real fields, Neighbor2Neighbor, 1200 steps, gave 33.067 dB
# at 3e-5, 33.091 at 1e-4, 33.050 at 3e-4 and 32.890 at 1e-3 (one seed,
# docs/bench/real_dev_w2s80_tune.json and fine_tuning_rate_w2s80_lr*.json). One seed, one
# set, one method: 3e-5 to 3e-4 lie within 0.04 dB; 1e-3 is 0.2 dB under.
FINE_TUNING_LEARNING_RATE = 1e-4
STRATEGIES = ('auto', 'default', 'mirrored', 'multi_worker', 'tpu')


@dataclasses.dataclass(frozen=True)
class OptimisationConfig:
  """Batch, steps and the optimizer's schedule."""
  batch_size: int = setting(4, 'Global batch size (all replicas together).', minimum=1)
  train_steps: int = setting(300000, 'Total optimizer steps.', minimum=1)
  learning_rate: float = setting(
      0.0, 'Adam peak learning rate. 0: 1e-3 for 2D runs of at most 5000 steps, what a CPU '
      'trains in minutes (Neighbor2Neighbor from the demo photographs\' noisy arrays, 600 '
      'steps: +8.03 dB at 1e-3, +7.68 at 3e-4; one seed, docs/bench/front_door.json), else the '
      'paper\'s 3e-4 (3D pairs on the phantom, 300 steps: +10.31 dB at 3e-4, +6.98 at 1e-3); '
      '2D runs with --init_from, 1e-4 (fine-tuning the fluorescence model on real w2s80 fields, '
      '1200 steps, one seed: 33.09 dB at 1e-4, 33.07 at 3e-5, 33.05 at 3e-4, 32.89 at 1e-3).',
      minimum=0.0)
  rampdown_fraction: float = setting(0.3, 'Final fraction of train_steps over which the learning '
                                     'rate ramps down to 0 (cosine squared), 0-1.', minimum=0.0,
                                     maximum=1.0)
  gradient_clip_multiple: float = setting(
      4.0, 'Clip each step\'s gradient norm to this multiple of the running average of recent '
      'norms (an outlier batch, e.g. Poisson at lambda near 0.001, would otherwise wreck '
      'Adam\'s state and the network); 0: never clip.', minimum=0.0)

  def __post_init__(self):
    check_settings(self)
    if 0 < self.gradient_clip_multiple <= 1:
      # Below 1 the running average of clipped norms shrinks every step and
      # training stalls, "clipped" on every line.
      raise ValueError(f'--gradient_clip_multiple={self.gradient_clip_multiple:g} must be 0 (no '
                       'clipping) or above 1')


@dataclasses.dataclass(frozen=True)
class EvaluationConfig:
  """Evaluation during training, the best checkpoint, and the warnings it gives."""
  eval_every: int = setting(5000, 'Steps between evaluations on --val_data; 0: no evaluation '
                            'during training (run validate.py --follow beside it instead).',
                            minimum=0)
  max_eval_images: int = setting(0, 'Evaluate on at most this many images (0: all).', minimum=0)
  eval_image_summaries: int = setting(3, 'Validation images shown in TensorBoard.', minimum=0)
  keep_best: bool = setting(True, 'Keep the checkpoint with the best validation score in '
                            'model_dir/best/ (with best.json: step and score).')
  psnr_drop_warning_db: float = setting(1.0, 'Warn (log and TensorBoard) when a validation PSNR '
                                        'falls more than this below the best; 0: never. A PSNR '
                                        'below the noisy input\'s always warns.', minimum=0.0)
  colour_shift_warning: float = setting(
      0.03, 'Warn (log and TensorBoard) when a validation image\'s denoised per-channel mean '
      'moves from the clean image\'s (a scene\'s reference, else its second capture) by more '
      'than this, on the 0-1 scale, and by more than the noise explains; 0: never.',
      minimum=0.0, maximum=1.0)

  def __post_init__(self):
    check_settings(self)


@dataclasses.dataclass(frozen=True)
class RunConfig:
  """Where the run lives and how it executes: devices, precision, checkpoints, logs, seed."""
  model_dir: str = setting('', 'Run directory: checkpoints, config.json, TensorBoard logs. '
                           'Rerunning with the same model_dir resumes.', required=True)
  seed: int = setting(0, 'Seed for data order, crops, augmentation, noise and initial weights.',
                      minimum=0)
  init_from: str = setting(
      '', 'Start a new run from the network weights of a shipped model (its name, e.g. '
      'camera_srgb) or of another run (its folder or a checkpoint prefix): fine-tuning. The '
      'network must be the same (channels, width, 2D or 3D...), else it is refused; the '
      'method and data may differ. Only the weights are taken (the optimizer and step start '
      'afresh); a model_dir that already holds a checkpoint resumes from it instead.')
  precision: str = setting('auto', 'auto picks mixed_bfloat16 where the hardware runs it '
                           'natively, mixed_float16 on pre-Ampere GPUs, else float32.',
                           choices=PRECISIONS)
  strategy: str = setting('auto', 'auto: tpu if --tpu, mirrored with >1 GPU, else default.',
                          choices=STRATEGIES)
  tpu: str = setting('', 'TPU name, grpc:// address or "local", for --strategy=tpu (or auto).')
  steps_per_loop: int = setting(10, 'Training steps per tf.function call.', minimum=1)
  checkpoint_every: int = setting(1000, 'Steps between checkpoints.', minimum=1)
  keep_checkpoints: int = setting(3, 'Checkpoints to keep.', minimum=1)
  log_every: int = setting(100, 'Steps between console log lines and loss summaries.', minimum=1)
  deterministic: bool = setting(False, 'Enable TensorFlow op determinism: the same seed gives '
                                'the same losses and weights (slower on some devices).')
  jit_compile: bool = setting(False, 'Compile the forward and backward pass with XLA (off by '
                              'default: slower than oneDNN on CPU; try it on GPU).')
  profile_steps: tuple[int, ...] = setting((), 'START,END: write a TensorBoard profiler trace of '
                                           'those steps to model_dir/plugins/profile.')

  def __post_init__(self):
    check_settings(self)
    if self.profile_steps and not (len(self.profile_steps) == 2
                                   and 0 <= self.profile_steps[0] < self.profile_steps[1]):
      raise ValueError(f'--profile_steps={format_value(self.profile_steps)} must be START,END '
                       'with 0 <= START < END')
    if self.strategy == 'tpu' and not self.tpu:
      raise ValueError('--strategy=tpu needs --tpu (a TPU name, grpc:// address or "local")')
