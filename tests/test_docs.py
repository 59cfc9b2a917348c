"""The README and the guides say what the code and CI do: the training flag table
(docs/training.md) is what n2n/config.py declares; CI runs the README's test command."""

import os
import re

from n2n import config as config_lib
from n2n import settings as settings_lib
from tests.conftest import REPO_ROOT


def _training_flag_rows():
  with open(os.path.join(REPO_ROOT, 'docs', 'training.md')) as guide:
    text = guide.read()
  table = text.split('## Training flags', 1)[1].split('\n\n', 2)[1]
  rows = {}
  for line in table.splitlines()[2:]:
    names, meaning = line.strip('|').split('|', 1)
    rows[tuple(re.findall(r'--(\w+)', names))] = meaning
  return rows


def test_the_training_flag_table_lists_every_setting_and_nothing_else():
  listed = {name for names in _training_flag_rows() for name in names}
  declared = {spec.flag for spec in settings_lib.settings_of(config_lib.TrainConfig)}
  assert listed == declared, (sorted(declared - listed), sorted(listed - declared))


def test_defaults_the_table_states_are_the_declared_ones():
  declared = {spec.flag: spec.default for spec in settings_lib.settings_of(config_lib.TrainConfig)}
  stated = 0
  for names, meaning in _training_flag_rows().items():
    for default in re.findall(r'default (-?[\d.]+)', meaning):
      assert len(names) == 1, names  # a number stated for one flag only
      assert float(default) == float(declared[names[0]]), (names, default)
      stated += 1
    if '0 (default)' in meaning:
      assert declared[names[0]] == 0, names
      stated += 1
  assert stated >= 3


def test_ci_runs_exactly_the_readmes_two_set_up_and_test_commands():
  """The README's first block: command 1 sets up, command 2 runs the tests; .ci/run must
  run command 2 as written (CI's result is then the result a reader gets)."""
  readme = open(os.path.join(REPO_ROOT, 'README.md')).read()
  block = readme.split('```bash\n', 1)[1].split('```', 1)[0]
  commands = [line for line in block.splitlines() if line and not line.startswith('#')]
  assert len(commands) == 2 and commands[0].startswith('python3 -m venv .venv')
  ci_lines = open(os.path.join(REPO_ROOT, '.ci', 'run')).read().splitlines()
  assert commands[1] in ci_lines, commands[1]
