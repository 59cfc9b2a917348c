"""The training methods by name: the one place that lists them.

A new method is a module of this package defining METHOD (a base.Method), one
line below, its pipeline (n2n/pipelines/ID.py defining PIPELINE, found by the
method's name), its tests, a config file and a README line. Its settings
(METHOD.settings_class) become a section of the method's configuration and
their flags by themselves (n2n/config/method.py).
"""

from n2n.methods import blind_spot
from n2n.methods import neighbor2neighbor
from n2n.methods import neighbouring_frames
from n2n.methods import pairs
from n2n.methods import recorrupted

_METHODS = {method.name: method for method in (pairs.METHOD, neighbor2neighbor.METHOD,
                                               blind_spot.METHOD, recorrupted.METHOD,
                                               neighbouring_frames.METHOD)}
# The methods, in the registry's order.
METHODS = tuple(_METHODS.values())
NAMES = tuple(_METHODS)
SINGLE_IMAGE_NAMES = tuple(name for name, method in _METHODS.items() if method.single_image)


def get(name):
  """The method called name; ValueError naming --method for an unknown one."""
  try:
    return _METHODS[name]
  except KeyError:
    raise ValueError(f'--method={name!r} is not one of {", ".join(NAMES)}') from None


def help_text():
  """--method's help: each method's summary, in the registry's order."""
  return ' '.join(f'{method.name}: {method.summary}' for method in _METHODS.values())
