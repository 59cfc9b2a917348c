"""A NoiseProfile in words, and what to train on such noise.

Text for the terminal and the log; recommend() is the one place that turns a
diagnosis into n2n's method and flags.
"""

import dataclasses

import numpy as np

from n2n import noise_kinds
from n2n import noise_model
from n2n.diagnosis import noise_statistics
from n2n.diagnosis import shipped_advice

# Lag-1 correlation from which noise counts as spatially correlated: pooled
# over the demo photographs, the single-image estimate reads pixel-independent
# noise under 0.1 and simulated camera noise at 0.5-0.6
# (docs/bench/diagnosis_accuracy.md).
CORRELATED = 0.2
# A correlation still this high at lag MAX_LAG along one axis, and under
# LINE_OTHER_AXIS along the other, is line noise (sCMOS rows or columns)...
LINE_FAR = 0.05
LINE_OTHER_AXIS = 0.03
# ...if it also keeps this share of its lag-2 value there: a line's offset is shared
# at every lag, while correlated pixel noise decays. Through the sCMOS simulator, one
# demo photograph at a time, the 7 of 11 whose rows still read over LINE_FAR at lag 4
# keep 0.56-1.06 of lag 2 there (on the other 4 the photograph's texture hides the
# rows at lag 4 already); camera noise on one small photograph (chelsea, 6 cameras)
# read 0.085-0.113 at lag 4 along x but kept only 0.20-0.27
# (docs/bench/line_noise_rule.json).
LINE_KEPT = 0.4
CHANNEL_NAMES = {1: ('grey',), 3: ('R', 'G', 'B')}


@dataclasses.dataclass(frozen=True)
class Recommendation:
  """What to train on noise like this.

  Attributes:
    kind: 'independent', 'correlated', 'rows', 'columns' or 'rows and columns'.
    flags: train.py flags, e.g. ('--method=neighbor2neighbor',).
    lines: why, in a few lines for the user.
    stack_method: the --method for stacks (the 3D network) where the recommended
      one is 2D only; '' where it is the same.
    model: a shipped model to denoise with as is, before any training, where it
      measured best on real data of this kind (shipped_advice); '' where none.
    model_flags: denoise.py's flags beside --model for it, e.g. ('--tta',).
  """
  kind: str
  flags: tuple
  lines: tuple
  stack_method: str = ''
  model: str = ''
  model_flags: tuple = ()


def line_axis(profile):
  """'rows', 'columns' or 'rows and columns' where the noise is correlated
  along whole lines (still at the farthest lag), else None."""
  line_x, line_y = _kept_far(profile.correlation_x), _kept_far(profile.correlation_y)
  far_x, far_y = profile.correlation_x[-1], profile.correlation_y[-1]
  if line_x and line_y:
    return 'rows and columns'
  if line_x and abs(far_y) < LINE_OTHER_AXIS:
    return 'rows'
  if line_y and abs(far_x) < LINE_OTHER_AXIS:
    return 'columns'
  return None


def _kept_far(correlation):
  """Whether correlation ([MAX_LAG] at lags 1..MAX_LAG along one axis) is still above
  LINE_FAR at the farthest lag and has kept LINE_KEPT of its lag-2 value there."""
  return correlation[-1] > LINE_FAR and correlation[-1] >= LINE_KEPT * correlation[1]


def kind_of(profile):
  """'rows', 'columns', 'rows and columns', 'correlated' or 'independent'."""
  axis = line_axis(profile)
  if axis:
    return axis
  return 'correlated' if profile.correlation_lag1 >= CORRELATED else 'independent'


def pixel_types_of(dtypes):
  """frozenset of the images' numpy dtype names, from their dtypes; None when there
  were none (scenes, whose dtypes the diagnosis does not collect)."""
  return frozenset(np.dtype(dtype).name for dtype in dtypes) if dtypes else None


# The method recommended for stacks where the recommended one is 2D only.
STACK_METHOD = 'neighbor2neighbor'


def recommend(profile, pixel_types=None):
  """What n2n recommends for noise like profile's: the method and flags for its noise
  (by_noise), and where a shipped model fits such images (shipped_advice), that model as
  is, fine-tuned from it or from scratch, whichever measured best on real data.
  pixel_types: the images' numpy dtype names (pixel_types_of; None: not known)."""
  by_kind = by_noise(profile)
  measured = shipped_advice.measured_for(profile, by_kind.kind, pixel_types)
  if measured is None:
    return by_kind
  figures = measured.figures()
  as_is = (f'{shipped_advice.as_is_command(measured)}: {measured.model}, a model n2n ships '
           f'for such images, as is ({figures}).')
  if not measured.applies_to(by_kind.flags):
    # Another method than the one measured (e.g. too few flat pixels for recorruptions):
    # the model is offered, the figures say what they compare.
    return dataclasses.replace(by_kind, lines=by_kind.lines + (f'Or, without training, {as_is}',))
  lines = by_kind.lines
  flags = by_kind.flags
  if measured.trains_from_model:
    flags = shipped_advice.tune_flags(measured) + flags
    lines += (f'--init_from={measured.model}: training starts from a model n2n ships for such '
              'images and fine-tunes it on yours, which measured above training from scratch.',)
  if measured.as_is_first:
    return dataclasses.replace(by_kind, flags=flags, model=measured.model,
                               model_flags=measured.as_is_flags, lines=lines + (as_is,))
  return dataclasses.replace(by_kind, flags=flags, lines=lines + (f'Or, without training, {as_is}',))


def by_noise(profile):
  """The method and flags for noise like profile's, whatever the images show."""
  kind = kind_of(profile)
  if profile.source == 'pairs':
    return Recommendation(kind, ('--noise=none', '--method=pairs'), (
        'Two captures of each scene: train Noise2Noise on them (datasets/make_tfrecords.py '
        '--scenes, then train.py --noise=none). It needs the captures\' noise independent of '
        'each other, not from pixel to pixel, so it holds for this noise whatever its '
        'correlation.',))
  if kind == 'independent':
    return Recommendation(kind, ('--noise=none', '--method=neighbor2neighbor'), (
        f'The noise is independent from pixel to pixel (lag-1 correlation '
        f'{profile.correlation_lag1:.2f}, under {CORRELATED}): the single-image methods\' '
        'assumption holds. Neighbor2Neighbor scored best of them on the results page '
        '(--method=blind_spot is the other).',))
  length = profile.correlation_length(CORRELATED)
  where = {'rows': 'along whole rows (row noise, as from an sCMOS camera)',
           'columns': 'along whole columns (column noise)',
           'rows and columns': 'along whole rows and columns (line noise)',
           'correlated': f'over about {length - 1} pixel(s) in each direction'}[kind]
  pairs = ('Two captures of each scene, trained as Noise2Noise (--method=pairs on a --scenes '
           'dataset), need only independent captures: use them where you have them.')
  # Recorruptions were measured on colour photographs (the calibrated camera simulator);
  # grey images keep the pixel-shuffle scheme.
  if kind == 'correlated' and profile.samples >= noise_model.MIN_SAMPLES and profile.channels == 3:
    return Recommendation(kind, ('--noise=none', '--method=recorrupted'), (
        f'The noise is correlated {where}: lag-1 correlation {profile.correlation_lag1:.2f}.',
        'On one capture of each scene train Recorrupted-to-Recorrupted: the network maps the '
        'image plus noise drawn like its own (its correlation, channels and level against the '
        'signal) to the image minus that noise. train.py chooses the noise model from this '
        'diagnosis of its records (--recorrupted_noise_model, drawn a little under the level '
        'read: --recorrupted_level_scale) and the mean over the 8 flips and rotations when '
        'denoising, where no flag gives them. It is 2D only: for stacks, '
        f'--method={STACK_METHOD}.', pairs), STACK_METHOD)
  if kind == 'correlated':
    return Recommendation(kind, ('--noise=none', '--method=neighbor2neighbor',
                                 '--crop_size=128'), (
        f'The noise is correlated {where}: lag-1 correlation {profile.correlation_lag1:.2f}.',
        'On one capture of each scene train Neighbor2Neighbor through pixel-shuffle: on the '
        'sub-images of every 2nd pixel the noise is nearly independent between neighbours. '
        'train.py chooses the strides from this diagnosis of its records (it logs '
        '--neighbor2neighbor_stride=2 --neighbor2neighbor_inference_stride=2, and '
        '--neighbor2neighbor_inference_orientations=8: the mean over the 8 flips and rotations '
        'when denoising) where no flag gives them; crops must be multiples of 128.', pairs))
  return Recommendation(kind, ('--noise=none', '--method=blind_spot',
                               f'--blind_spot_line={noise_kinds.LINE_MASKS[kind]}',
                               '--blind_spot_line_span=63'), (
      f'The noise is correlated {where}: lag-1 correlation {profile.correlation_lag1:.2f}.',
      'On one capture of each scene train blind-spot with structN2V lines along the '
      f'{noise_kinds.LINE_MASKS[kind]}: the masked pixel\'s line is hidden from the network, so the noise '
      'it shares cannot be learned (train.py chooses the line from this diagnosis where no '
      'flag gives it). Noise shared by a whole line stays where the network sees the rest '
      'of that line.', pairs))


# A file's lag-1 correlation from which denoise.py warns about a model trained
# on pixel-independent noise. One file alone is less certain than a pooled
# diagnosis: on the demo photographs one file's camera noise reads 0.54-0.62,
# pixel-independent noise at sigma 25/255 up to 0.36 on pure texture (gravel)
# and more at lower noise, where texture passes for noise
# (docs/bench/diagnosis_accuracy.md).
CLEARLY_CORRELATED = 0.5


def unlike_training(file_correlation, training_correlation):
  """A warning's words when a file's noise looks clearly correlated and the
  model's training noise was not (training_correlation -1: unknown), else None."""
  if 0 <= training_correlation < CORRELATED and file_correlation >= CLEARLY_CORRELATED:
    return (f'its noise looks correlated between neighbouring pixels (lag-1 correlation '
            f'{file_correlation:.2f}) but the model was trained on pixel-independent noise '
            f'({training_correlation:.2f}): if it is (a camera\'s processed photograph, row '
            'noise), the model keeps much of it and can make the file worse. Finely textured '
            'images with little noise can read so too: diagnose.py on several files tells')
  return None


def white_level_note(white_level):
  """What 1.0 is on the scale the levels are given on: the white level, or (0)
  the data type's maximum (1.0 for floats)."""
  return f'1.0 = {white_level:g}' if white_level else "1.0 = the data type's maximum"


@dataclasses.dataclass(frozen=True)
class Diagnosis:
  """The noise of a set of images and what to train on it: what diagnose.py
  prints, as values; str() is the text it prints.

  Attributes:
    profile: the NoiseProfile (levels per signal bin and channel, correlation
      at lags 1 to MAX_LAG along x and y, the variance fit).
    images: how many images (or scenes) it was measured on.
    white_level: the value that was 1.0 (0: the data type's maximum).
    recommendation: Recommendation (kind, train.py flags, why).
  """
  profile: noise_statistics.NoiseProfile
  images: int
  white_level: float
  recommendation: Recommendation

  @classmethod
  def of(cls, profile, images, white_level=0.0, pixel_types=None):
    """The Diagnosis of a profile measured on `images` images, with n2n's recommendation
    (pixel_types: their numpy dtype names, None: not known; see recommend)."""
    return cls(profile, images, white_level, recommend(profile, pixel_types))

  @property
  def kind(self):
    """'independent', 'correlated', 'rows', 'columns' or 'rows and columns'."""
    return self.recommendation.kind

  @property
  def noise_level(self):
    """The noise's standard deviation, mean over level bins and channels, 0-1 scale."""
    return self.profile.level

  @property
  def correlation_x(self):
    """[MAX_LAG] correlation at lags 1..MAX_LAG along x (rows)."""
    return self.profile.correlation_x

  @property
  def correlation_y(self):
    """[MAX_LAG] correlation at lags 1..MAX_LAG along y (columns)."""
    return self.profile.correlation_y

  @property
  def flags(self):
    """The train.py flags recommended, e.g. ('--noise=none', '--method=neighbor2neighbor')."""
    return self.recommendation.flags

  @property
  def settings(self):
    """The recommended flags as n2n.train_config's keywords: {'noise': 'none', ...}."""
    settings = {}
    for flag in self.flags:
      name, value = flag.lstrip('-').split('=', 1)
      settings[name] = _typed(value)
    return settings

  @property
  def method(self):
    """The recommended --method."""
    return self.settings['method']

  @property
  def stack_method(self):
    """The recommended --method for stacks (the 3D network)."""
    return self.recommendation.stack_method or self.method

  @property
  def model(self):
    """The shipped model recommended as is, before any training ('' where none): see
    shipped_advice."""
    return self.recommendation.model

  def __str__(self):
    commands = [f'Recommended: python train.py {" ".join(self.flags)} ...']
    if self.model:
      commands = [f'Recommended, without training: denoise.py --model={self.model} '
                  f'{" ".join(self.recommendation.model_flags)} ...'.replace('  ', ' '),
                  f'Or train on your images: python train.py {" ".join(self.flags)} ...']
    return '\n'.join([describe(self.profile, self.images, white_level_note(self.white_level)), '',
                      *commands, *(f'  {line}' for line in self.recommendation.lines)])


def _typed(value):
  """A flag's value as train_config takes it: an int, a float, else the text."""
  for kind in (int, float):
    try:
      return kind(value)
    except ValueError:
      pass
  return value


def _channel_names(channels):
  return CHANNEL_NAMES.get(channels, tuple(f'c{index}' for index in range(channels)))


# Why the Poisson-Gaussian model does not fit a channel (NoiseProfile.fit_misses), in words.
_MISSES = {
    'falls': "its level falls with the signal, as after a camera's tone curve or noise "
             'reduction',
    'negative': 'its fit gives a negative variance at the lowest signal measured',
    'departs': "its level is over twice or under half the fit's at some signals, as after a "
               "camera's tone curve or noise reduction",
}


def _fit_lines(profile, names):
  """The variance fit per channel: its coefficients where the Poisson-Gaussian
  model describes the noise, else why not, never a negative shot coefficient."""
  fitting, missing = [], {}
  for name, (shot, read), (low, high), miss in zip(names, profile.fit, profile.fitted_variance(),
                                                    profile.fit_misses()):
    if miss:
      missing.setdefault(miss, []).append(name)
    elif shot < 0:  # a level flat within the estimate's error
      fitting.append(f'{name} no shot noise measured (variance {(low + high) / 2:.3g})')
    else:
      # A negative read term (the variance still positive over the signals measured)
      # reads as a subtraction, not as '+ -0.02'.
      fitting.append(f'{name} {shot:.3g} x signal {"-" if read < 0 else "+"} {abs(read):.3g}')
  lines = [f'  variance fit (shot x signal + read): {", ".join(fitting)}'] if fitting else []
  for miss, channels in missing.items():
    lines.append(f'  the Poisson-Gaussian model (variance = shot x signal + read) does not fit '
                 f'this noise in {", ".join(channels)}: {_MISSES[miss]}')
    if miss != 'negative' and profile.source == 'single':
      lines.append('    (in single images, texture taken for noise at some signals can read so '
                   'too)')
  return lines


def describe(profile, images, white_level_note=''):
  """The profile as a few lines of text.

  Args:
    profile: NoiseProfile.
    images: how many images or scenes it was measured on.
    white_level_note: what 1.0 is, e.g. '1.0 = 255'.
  """
  names = _channel_names(profile.channels)
  how = ('measured from two captures of each of' if profile.source == 'pairs'
         else 'estimated from the flattest patches of')
  scale = f' ({white_level_note})' if white_level_note else ''
  lines = [f'Noise {how} {images} image(s), {profile.samples / 1e6:.2f} Mpixels, '
           f'{profile.channels} channel(s); levels on a 0-1 scale{scale}:',
           '  signal  ' + ''.join(f'sigma {name:<6}' for name in names)]
  for signal, sigmas in zip(profile.signal, profile.sigma):
    lines.append(f'  {signal:6.3f}  ' + ''.join(
        '   -        ' if np.isnan(value) else f'{value:<12.4f}' for value in sigmas))
  lines += _fit_lines(profile, names)
  lags = ' '.join(f'{lag:>6d}' for lag in range(1, noise_statistics.MAX_LAG + 1))
  lines.append(f'  correlation at lag {lags}')
  lines.append('    along x (rows)  ' + ' '.join(f'{v:6.2f}' for v in profile.correlation_x))
  lines.append('    along y (cols)  ' + ' '.join(f'{v:6.2f}' for v in profile.correlation_y))
  return '\n'.join(lines)


def summary_line(profile):
  """One line: the kind of noise, its level and lag-1 correlations."""
  sigma = np.nanmean(profile.sigma)
  return (f'{kind_of(profile)} noise (sigma {sigma:.4f} on a 0-1 scale, correlation at lag 1: '
          f'x {profile.correlation_x[0]:.2f}, y {profile.correlation_y[0]:.2f}; '
          f'{"two captures" if profile.source == "pairs" else "single images"})')
