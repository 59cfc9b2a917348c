"""The synthetic noise a run adds to clean images, or none for real captures."""

import dataclasses

from n2n.corruptions import catalog
from n2n.settings import check_settings
from n2n.settings import format_value
from n2n.settings import setting

NO_NOISE = catalog.NO_NOISE
NOISES = catalog.NAMES + (NO_NOISE,)


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
