"""Every setting of n2n, declared once: type, default, unit and range, help text.

The absl flags of every entry point (n2n/config_flags.py) and the checks of every
value are derived from the field declarations below (machinery in
n2n/settings.py), so a new setting is one `setting(...)` line plus its use. A
training run's settings are in sections (data, corruption, method, model,
optimisation, evaluation, run) while its flags stay flat. Library code takes
these frozen objects (or plain values), never absl FLAGS. Checks raise
ValueError naming the flag and the offending value. This module imports no
TensorFlow, so reading a config.json costs nothing.
"""

import dataclasses

from n2n.corruptions import catalog
from n2n.methods import registry as methods_registry
from n2n import settings as settings_lib
from n2n.settings import check_settings
from n2n.settings import derived
from n2n.settings import format_value
from n2n.settings import from_dict
from n2n.settings import section
from n2n.settings import setting
from n2n.settings import to_json

PRECISIONS = ('auto', 'float32', 'mixed_bfloat16', 'mixed_float16')
STRATEGIES = ('auto', 'default', 'mirrored', 'multi_worker', 'tpu')
TARGETS = ('noisy', 'clean')
LOSSES = ('auto', 'l2', 'l1', 'annealed_l0', 'masked_l2')
# The training methods (n2n/methods/): pairs (Noise2Noise from two noisy
# copies, or a clean target) and those that train from single noisy images.
METHODS = methods_registry.NAMES
CACHE_MODES = ('auto', 'true', 'false')
# How raw pixels become network values (n2n/data/normalization.py).
NORMALIZATIONS = ('white_level', 'percentile')
NO_NOISE = catalog.NO_NOISE
NOISES = catalog.NAMES + (NO_NOISE,)
# Clean-image datasets hold 8-bit RGB; scene datasets say in their manifest.
CLEAN_IMAGE_CHANNELS = 3


# Channels of the U-Net's encoder convolutions in the paper (appendix A.1): the default
# --network_width.
PAPER_NETWORK_WIDTH = 48

# The paper's U-Net pools five times, so it works at six resolution levels (the
# input's and one after each pooling stage): the bounds of --z_pools and
# --xy_conv_levels, and n2n/model/unet.py's STAGES and LEVELS.
POOLING_STAGES = 5
RESOLUTION_LEVELS = POOLING_STAGES + 1


@dataclasses.dataclass(frozen=True)
class ModelConfig:
  """What defines the network's weights; a model_dir never changes these."""
  architecture: str = 'n2n_unet'
  channels: int = setting(0, 'Image channels: 3 (RGB) or 1 (grayscale, luma). 0: as the '
                          'training data (RGB for clean-image datasets, the captures\' channels '
                          'for scene datasets); a value converts the data to it.', minimum=0,
                          maximum=3)

  downsampling: str = setting(
      'max_pool', "The U-Net's 2x downsampling. max_pool: the paper's; max_blur_pool: N2V2's "
      '(a stride-1 max, then a binomial blur at every second pixel), against checkerboard '
      'artefacts in blind-spot training.', choices=('max_pool', 'max_blur_pool'))
  top_skip: bool = setting(True, 'Concatenate the input before the last convolutions (the '
                           'paper). N2V2 leaves it out for blind-spot training, so the output '
                           'cannot copy the noisy input.')
  network_width: int = setting(PAPER_NETWORK_WIDTH, "Channels of the U-Net's encoder "
                               "convolutions: 48 is the paper's. The convolutions after it keep "
                               "the paper's ratios to it (decoder 2x, the two before the output "
                               '4/3 and 2/3, rounded), so they cost about the square of the '
                               'width: a training step at 24 took 2.9-4.0x less time than at 48 '
                               'on a 2-core CPU (docs/performance.md), with a quarter of the '
                               'weights.', minimum=1)
  spatial_dims: int = setting(0, '2: the image U-Net; 3: the same U-Net with 3x3x3 '
                              'convolutions, for volumes and movies (time as depth). 0: as the '
                              'training data (3 for datasets of TIFF stacks).', minimum=0,
                              maximum=3)
  z_pools: int = setting(3, '3D only: how many of the five pooling stages (the last ones) also '
                         'pool z; the first ones pool only y and x, so anisotropic data (z steps '
                         'coarser than xy pixels) reach even voxels first and thin crops pass '
                         'every stage. 3 suits z steps about 4x the pixel size (CARE pools z '
                         'less on anisotropic data too). Crop depths are multiples of '
                         '2**z_pools.', minimum=0, maximum=POOLING_STAGES)
  xy_conv_levels: int = setting(0, '3D only: the convolutions at the finest N of the '
                                "network's six resolution levels (the input's and one after "
                                'each pooling stage) convolve in y and x only (1x3x3 kernels); '
                                'the coarser levels convolve in z too. The finest levels hold '
                                "most of the network's work and a 3x3x3 kernel has three times "
                                'the taps of a 3x3 one, so a step costs less while the planes '
                                'still inform each other (docs/volumes.md). 0: every '
                                'convolution 3x3x3.', minimum=0,
                                maximum=RESOLUTION_LEVELS)

  def __post_init__(self):
    check_settings(self)
    if self.spatial_dims == 1:
      raise ValueError('--spatial_dims=1 must be 2 or 3 (0: as the training data)')
    if self.channels == 2:
      raise ValueError(f'--channels={self.channels} must be 1 or 3')


@dataclasses.dataclass(frozen=True)
class AugmentConfig:
  """Augmentations of the clean crop, applied before it is corrupted.

  They keep Noise2Noise valid because input and target are corrupted after
  the same augmented clean crop is drawn.
  """
  flips: bool = setting(True, 'Random horizontal and vertical flips.')
  rotations: bool = setting(True, 'Random 90-degree rotations.')
  channel_permutations: bool = setting(
      True, 'Random RGB channel permutations, the same for input and target (also for scenes '
      'of real captures): the model learns colours its training images lack. Turn off for '
      'sensors whose channels have different noise, which permutations would blur together.')


@dataclasses.dataclass(frozen=True)
class DataConfig:
  """What the run trains and validates on, and how pixels become network values."""
  train_data: str = setting(
      '', 'Training data: a dataset folder written by datasets/make_tfrecords.py, or TFRecord '
      'globs, comma-separated.', required=True)
  val_data: str = setting('', 'Validation images: a folder of images or a TFRecord glob. Empty: '
                          'no evaluation during training.')
  train_images_dir: str = setting(
      '', 'Optional image folder: when --train_data holds no records yet, TFRecords are first '
      'built from this folder into the folder --train_data names (or its glob\'s folder).')
  crop_size: int = setting(256, 'Square training crop in pixels (the U-Net pools five times).',
                           multiple_of=32)
  crop_depth: int = setting(16, '3D only: the training crop\'s depth in planes (a multiple of '
                            '2**--z_pools).', minimum=1)
  crops_per_image: int = setting(4, 'Random crops taken per decoded training image.', minimum=1)
  cache: str = setting('auto', 'Keep decoded training images in memory. auto: when the dataset '
                       'manifest says they fit in --cache_budget_mb.', choices=CACHE_MODES)
  cache_budget_mb: int = setting(2048, 'Memory budget for --cache=auto, MiB.', minimum=0)
  skip_corrupt_records: bool = setting(False, 'Skip unreadable training records with a warning '
                                       'instead of stopping with an error naming the shard.')
  normalization: str = setting(
      'white_level', 'How pixels become network values. white_level: divided by the white level '
      'of the data. percentile: each image maps its --percentile_low and --percentile_high '
      'percentiles to 0 and 1, and the output is mapped back to its own scale (for data that '
      'fill a small part of their range, e.g. 16-bit microscopy using a few hundred levels); '
      'real noisy captures (--noise=none) only. Denoising, validation and exports apply the '
      'same rule.', choices=NORMALIZATIONS)
  percentile_low: float = setting(1.0, '--normalization=percentile: the percentile mapped to 0 '
                                  "(CSBDeep's default).", minimum=0.0, maximum=100.0)
  percentile_high: float = setting(99.8, '--normalization=percentile: the percentile mapped to 1 '
                                   "(CSBDeep's default).", minimum=0.0, maximum=100.0)
  augment: AugmentConfig = section(AugmentConfig, 'augment_', legacy_key='augment')
  # Resolved from the training data's manifest when the run starts (not flags):
  # the pixel type, the channels and the value that maps to 1.0, so
  # validate.py, denoise.py and export.py hand results back in the data's own units.
  dtype: str = derived('uint8', legacy_key='data_dtype')
  channels: int = derived(CLEAN_IMAGE_CHANNELS, legacy_key='data_channels')
  white_level: float = derived(255.0, legacy_key='white_level')
  # 3 for datasets of TIFF stacks (the manifest's spatial_dims).
  spatial_dims: int = derived(2)
  # The training noise's correlation between neighbouring pixels (lag 1, the
  # larger of x and y): 0 for pixel-independent synthetic noise, the
  # diagnosis of real captures (n2n/diagnosis), -1 where not known (text, runs
  # from before it was recorded). denoise.py warns on files far from it.
  noise_correlation: float = derived(-1.0)

  def __post_init__(self):
    check_settings(self)
    if self.normalization == 'percentile' and self.percentile_low >= self.percentile_high:
      raise ValueError(f'--percentile_low={self.percentile_low:g} must be below '
                       f'--percentile_high={self.percentile_high:g}')


@dataclasses.dataclass(frozen=True)
class CorruptionConfig:
  """The synthetic noise added to clean images (none: the data are real noisy captures).

  Empty level lists stand for the corruption's paper values until the run's
  configuration is resolved (TrainConfig.resolved()).
  """
  noise: str = setting('gaussian', 'Corruption. none: the training data are scenes of real '
                       'noisy captures (datasets/make_tfrecords.py --scenes); each example is '
                       'two captures of one scene.', choices=NOISES)
  noise_range: tuple[float, ...] = setting(
      (), 'Training level range "low,high", per image: Gaussian sigma in 0-255 units, Poisson '
      'lambda, or the fraction of pixels for text, impulse and bernoulli. Empty: the '
      "corruption's paper range.")
  eval_noise_levels: tuple[float, ...] = setting(
      (), 'Comma list of evaluation levels, units of --noise_range. Empty: the paper\'s (sigma 25, '
      'lambda 30, text 0.25, impulse 0.5,0.7, bernoulli 0.5).')
  noise_captures: int = setting(
      0, 'Synthetic noise: 0 draws fresh noise at every step (the paper). N corrupts every '
      'training image N times, once and for all, and trains on those captures only, as with N '
      'real captures of each scene (--method=pairs needs 2 or more with --target=noisy). The '
      'single-image methods always use fixed captures: 0 means 1 for them.', minimum=0)

  def __post_init__(self):
    # The noise's choices first: every later message names a corruption.
    check_settings(self)
    if self.noise == NO_NOISE:
      for name in ('noise_range', 'eval_noise_levels'):
        if getattr(self, name):
          raise ValueError(f'--{name} does not apply to --noise=none (real noisy captures)')
      if self.noise_captures:
        raise ValueError(f'--noise_captures={self.noise_captures} simulates captures with '
                         'synthetic noise; with --noise=none the scenes\' own captures are the '
                         'data')
      return
    corruption = catalog.get_spec(self.noise)
    lowest, highest = corruption.bounds
    if self.noise_range:
      if len(self.noise_range) != 2:
        raise ValueError(f'--noise_range={format_value(self.noise_range)} needs exactly two '
                         'numbers: low,high')
      low, high = self.noise_range
      if not lowest <= low <= high <= highest:
        raise ValueError(
            f'--noise_range={low:g},{high:g} is invalid for --noise={self.noise}: need '
            f'{lowest:g} <= low <= high <= {highest:g} ({corruption.level_name})')
    for level in self.eval_noise_levels:
      if not lowest <= level <= highest:
        raise ValueError(f'--eval_noise_levels value {level:g} is outside '
                         f'{lowest:g}..{highest:g} for --noise={self.noise}')

  def resolved(self, captures_rule):
    """The same corruption with the paper's levels where none were given, and
    --noise_captures as the method uses it (captures_rule: Method.resolve_captures)."""
    if self.noise == NO_NOISE:
      return self
    corruption = catalog.get_spec(self.noise)
    return dataclasses.replace(
        self,
        noise_range=tuple(float(v) for v in self.noise_range or corruption.default_range),
        eval_noise_levels=tuple(float(v) for v in
                                self.eval_noise_levels or corruption.default_eval_levels),
        noise_captures=captures_rule(self.noise_captures))


def _check_method_section(section_config):
  check_settings(section_config)


# The method section: which method, its target and loss, and one part per
# method with settings of its own (n2n/methods/registry.py), so that
# config.method.blind_spot.fraction is --blind_spot_fraction. Made from the
# registry's list, so a new method's settings join it by themselves.
MethodConfig = dataclasses.make_dataclass('MethodConfig', [
    ('name', str, setting(
        'pairs', 'pairs: input and target are two noisy copies of an image (or the clean one, '
        '--target=clean). neighbor2neighbor and blind_spot train from single noisy images: each '
        'clean image corrupted once with a fixed per-image seed, or every capture of a scene '
        'dataset.', choices=METHODS, flag='method')),
    ('target', str, setting('noisy', 'noisy: Noise2Noise (independent corruption); clean: the '
                            'Noise2Clean baseline.', choices=TARGETS)),
    ('loss', str, setting('auto', "Loss. auto: the paper's loss for --noise (l2 for gaussian and "
                          'poisson, l1 for text, annealed_l0 for impulse, masked_l2 for '
                          'bernoulli; masked_l2 for --method=blind_spot).', choices=LOSSES)),
] + methods_registry.settings_fields(), frozen=True, namespace={
    '__module__': __name__, '__post_init__': _check_method_section,
    '__doc__': 'The training method (--method), its target and loss, and each method\'s own '
               'settings.'})


@dataclasses.dataclass(frozen=True)
class OptimisationConfig:
  """Batch, steps and the optimizer's schedule."""
  batch_size: int = setting(4, 'Global batch size (all replicas together).', minimum=1)
  train_steps: int = setting(300000, 'Total optimizer steps.', minimum=1)
  learning_rate: float = setting(3e-4, 'Adam peak learning rate.', minimum=1e-12)
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


@dataclasses.dataclass(frozen=True)
class TrainConfig:
  """The configuration of one training run, in sections (written to config.json).

  Flags stay flat (--crop_size is config.data.crop_size); each section checks
  its own values, and __post_init__ the rules between sections. Nothing here
  changes a value: resolved() returns the configuration with what the run
  derives (the paper's noise levels, the loss for auto, the fixed captures of
  a single-image method), which train.py logs (resolved_summary) and
  config.json records.
  """
  data: DataConfig = section(DataConfig, '')
  corruption: CorruptionConfig = section(CorruptionConfig, '')
  method: MethodConfig = section(MethodConfig, '')
  model: ModelConfig = section(ModelConfig, '')
  optimisation: OptimisationConfig = section(OptimisationConfig, '')
  evaluation: EvaluationConfig = section(EvaluationConfig, '')
  run: RunConfig = section(RunConfig, '')

  def __post_init__(self):
    method = methods_registry.get(self.method.name)
    noise = self.corruption.noise
    loss = self.method.loss
    if noise == NO_NOISE and loss == 'masked_l2' and not method.masks_targets:
      raise ValueError('--loss=masked_l2 needs --noise=bernoulli (it masks dropped pixels)')
    if self.data.normalization == 'percentile' and noise != NO_NOISE:
      # Synthetic noise levels are defined on the white-level scale, and the
      # percentiles of a clean image are not those of its noisy copy.
      raise ValueError(f'--normalization=percentile applies to real noisy captures '
                       f'(--noise=none); --noise={noise} adds its noise on the white-level '
                       'scale (use --normalization=white_level)')
    method.resolve_loss(loss, _default_loss(noise))  # refuses a loss the method cannot take
    method.check(self)

  def resolved(self):
    """This configuration with every value the run derives filled in (the
    corruption's paper levels, the loss for auto, --noise_captures as the
    method uses it); a resolved configuration resolves to itself."""
    method = methods_registry.get(self.method.name)
    return dataclasses.replace(
        self, corruption=self.corruption.resolved(method.resolve_captures),
        method=dataclasses.replace(
            self.method, loss=method.resolve_loss(self.method.loss,
                                                  _default_loss(self.corruption.noise))))

  def to_json(self):
    """The configuration as a JSON string (tuples become lists)."""
    return to_json(self)


def read_train_config(values):
  """The resolved TrainConfig of a parsed config.json, of this layout or an
  earlier one (settings.from_dict)."""
  return from_dict(TrainConfig, values).resolved()


def train_config(**flag_values):
  """A TrainConfig from settings named as train.py's flags name them
  (blind_spot_fraction=0.01, channels=1, augment_flips=False); ValueError for
  a name that is no flag. Resolved (TrainConfig.resolved())."""
  return settings_lib.from_flag_values(TrainConfig, flag_values).resolved()


# What resolved() derives from --noise and --method: replacing either puts these
# back to their declared defaults (to be derived anew) unless given with it.
_DERIVED_FROM = {'noise': ('noise_range', 'eval_noise_levels', 'noise_captures', 'loss'),
                 'method': ('noise_captures', 'loss')}


def replace_settings(config, **flag_values):
  """config with the settings named as train.py's flags name them replaced
  (train_steps=10, blind_spot_fraction=0.01), checked and resolved again.

  Replacing noise or method also derives anew what was derived from them
  (_DERIVED_FROM: the paper's levels, the loss, the fixed captures) unless the
  same call gives those too: a Gaussian run's sigma range is no Poisson range.
  """
  specs = settings_lib.flag_specs(TrainConfig, flag_values)
  derived = {name for flag in flag_values for name in _DERIVED_FROM.get(flag, ())}
  defaults = {name: specs[name].default for name in derived - set(flag_values)}
  return settings_lib.with_flag_values(config, {**defaults, **flag_values}).resolved()


def resolved_summary(config):
  """One line with every value the run derived rather than took as given
  (--noise_range and --eval_noise_levels from the corruption's paper, --loss
  auto, --noise_captures 0 for a single-image method, --channels 0, and the
  data's type and white level), as config.json records them: train.py logs it
  at start, so nothing is changed quietly."""
  corruption, data = config.corruption, config.data
  parts = [f'--method={config.method.name}', f'--noise={corruption.noise}']
  if corruption.noise != NO_NOISE:
    parts += [f'--noise_range={format_value(corruption.noise_range)}',
              f'--eval_noise_levels={format_value(corruption.eval_noise_levels)}',
              f'--noise_captures={corruption.noise_captures}']
  parts += [f'--loss={config.method.loss}', f'--channels={model_channels(config)}',
            f'--normalization={data.normalization}',
            f'data {data.dtype}, {data.channels} channel(s), white level {data.white_level:g}']
  if data.noise_correlation >= 0:
    parts.append(f'noise correlation at lag 1 {data.noise_correlation:.2f}')
  return 'Resolved settings: ' + ', '.join(parts)


def _default_loss(noise):
  return 'l2' if noise == NO_NOISE else catalog.get_spec(noise).default_loss


def resolve_data(config, data_channels, data_dtype, white_level, data_spatial_dims=2):
  """config with what the training data decides: the model's channels and
  spatial dimensions (where --channels and --spatial_dims are 0), the data's
  channels, pixel type, white level and spatial dimensions."""
  model = dataclasses.replace(config.model, channels=config.model.channels or data_channels,
                              spatial_dims=config.model.spatial_dims or int(data_spatial_dims))
  data = dataclasses.replace(config.data, channels=int(data_channels), dtype=data_dtype,
                             white_level=float(white_level), spatial_dims=int(data_spatial_dims))
  return dataclasses.replace(config, model=model, data=data)


def with_noise_correlation(config, correlation):
  """config with data.noise_correlation (see DataConfig) set, rounded to 0.01;
  a measured correlation below 0 (independent noise reads -0.01 to -0.05
  sometimes) is recorded as 0, so that only -1 means unknown."""
  value = -1.0 if correlation == -1.0 else max(float(correlation), 0.0)
  return dataclasses.replace(config, data=dataclasses.replace(
      config.data, noise_correlation=round(value, 2)))


def with_settings_for_noise(config, kind):
  """(config with the settings its method leaves to the diagnosis (a stride
  of 0, a line of auto) set for noise of kind, {flag: value} of those set).

  kind: n2n/diagnosis/report.py's kind of the training data's noise
  ('independent' for pixel-independent synthetic noise).
  """
  chosen = methods_registry.get(config.method.name).defaults_for_noise(config, kind)
  if not chosen:
    return config, {}
  return settings_lib.with_flag_values(config, chosen), chosen


def flag_value(config, flag):
  """The value of the setting train.py's flag `flag` names in a TrainConfig."""
  return settings_lib.value_at(config, settings_lib.flag_specs(type(config), [flag])[flag].path)


def training_noise_correlation(config):
  """The lag-1 correlation of the noise the run trained on: what it recorded
  (data.noise_correlation), else 0 for pixel-independent synthetic noise (runs
  from before it was recorded knew that too), else -1 (unknown)."""
  if config.data.noise_correlation >= 0:
    return config.data.noise_correlation
  noise = config.corruption.noise
  if noise != NO_NOISE and catalog.get_spec(noise).pixel_independent:
    return 0.0
  return -1.0


def model_channels(config):
  """The network's channel count; an unresolved 0 means clean-image data (RGB)."""
  return config.model.channels or CLEAN_IMAGE_CHANNELS


def model_spatial_dims(config_or_model):
  """2 or 3: the network's spatial dimensions (a TrainConfig or a ModelConfig);
  an unresolved 0 means 2 (every run from before 3D existed)."""
  model = getattr(config_or_model, 'model', config_or_model)
  return model.spatial_dims or 2


@dataclasses.dataclass(frozen=True)
class ValidateConfig:
  """What validate.py scores, and how; empty values mean "as the run was trained"."""
  checkpoint: str = setting('', 'A model_dir (newest checkpoint) or a checkpoint prefix '
                            '(model_dir/ckpt-N).', required=True)
  data: str = setting('', "A folder of images or a TFRecord glob. Empty: the run's --val_data.")
  noise: str = setting('', "Corruption. Empty: the run's --noise (none: --data is a folder "
                       'of scenes of real noisy captures).', choices=('',) + NOISES)
  noise_levels: tuple[float, ...] = setting((), "Comma list of levels. Empty: the run's "
                                            '--eval_noise_levels.')
  seed: int = setting(-1, "Seed of the fixed evaluation noise. -1: the run's --seed, as the "
                      'evaluation during training uses.', minimum=-1)
  precision: str = setting('run', "Inference precision. run: the run's --precision resolved on "
                           'this machine, as the evaluation during training uses.',
                           choices=('run',) + PRECISIONS)
  output_dir: str = setting('', 'Write denoised PNGs and metrics.json here.')
  max_images: int = setting(0, 'Score at most this many images (0: all).', minimum=0)
  follow: bool = setting(False, 'Sidecar mode: score every new checkpoint of the run in '
                         '--checkpoint (a model_dir) as it appears, write the same TensorBoard '
                         "eval summaries training writes, stop once the run's last step is "
                         'scored.')
  follow_timeout: int = setting(3600, 'With --follow: give up after this many seconds without '
                                'a new checkpoint.', minimum=1)
  tta: bool = setting(False, 'Score with test-time augmentation, as denoise.py --tta: the mean '
                      'of the outputs of the 8 flips and rotations.')

  def __post_init__(self):
    object.__setattr__(self, 'noise_levels', tuple(float(v) for v in self.noise_levels))
    check_settings(self)
    if self.tta and self.follow:
      raise ValueError('--tta scores one checkpoint; --follow writes the same curves as training, '
                       'which evaluates without it')


@dataclasses.dataclass(frozen=True)
class DenoiseConfig:
  """What denoise.py reads, how it runs the network, and where it writes."""
  model: str = setting('', "A run's model_dir (newest checkpoint) or a checkpoint prefix "
                       '(model_dir/ckpt-N).', required=True)
  input: str = setting('', 'Noisy images: a file, a folder (recursive), a glob, or a '
                       'comma-separated list of these. An OME-Zarr folder (*.zarr) is one '
                       'input, denoised chunk by chunk by a 3D run.', required=True)
  output_dir: str = setting('', 'Where the denoised files go, at the same path relative to '
                            'the input folder.', required=True)
  format: str = setting('auto', 'Output format. auto: PNG, TIFF and BMP stay as they are, JPEG '
                        'and other lossy or rare formats become PNG.',
                        choices=('auto', 'png', 'tiff', 'jpeg'))
  tile_size: int = setting(1024, 'Tile side in pixels (a multiple of 32); larger images are '
                           'denoised in overlapping tiles.', multiple_of=32)
  tile_overlap: int = setting(64, 'Pixels neighbouring tiles share and blend over.', minimum=0)
  batch_tiles: int = setting(1, 'Tiles per network call on each device: with several GPUs (or '
                            'logical CPU devices) each call splits that many times their count '
                            'across them.', minimum=1)
  logical_cpu_devices: int = setting(0, 'Split the CPU into this many logical devices and run '
                                     'the network on all of them (tf.distribute), as on a host '
                                     'with several GPUs; for trying and measuring multi-device '
                                     'runs. 0: no split. Ignored where there are GPUs.',
                                     minimum=0)
  precision: str = setting('auto', 'Inference precision. auto: mixed_bfloat16 where the '
                           'hardware runs bfloat16 natively (CPUs with AVX512-BF16 or AMX, GPUs '
                           'of compute capability 8.0+, TPUs), mixed_float16 on older GPUs of '
                           'capability 7.x, else float32.', choices=PRECISIONS)
  white_level: float = setting(0.0, "The pixel value that maps to 1.0 for the network, in the "
                               "files' own units (e.g. 4095 for 12-bit data in 16-bit files). "
                               "0: the run's, for files of the training data's type, else the "
                               "type's full range.", minimum=0.0)
  overwrite: bool = setting(False, 'Replace outputs that already exist (without it they are '
                            'kept as done, so rerunning an interrupted batch resumes it), and '
                            'allow --output_dir inside an input folder.')
  tta: bool = setting(False, 'Test-time augmentation: average the outputs of the 8 flips and '
                      'rotations of each image (8 times the time).')
  shard: str = setting('', 'K/N: denoise only part K (0-based) of N of the planned files, a '
                       'deterministic split balanced by file size, for job arrays (together the N '
                       'shards write every file once). auto: K and N from SLURM_ARRAY_TASK_ID and '
                       'SLURM_ARRAY_TASK_COUNT, or from JOB_COMPLETION_INDEX and N2N_SHARD_COUNT '
                       '(a Kubernetes Indexed Job). Empty: every file.')
  png_compression: int = setting(
      2, 'zlib compression level of PNG outputs, 0 (none, fastest) to 9 (smallest, slowest); '
      'zlib\'s own default is 6. Pixels are the same at every level.',
      minimum=0, maximum=9)
  prefetch: int = setting(2, 'Files read and decoded ahead, and encoded and written behind, '
                          'while the network runs (0: one after the other).', minimum=0)
  axes: str = setting('', 'With a 3D run (--spatial_dims=3): the axes of TIFF stacks whose '
                      'files do not say them, in file order, e.g. ZYX or TYX (a movie: time is '
                      'the depth the network sees). Empty: as each file says.')
  volume_tile: str = setting('0,128,128', 'With a 3D run: the tile\'s depth, height and width '
                             'in voxels (depth a multiple of 2**z_pools, height and width of '
                             '32); larger stacks are denoised in overlapping tiles. Depth 0: '
                             'the depth of the run\'s training crops (docs/volumes.md: whole '
                             'stacks lost 1.2-15 dB against it).')
  volume_overlap: str = setting('auto', 'With a 3D run: voxels neighbouring tiles share and '
                                'blend over, in z, y and x; for OME-Zarr inputs also the '
                                'context read around each chunk. auto: half the tile depth in '
                                'z, 32 in y and x.')

  def __post_init__(self):
    check_settings(self)
    if self.tile_overlap * 2 >= self.tile_size:
      raise ValueError(f'--tile_overlap={self.tile_overlap} must be less than half of '
                       f'--tile_size={self.tile_size}')
    volume_tiling(self, None)


def _three_sizes(value, flag, minimum):
  try:
    sizes = tuple(int(part) for part in value.split(','))
  except ValueError:
    sizes = ()
  if len(sizes) != 3 or min(sizes) < minimum:
    raise ValueError(f'--{flag}={value} must be three whole numbers of at least {minimum}, '
                     'depth,height,width')
  return sizes


# --volume_overlap auto: y and x overlap (z: half the tile depth).
AUTO_VOLUME_OVERLAP_XY = 32


def volume_tiling(config, crop_depth):
  """((depth, height, width) of 3D tiles, (z, y, x) overlaps) of a DenoiseConfig.

  crop_depth: the depth of the run's training crops, which a tile depth of 0
  means; None where no run is known yet (the depth stays 0 and its overlap
  unchecked). A 3D network trained on thin crops denoises best in tiles as deep:
  on the phantom, 60-150 steps on 8-plane crops, whole 16- and 48-plane
  stacks scored 1.2-15.2 dB below 8-plane tiles overlapping by half, of which
  the half overlaps alone gave 0.75-1.19 dB (docs/bench/volume_tile_depth.json).
  """
  tile = _three_sizes(config.volume_tile, 'volume_tile', 0)
  if tile[1] % 32 or tile[2] % 32 or not tile[1] or not tile[2]:
    raise ValueError(f'--volume_tile={config.volume_tile}: height and width must be multiples '
                     'of 32')
  tile = (tile[0] or crop_depth,) + tile[1:]
  if config.volume_overlap == 'auto':
    overlap = ((tile[0] or 0) // 2, AUTO_VOLUME_OVERLAP_XY, AUTO_VOLUME_OVERLAP_XY)
  else:
    overlap = _three_sizes(config.volume_overlap, 'volume_overlap', 0)
  for axis, size, shared in zip('zyx', tile, overlap):
    # At most half: a tile's rising and falling ramps (tiling._ramp) then never overlap
    # each other (where they would, a voxel would get the lesser of one tile's two edges).
    if size and shared * 2 > size:
      raise ValueError(f'--volume_overlap={config.volume_overlap}: the {axis} overlap {shared} '
                       f'must be at most half of the tile\'s {size}')
  return tile, overlap


def default_volume_tiling(crop_depth):
  """volume_tiling of denoise.py's defaults (--volume_tile, --volume_overlap) for
  a run trained on crops crop_depth planes deep: what training's evaluation,
  validate.py and the benches run 3D networks in."""
  return volume_tiling(DenoiseConfig(model='-', input='-', output_dir='-'), crop_depth)


@dataclasses.dataclass(frozen=True)
class ExportConfig:
  """What export.py writes."""
  model: str = setting('', "A run's model_dir (newest checkpoint) or a checkpoint prefix.",
                       required=True)
  output: str = setting('', 'Folder for the SavedModel, config.json and README.md.',
                        required=True)
  overwrite: bool = setting(False, 'Replace an existing export in --output.')
  tflite: bool = setting(False, 'Also write model.tflite (TensorFlow Lite, builtin ops only, '
                         'any image size) beside the SavedModel.')
  onnx: bool = setting(False, 'Also write model.onnx (any image size, padding inside the graph) '
                       'beside the SavedModel; needs the optional export extras: pip install -r '
                       'requirements-export.txt.')
  bioimageio: bool = setting(False, 'Also write bioimageio_model.zip, a BioImage Model Zoo package '
                             '(spec 0.5, ONNX and TensorFlow SavedModel weights) for '
                             'Fiji/deepImageJ, napari, QuPath and ilastik, validated and tested '
                             'before it is kept; needs the optional export extras.')
  bioimageio_authors: tuple[str, ...] = setting(('n2n user',), 'Authors named in the package.')
  bioimageio_license: str = setting('CC-BY-4.0', 'SPDX licence of the packaged weights.')

  def __post_init__(self):
    check_settings(self)


@dataclasses.dataclass(frozen=True)
class DiagnoseConfig:
  """What diagnose.py reads and writes."""
  input: str = setting('', 'Noisy images: a file, a folder (recursive), a glob, or a '
                       'comma-separated list of these; with --scenes, one folder of scenes.',
                       required=True)
  scenes: bool = setting(False, '--input is a folder of scenes (folders of two or more '
                         'captures of one view, as datasets/make_tfrecords.py --scenes takes): '
                         'the noise is measured from the first two captures of each, on every '
                         'pixel. Without it, each file is one noisy image and the noise is '
                         'estimated from its flattest patches.')
  white_level: float = setting(0.0, "The pixel value that is 1.0, in the files' own units (e.g. "
                               '4095 for 12-bit data in 16-bit files). 0: the type\'s full range.',
                               minimum=0.0)
  max_images: int = setting(0, 'Diagnose at most this many images or scenes (0: all).',
                            minimum=0)
  output_dir: str = setting('', 'Also write noise_diagnosis.svg (correlation map, level against '
                            'signal) and noise_diagnosis.json here.')
  overwrite: bool = setting(False, 'Replace noise_diagnosis.svg and .json in --output_dir.')

  def __post_init__(self):
    check_settings(self)


def model_config_from_dict(config_dict):
  """Reads the network part of a config.json dict; ValueError if it is missing."""
  model = config_dict.get('model')
  if not isinstance(model, dict):
    raise ValueError('config.json has no "model" section')
  return from_dict(ModelConfig, model)


def _effective_model(model):
  """model with what builds the same network written alike: spatial_dims 0
  (runs from before 3D) as 2, and z_pools and xy_conv_levels, which 2D
  networks do not have (preflight and build_unet refuse in-plane levels for
  them), as 0."""
  spatial_dims = model_spatial_dims(model)
  three_d = spatial_dims == 3
  return dataclasses.replace(model, spatial_dims=spatial_dims,
                             z_pools=model.z_pools if three_d else 0,
                             xy_conv_levels=model.xy_conv_levels if three_d else 0)


def differing_model_fields(saved, requested):
  """Names of ModelConfig fields that differ, as 'field: saved -> requested'."""
  saved, requested = _effective_model(saved), _effective_model(requested)
  return [
      f'{field.name}: {getattr(saved, field.name)!r} -> {getattr(requested, field.name)!r}'
      for field in dataclasses.fields(ModelConfig)
      if getattr(saved, field.name) != getattr(requested, field.name)
  ]
