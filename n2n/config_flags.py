"""absl flags derived from the config declarations: the only module that reads FLAGS.

Entry points call define_flags(SomeConfig) at start-up and
config_from_flags(SomeConfig, FLAGS) in main; names, defaults, help and
checks all come from the declarations in n2n/config.py, so nothing here is
per-setting.
"""

from absl import flags

from n2n import settings

_DEFINE = {bool: flags.DEFINE_boolean, int: flags.DEFINE_integer, float: flags.DEFINE_float,
           str: flags.DEFINE_string}


def parse_number_list(flag_name, text, item_type=float):
  """'0,50' -> (0.0, 50.0); ValueError naming the flag for anything else."""
  try:
    return tuple(item_type(part) for part in text.split(',') if part.strip())
  except ValueError:
    kind = 'integers' if item_type is int else 'numbers'
    raise ValueError(f'--{flag_name}={text!r} is not a comma-separated list of {kind}') from None


def help_of(spec):
  """A setting's flag help: its declared help, then its choices."""
  text = spec.help
  if spec.choices:
    text += f' One of: {settings.format_choices(spec.choices)}.'
  return text


def define_flags(config_class, flag_values=flags.FLAGS):
  """Defines one absl flag per setting of config_class (nested sections included)."""
  for spec in settings.settings_of(config_class):
    if spec.item_type is not None:
      default = ','.join(str(item) for item in spec.default)
      flags.DEFINE_string(spec.flag, default, help_of(spec), flag_values=flag_values)
    else:
      _DEFINE[spec.field_type](spec.flag, spec.default, help_of(spec), flag_values=flag_values)


def config_from_flags(config_class, flag_values=flags.FLAGS):
  """Builds config_class from parsed flags.

  Raises:
    ValueError: a required flag is empty or a value is invalid (names the flag).
  """
  values = {}
  for spec in settings.settings_of(config_class):
    value = flag_values[spec.flag].value
    if spec.required and not value:
      raise ValueError(f'--{spec.flag} is required')
    if spec.item_type is not None:
      value = parse_number_list(spec.flag, value, spec.item_type)
    target = values
    for name in spec.path[:-1]:
      target = target.setdefault(name, {})
    target[spec.path[-1]] = value
  return settings.from_dict(config_class, values)
