"""Which commit a result came from, and whether that commit reproduces it.

A result is labelled with the short commit of the checkout that made it, plus
DIRTY_SUFFIX when the checkout had uncommitted changes: no commit holds the code
that made such a result, so the results page marks it and the grid refuses to
make one unless told to (python -m bench.results.grid --allow_dirty). A
measurement records its stamp (commit label, host, date) when it trains or
measures, never when its results are read back. No TensorFlow here until the
host is asked for: the page's tests import it.
"""

import datetime
import re
import subprocess

DIRTY_SUFFIX = '+changes'
# What the results grid itself writes: the page and its pictures, curves and
# results.json are results, not code that makes them. Counting them made every
# run after the grid's first row read as "+changes" (issue 29's regeneration).
# bench/correlated_peers.py's JSON is such a result too: each peer it adds would
# otherwise make the next read as "+changes".
RESULT_PATHS = ('docs/results.md', 'docs/results/', 'docs/bench/correlated_peers.json')


def changed_files(repo_root):
  """The paths `git status` lists in repo_root: changed, staged or untracked
  (ignored files such as runs/ are not listed), except the grid's own outputs
  (RESULT_PATHS). An untracked module counts: the code that imports it is at
  no commit either."""
  status = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=all'],
                          cwd=repo_root, capture_output=True, text=True, check=True).stdout
  paths = [line[3:] for line in status.splitlines() if line.strip()]
  return [path for path in paths
          if not any(path == result or (result.endswith('/') and path.startswith(result))
                     for result in RESULT_PATHS)]


def commit(repo_root):
  """'abc1234' for a clean checkout of repo_root, 'abc1234+changes' otherwise."""
  head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=repo_root,
                        capture_output=True, text=True, check=True).stdout.strip()
  return head + (DIRTY_SUFFIX if changed_files(repo_root) else '')


def is_reproducible(label):
  """True when label names a commit alone (hex), not a changed tree or nothing."""
  return bool(re.fullmatch(r'[0-9a-f]{7,40}', label or ''))


def remake_note(label, command):
  """'' when label names a commit; else the sentence a page puts beside the figures it
  labels: why no commit reproduces them, and the command that remakes them."""
  if is_reproducible(label):
    return ''
  why = (f'they were measured on a checkout with uncommitted changes ({label})'
         if (label or '').endswith(DIRTY_SUFFIX) else 'no commit was recorded when they were '
         'measured')
  return f'Not reproducible from a commit: {why}; `{command}` remakes them from a clean checkout.'


def require_clean_tree(repo_root, allow_dirty):
  """Raises ValueError naming the changed files when repo_root has uncommitted
  changes and allow_dirty is False: results made there could not be reproduced.

  Returns:
    The commit label results made now should carry (commit(repo_root)).
  """
  changed = changed_files(repo_root)
  if changed and not allow_dirty:
    shown = ', '.join(changed[:10]) + (f' and {len(changed) - 10} more' if len(changed) > 10
                                       else '')
    raise ValueError(
        f'the checkout has uncommitted changes ({shown}): no commit would reproduce the '
        'results. Commit or stash them first, or pass --allow_dirty to record the results as '
        f'"<commit>{DIRTY_SUFFIX}" (the results page marks them as not reproducible).')
  return commit(repo_root)


def is_ancestor(repo_root, ancestor, label):
  """Whether commit `ancestor` is commit label's (a commit() label, '+changes' or not) or
  one before it, in repo_root's history; False where either is unknown there."""
  commit_of_label = label[:-len(DIRTY_SUFFIX)] if label.endswith(DIRTY_SUFFIX) else label
  return subprocess.run(['git', '-C', repo_root, 'merge-base', '--is-ancestor', ancestor,
                         commit_of_label], capture_output=True).returncode == 0


def stamp(repo_root):
  """{'commit', 'machine', 'date'} of a measurement made now in repo_root: its commit
  label (commit()), its host (machine_description()) and the day (ISO). Take it when the
  training or measuring starts."""
  return {'commit': commit(repo_root), 'machine': machine_description(),
          'date': datetime.date.today().isoformat()}


def machine_description():
  """'AMD EPYC 7B13, 2 cores, AVX512-BF16, TensorFlow 2.21.0' or similar ('AMX,
  AVX512-BF16' where the CPU has AMX tiles): the host
  a measurement ran on (bfloat16 numerics and speed differ between hosts)."""
  # pylint: disable=g-import-not-at-top  (this module stays free of TensorFlow until asked)
  import os
  import platform
  import tensorflow as tf
  from n2n import hardware
  model = platform.processor() or 'unknown CPU'
  cpu_flags = set()
  try:
    with open('/proc/cpuinfo') as cpuinfo:
      lines = cpuinfo.read().splitlines()
    model = next(line.split(':', 1)[1].strip() for line in lines
                 if line.startswith('model name'))
    cpu_flags = set(next((line.split(':', 1)[1].split() for line in lines
                          if line.startswith('flags')), []))
  except (OSError, StopIteration):
    pass
  bf16 = 'AVX512-BF16' if hardware.cpu_supports_bfloat16() else 'no AVX512-BF16'
  # AMX's tile units run bfloat16 matrix products several times faster than AVX512-BF16.
  if 'amx_tile' in cpu_flags:
    bf16 = f'AMX, {bf16}'
  return f'{model}, {os.cpu_count()} cores, {bf16}, TensorFlow {tf.__version__}'
