"""The machinery behind n2n/config/: a setting's declaration, its checks, JSON.

A setting is a dataclass field made by setting(...), whose metadata carries
what flags and checks need (help, choices, bounds); nested configs are
section(...) fields. No TensorFlow import.
"""

import dataclasses
import json
import typing


def setting(default, help_text, *, choices=None, minimum=None, maximum=None, multiple_of=None,
            required=False, flag=None):
  """A config field with what the flags and checks need to know about it.

  Args:
    default: the default value (tuples for list settings: () means "derived").
    help_text: the flag's help; state the unit and range.
    choices: allowed values (strings), listed in the help.
    minimum, maximum: inclusive bounds for numbers.
    multiple_of: numbers must be a positive multiple of this.
    required: the entry point refuses an empty value.
    flag: the flag's name where it is not the section's prefix + the field's
      name (config.method.name is --method).
  """
  return dataclasses.field(default=default, metadata={
      'help': help_text, 'choices': choices, 'minimum': minimum, 'maximum': maximum,
      'multiple_of': multiple_of, 'required': required, 'flag': flag})


def derived(default):
  """A field no flag sets: the run fills it in (e.g. from its data's manifest)."""
  return dataclasses.field(default=default, metadata={})


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


@dataclasses.dataclass(frozen=True)
class Leaf:
  """Any non-section field of a (nested) config: where it lives now, and the
  places earlier config.json layouts held it (tried in order)."""
  path: tuple
  legacy_paths: tuple


def settings_of(config_class, prefix='', path=()):
  """Every Setting of a config class, nested sections flattened, in declaration order."""
  found = []
  for field in dataclasses.fields(config_class):
    if 'section' in field.metadata:
      found += settings_of(field.metadata['section'], prefix + field.metadata['flag_prefix'],
                           path + (field.name,))
    elif 'help' in field.metadata:
      meta = field.metadata
      found.append(Setting(meta['flag'] or prefix + field.name, path + (field.name,), field.type,
                           field.default, meta['help'], meta['choices'], meta['minimum'],
                           meta['maximum'], meta['multiple_of'], meta['required']))
  return found


def leaves_of(config_class, earlier_places=None, prefix='', path=(), moved=()):
  """Every non-section field of a config class as a Leaf, nested sections flattened.

  A field's earlier places: those of the sections above it (earlier_places:
  path -> earlier places, n2n/config/legacy.py), with the path below them;
  its own entry in earlier_places; and its flag name at the top level (flags
  never change, and config.json was flat but for its sections before).
  """
  earlier_places = earlier_places or {}
  found = []
  for field in dataclasses.fields(config_class):
    here = path + (field.name,)
    places = tuple(place + (field.name,) for place in moved) + earlier_places.get(here, ())
    meta = field.metadata
    if 'section' in meta:
      found += leaves_of(meta['section'], earlier_places, prefix + meta['flag_prefix'], here,
                         places)
      continue
    if 'help' in meta:
      places += ((meta['flag'] or prefix + field.name,),)
    found.append(Leaf(here, tuple(place for place in places if place != here)))
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


def value_at(config, path):
  """The value at path (attribute names from the top config down) of a config."""
  for name in path:
    config = getattr(config, name)
  return config


def check_settings(config):
  """Checks every declared field of a (nested) config object."""
  for spec in settings_of(type(config)):
    check_setting(spec, value_at(config, spec.path))


def from_dict(config_class, values, earlier_places=None):
  """Builds a config from a dict such as a parsed config.json.

  Lists become tuples, nested sections nested configs; keys this version
  does not know are ignored, so an older or newer config.json still reads. A
  field missing from its place is looked for where earlier layouts held it
  (leaves_of with earlier_places): config.json written before the sections
  kept every setting at the top level under its flag name.
  """
  nested = {}
  for leaf in leaves_of(config_class, earlier_places):
    for place in (leaf.path,) + leaf.legacy_paths:
      found, value = _lookup(values, place)
      if found:
        _assign(nested, leaf.path, value)
        break
  return _nested_from_dict(config_class, nested)


def _lookup(values, place):
  """(True, value) at place (keys down nested dicts), else (False, None)."""
  for name in place:
    if not isinstance(values, dict) or name not in values:
      return False, None
    values = values[name]
  return True, values


def _assign(nested, place, value):
  for name in place[:-1]:
    nested = nested.setdefault(name, {})
  nested[place[-1]] = value


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
  specs = flag_specs(config_class, values)
  nested = {}
  for flag, value in values.items():
    _assign(nested, specs[flag].path, value)
  return _nested_from_dict(config_class, nested)


def flag_specs(config_class, names):
  """{flag: Setting} of config_class; ValueError for a name that is no flag of it."""
  specs = {spec.flag: spec for spec in settings_of(config_class)}
  unknown = sorted(set(names) - set(specs))
  if unknown:
    raise ValueError(f'{", ".join(unknown)}: not a setting of {config_class.__name__}')
  return specs


def with_flag_values(config, values):
  """config with the settings named by their flags ({flag: value}) replaced,
  built (and checked) once through from_dict."""
  specs = flag_specs(type(config), values)
  nested = dataclasses.asdict(config)
  for flag, value in values.items():
    _assign(nested, specs[flag].path, value)
  return from_dict(type(config), nested)


def to_json(config):
  """A config object as a JSON string (tuples become lists)."""
  return json.dumps(dataclasses.asdict(config), indent=2, sort_keys=True)
