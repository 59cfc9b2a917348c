"""The widgets' calls run in a spawned child process (n2n/napari/running.py),
also from a user's script that opens napari without
`if __name__ == '__main__':`, as napari's own examples do: the child must not
run that script again (issue 62). No viewer: no X server needed."""

import subprocess
import sys

import pytest

pytest.importorskip('napari', reason='the napari extra: pip install -r requirements-napari.txt')

# A script with no main guard that starts a child as the Diagnose widget does.
_UNGUARDED_SCRIPT = """
import threading
import numpy as np
from n2n.napari import calls
from n2n.napari import running
image = np.random.default_rng(0).normal(0.5, 0.1, (96, 96)).astype(np.float32)
result = running.in_child(calls.diagnose, ([image], None, 0.0), {}, ('stop', 'progress'),
                          threading.Event(), lambda *values: None)
print('diagnosed', result.kind, round(result.noise_level, 2))
"""


@pytest.mark.slow
def test_a_call_from_a_script_without_a_main_guard_runs_once_in_its_child(tmp_path):
  script = tmp_path / 'open_napari.py'
  script.write_text(_UNGUARDED_SCRIPT)
  result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.splitlines()[-1] == 'diagnosed independent 0.1', result.stdout
  assert 'bootstrapping phase' not in result.stderr
