"""The training methods by name: the one place that lists them.

A new method is a module of this package defining METHOD (a base.Method), one
line below, its tests, a config file and a README line; its settings become
flags and a part of the run's method section by themselves (settings_fields).
"""

from n2n.methods import blind_spot
from n2n.methods import neighbor2neighbor
from n2n.methods import neighbouring_frames
from n2n.methods import pairs
from n2n.settings import section

_METHODS = {method.name: method for method in (pairs.METHOD, neighbor2neighbor.METHOD,
                                               blind_spot.METHOD, neighbouring_frames.METHOD)}
NAMES = tuple(_METHODS)
SINGLE_IMAGE_NAMES = tuple(name for name, method in _METHODS.items() if method.single_image)


def get(name):
  """The method called name; ValueError naming --method for an unknown one."""
  try:
    return _METHODS[name]
  except KeyError:
    raise ValueError(f'--method={name!r} is not one of {", ".join(NAMES)}') from None


def settings_fields():
  """(name, type, field) of one section per method that has settings: that
  method's settings, flags prefixed with its flag_prefix; n2n/config.py makes
  them part of the run's method section (config.method.<name>.<setting>).
  Runs written before that section held them under 'methods'."""
  return [(method.name, method.settings_class,
           section(method.settings_class, method.flag_prefix, ('methods', method.name)))
          for method in _METHODS.values() if method.settings_class is not None]
