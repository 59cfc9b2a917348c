"""The Train widget's More settings: train.py's settings as fields made from
their declarations (n2n/config/ and each method's settings, through
n2n/settings.py: type, range, choices, help), and a line for any other flag
as name=value, read against the same declarations.

No setting is described here: COMMON names the ones a user of the widget
changes most, every method's own settings come from its declaration (but for
the inference-time ones, which the line takes), and what a field accepts is
what the flag accepts.
"""

import difflib
import math

from magicgui import widgets

from n2n import config as config_lib
from n2n import config_flags
from n2n import settings as settings_lib
from n2n.methods import registry

# Beyond the Train widget's own fields, the settings it shows as fields for every method.
COMMON = ('network_width', 'learning_rate', 'seed', 'eval_every', 'precision',
          'normalization', 'crop_depth')
# A method's settings for inference schemes (how a trained run denoises): the line takes them.
_INFERENCE = ('inference_stride', 'inference_orientations', 'refinement_passes')
SPECS = {spec.flag: spec for spec in settings_lib.settings_of(config_lib.TrainConfig)}
_BOOLEANS = {'true': True, '1': True, 'yes': True, 'false': False, '0': False, 'no': False}
# The largest value an int field takes where its declaration sets no maximum.
_MAX_INT = 2**31 - 1


def method_flags(name):
  """The flags of method name's own settings that are fields: its declared settings but
  the inference-time ones, in declaration order."""
  method = registry.get(name)
  if method.settings_class is None:
    return ()
  return tuple(spec.flag for spec in settings_lib.settings_of(method.settings_class,
                                                                 method.flag_prefix)
               if spec.flag[len(method.flag_prefix):] not in _INFERENCE)


def _float_step(spec):
  """A float field's step: a tenth of its default's order of magnitude (1e-5 for 0)."""
  if not spec.default:
    return 1e-5
  return 10.0 ** (math.floor(math.log10(abs(spec.default))) - 1)


def field(spec, label):
  """A magicgui field for a Setting, at its default, with the flag's help as tooltip."""
  options = dict(label=label, tooltip=f'--{spec.flag}: {config_flags.help_of(spec)}')
  if spec.choices is not None:
    return widgets.ComboBox(choices=spec.choices, value=spec.default, **options)
  if spec.field_type is bool:
    return widgets.CheckBox(value=spec.default, **options)
  if spec.field_type is int:
    return widgets.SpinBox(value=spec.default, step=spec.multiple_of or 1,
                           min=-_MAX_INT if spec.minimum is None else int(spec.minimum),
                           max=_MAX_INT if spec.maximum is None else int(spec.maximum),
                           **options)
  if spec.field_type is float:
    return widgets.FloatSpinBox(value=spec.default, step=_float_step(spec),
                                min=-1e9 if spec.minimum is None else spec.minimum,
                                max=1e9 if spec.maximum is None else spec.maximum, **options)
  return widgets.LineEdit(value=settings_lib.format_value(spec.default).strip("'"), **options)


def parse(flag, text):
  """The value of train.py's flag flag written as text, checked against its declaration.

  Raises:
    ValueError: no such flag (naming the nearest), or a value it does not take, naming it.
  """
  spec = SPECS.get(flag)
  if spec is None:
    near = difflib.get_close_matches(flag, SPECS, n=1)
    raise ValueError(f'{flag} is not a train.py flag'
                     + (f': did you mean {near[0]}?' if near else ''))
  kind = spec.item_type or spec.field_type
  try:
    if spec.item_type is not None:
      value = config_flags.parse_number_list(flag, text, spec.item_type)
    elif kind is bool:
      value = _BOOLEANS[text.lower()]
    else:
      value = kind(text)
  except KeyError:
    raise ValueError(f'--{flag}={text!r} is not true or false') from None
  except ValueError as error:
    if spec.item_type is not None:
      raise
    raise ValueError(f'--{flag}={text!r} is not {_KIND_NAMES[kind]}') from error
  settings_lib.check_setting(spec, value)
  return value


_KIND_NAMES = {int: 'an integer', float: 'a number', str: 'text'}


def _items(text):
  """{name: value as written} of a line of name=value items apart by spaces.

  Raises:
    ValueError: an item without '='.
  """
  items = {}
  for item in text.split():
    name, equals, value = item.lstrip('-').partition('=')
    if not equals or not name:
      raise ValueError(f"{item!r}: write name=value, as train.py's flags (e.g. "
                       'rampdown_fraction=0.5)')
    items[name] = value
  return items


def parse_line(text, taken=()):
  """{flag: value} of a line of name=value items apart by spaces, each checked against
  its declaration (parse).

  Args:
    taken: flags the widget sets in fields of its own: refused here, naming the field.

  Raises:
    ValueError: an item without '=', a flag that is no flag or is taken, or a bad value.
  """
  values = {}
  for name, value in _items(text).items():
    if name in taken:
      raise ValueError(f'--{name} has a field of its own: set it there')
    values[name] = parse(name, value)
  return values


class MoreSettings(widgets.Container):
  """COMMON's fields, then the chosen method's own (show_method), then Other flags: a
  line of name=value for any other train.py flag.

  Attributes:
    fields: {flag: field} for COMMON and every method's own settings (method_flags).
    line: the Other flags line.
  """

  def __init__(self):
    super().__init__(labels=True)
    self._method_flags = {name: method_flags(name) for name in registry.NAMES}
    self.fields = {flag: field(SPECS[flag], flag) for flag in COMMON}
    for name, flags in self._method_flags.items():
      prefix = registry.get(name).flag_prefix
      # Labelled without the method's prefix: the rows show the chosen method's only.
      self.fields.update({flag: field(SPECS[flag], flag[len(prefix):]) for flag in flags})
    self.line = widgets.LineEdit(label='Other flags', tooltip=(
        "Any other train.py flag as name=value, apart by spaces (rampdown_fraction=0.5 "
        'noise_range=0,50), checked as train.py checks it'))
    self.extend(list(self.fields.values()) + [self.line])
    self.margins = (0, 0, 0, 0)  # its rows in line with the Train widget's own
    self._shown = COMMON
    self.show_method(registry.NAMES[0])

  def show_method(self, name):
    """Shows COMMON's fields and method name's own; hides the other methods'."""
    self._shown = COMMON + self._method_flags[name]
    for flag, setting_field in self.fields.items():
      setting_field.visible = flag in self._shown

  def set_values(self, values):
    """Sets {flag: value}: in its field where it has one, else added to the line."""
    rest = {}
    for flag, value in values.items():
      if flag in self.fields:
        self.fields[flag].value = value
      else:
        rest[flag] = value
    if rest:
      written = {flag: settings_lib.format_value(value).strip("'") for flag, value in rest.items()}
      items = {**_items(self.line.value), **written}
      self.line.value = ' '.join(f'{flag}={value}' for flag, value in items.items())

  def values(self, taken=()):
    """{flag: value} of the shown fields that differ from their declared default, and of
    the line (parse_line; taken: the flags of the widget's own fields).

    Raises:
      ValueError: from parse_line, naming the flag.
    """
    values = {flag: self.fields[flag].value for flag in self._shown
              if self.fields[flag].value != SPECS[flag].default}
    for flag, value in values.items():  # a field's own range may be wider (no maximum)
      settings_lib.check_setting(SPECS[flag], value)
    values.update(parse_line(self.line.value, tuple(taken) + self._shown))
    return values
