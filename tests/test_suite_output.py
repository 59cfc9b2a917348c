"""What README's test command shows a user at its end (tests/conftest.py's
hooks): the summary last, not TensorFlow's start-up lines, and a line for each
test file that skipped itself for want of something the host lacks."""

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT


def _pytest(arguments, environment=None):
  """Output (stdout and stderr, as a terminal shows them) of pytest run as README runs it."""
  result = subprocess.run([sys.executable, '-m', 'pytest', '-q', *arguments], cwd=REPO_ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600, env=environment)
  return result.stdout


@pytest.mark.slow
def test_readmes_test_command_ends_on_pytests_summary_not_tensorflows_start_up():
  output = _pytest(['-n', '2', '--dist', 'loadfile', 'tests/test_run_dir.py'])
  lines = [line for line in output.splitlines() if line.strip()]
  assert re.fullmatch(r'\d+ passed.* in [\d.]+s( \(.*\))?', lines[-1]), output[-2000:]
  assert 'oneDNN custom operations are on' not in output, output[-2000:]


@pytest.mark.slow
def test_a_file_skipped_for_want_of_an_x_server_is_named_with_what_to_do():
  environment = {name: value for name, value in os.environ.items() if name != 'DISPLAY'}
  output = _pytest(['-p', 'no:xvfb', 'tests/napari/test_napari_plugin.py'], environment)
  assert re.search(r'^not run here: tests/napari/test_napari_plugin\.py \(1 skipped\): the '
                   r'napari plugin tests need (an X server: apt-get install xvfb|the napari '
                   r'extra)', output, re.MULTILINE), output[-2000:]
  lines = [line for line in output.splitlines() if line.strip()]
  assert re.fullmatch(r'1 skipped.* in [\d.]+s( \(.*\))?', lines[-1]), output[-2000:]
