"""The machinery behind n2n/config.py: a setting's declaration, its checks, JSON.

A setting is a dataclass field made by setting(...), whose metadata carries
what flags and checks need (help, choices, bounds); nested configs are
section(...) fields. No TensorFlow import.
"""

import dataclasses
import json
import typing


def setting(default, help_text, *, choices=None, minimum=None, maximum=None, multiple_of=None,
            required=False):
  """A config field with what the flags and checks need to know about it.

  Args:
    default: the default value (tuples for list settings: () means "derived").
    help_text: the flag's help; state the unit and range.
    choices: allowed values (strings), listed in the help.
    minimum, maximum: inclusive bounds for numbers.
    multiple_of: numbers must be a positive multiple of this.
    required: the entry point refuses an empty value.
  """
  return dataclasses.field(default=default, metadata={
      'help': help_text, 'choices': choices, 'minimum': minimum, 'maximum': maximum,
      'multiple_of': multiple_of, 'required': required})


def section(config_class, flag_prefix):
  """A nested config whose fields become flags named flag_prefix + field name."""
  return dataclasses.field(default_factory=config_class,
                           metadata={'section': config_class, 'flag_prefix': flag_prefix})


@dataclasses.dataclass(frozen=True)
class Setting:
  """One flag derived from a field: where it lives and what it accepts."""
  flag: str
  path: tuple  # attribute names from the top config down to the field
  field_type: object
  default: object
  help: str
  choices: tuple
  minimum: float
  maximum: float
  multiple_of: int
  required: bool

  @property
  def item_type(self):
    """For tuple settings, the element type (float or int); else None."""
    if typing.get_origin(self.field_type) is tuple:
      return typing.get_args(self.field_type)[0]
    return None


def settings_of(config_class, prefix='', path=()):
  """Every Setting of a config class, nested sections flattened, in declaration order."""
  found = []
  for field in dataclasses.fields(config_class):
    if 'section' in field.metadata:
      found += settings_of(field.metadata['section'], prefix + field.metadata['flag_prefix'],
                           path + (field.name,))
    elif 'help' in field.metadata:
      meta = field.metadata
      found.append(Setting(prefix + field.name, path + (field.name,), field.type, field.default,
                           meta['help'], meta['choices'], meta['minimum'], meta['maximum'],
                           meta['multiple_of'], meta['required']))
  return found


def format_value(value):
  """A value as a flag would spell it: tuples as '0,50', strings quoted."""
  if isinstance(value, tuple):
    return ','.join(f'{item:g}' if isinstance(item, float) else str(item) for item in value)
  return f'{value!r}' if isinstance(value, str) else f'{value}'


def format_choices(choices):
  """'a, b, c', with an empty choice shown as ''."""
  return ', '.join(choice if choice else "''" for choice in choices)


def check_setting(spec, value):
  """Checks one value against its declaration; ValueError naming the flag."""
  if spec.choices is not None and value not in spec.choices:
    raise ValueError(f'--{spec.flag}={value!r} is not one of {format_choices(spec.choices)}')
  if spec.multiple_of and (value <= 0 or value % spec.multiple_of):
    raise ValueError(f'--{spec.flag}={value} must be a positive multiple of {spec.multiple_of}')
  if spec.minimum is not None and value < spec.minimum:
    bound = 'positive' if spec.minimum == 1 and spec.field_type is int else f'>= {spec.minimum:g}'
    raise ValueError(f'--{spec.flag}={format_value(value)} must be {bound}')
  if spec.maximum is not None and value > spec.maximum:
    raise ValueError(f'--{spec.flag}={format_value(value)} must be <= {spec.maximum:g}')


def check_settings(config):
  """Checks every declared field of a (nested) config object."""
  for spec in settings_of(type(config)):
    value = config
    for name in spec.path:
      value = getattr(value, name)
    check_setting(spec, value)


def from_dict(config_class, values):
  """Builds a config from a dict such as a parsed config.json.

  Lists become tuples, nested sections nested configs; keys this version
  does not know are ignored, so an older or newer config.json still reads. A
  setting missing from its section is read from its flag name at the top
  level: flags never change, so that is where a config.json written before the
  setting moved into a section holds it.
  """
  values = dict(values)
  for spec in settings_of(config_class):
    if len(spec.path) > 1 and spec.flag in values:
      target = values
      for name in spec.path[:-1]:
        target[name] = target = dict(target.get(name) or {})
      target.setdefault(spec.path[-1], values[spec.flag])
  return _nested_from_dict(config_class, values)


def _nested_from_dict(config_class, values):
  kwargs = {}
  for field in dataclasses.fields(config_class):
    if field.name not in values:
      continue
    value = values[field.name]
    if 'section' in field.metadata:
      value = _nested_from_dict(field.metadata['section'], value)
    elif isinstance(value, list):
      value = tuple(value)
    kwargs[field.name] = value
  return config_class(**kwargs)


def from_flag_values(config_class, values):
  """Builds a config from {flag name: value}, as the flags of an entry point
  name them (nested settings by their flag names, e.g. blind_spot_fraction).

  Raises:
    ValueError: a name that is no setting of config_class.
  """
  specs = {spec.flag: spec for spec in settings_of(config_class)}
  unknown = sorted(set(values) - set(specs))
  if unknown:
    raise ValueError(f'{", ".join(unknown)}: not a setting of {config_class.__name__}')
  nested = {}
  for flag, value in values.items():
    target = nested
    for name in specs[flag].path[:-1]:
      target = target.setdefault(name, {})
    target[specs[flag].path[-1]] = value
  return _nested_from_dict(config_class, nested)


def to_json(config):
  """A config object as a JSON string (tuples become lists)."""
  return json.dumps(dataclasses.asdict(config), indent=2, sort_keys=True)
