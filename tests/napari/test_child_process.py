"""The widgets' calls run in a spawned child process (n2n/napari/child.py),
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
from n2n.napari import child
image = np.random.default_rng(0).normal(0.5, 0.1, (96, 96)).astype(np.float32)
result = child.in_child(calls.diagnose, ([image], None, 0.0), {}, ('stop', 'progress'),
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


@pytest.mark.slow
def test_a_kept_child_answers_calls_in_one_process_until_an_error_ends_it():
  # pylint: disable=g-import-not-at-top  (after the skip above)
  import threading
  import numpy as np
  from n2n.napari import calls
  from n2n.napari import child
  image = np.random.default_rng(0).normal(0.5, 0.1, (96, 96)).astype(np.float32)
  kept, names = child.Child(), ('stop', 'progress')
  call = lambda *args: kept.call(calls.diagnose, args, {}, names, threading.Event(),
                                 lambda *values: None)
  try:
    first = call([image], None, 0.0)
    pid = kept.pid
    second = call([image], None, 0.0)
    assert pid is not None and kept.pid == pid
    assert (first.kind, first.noise_level) == (second.kind, second.noise_level)
    with pytest.raises(ValueError, match=r'images\[0\] is float64 of shape \(4,\)'):
      call([np.zeros(4)], None, 0.0)
    assert kept.pid is None  # the error ended it; the next call starts another
    assert call([image], None, 0.0).kind == first.kind and kept.pid not in (None, pid)
  finally:
    kept.close(wait=True)
  assert kept.pid is None
