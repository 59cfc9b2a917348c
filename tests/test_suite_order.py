"""The suite's own order (tests/conftest.py): files that hold slow tests run
first, so that under `-n 2 --dist loadfile` the many short files, not a long
one, come last, and pytest-xdist keeps that order. The hook is checked on
items made here, and the order xdist hands files out in on a suite of four
files written here, so these tests pass in any order the suite runs in (a
reordering plugin changes the session's order after the hook)."""

import dataclasses
import os
import pathlib
import subprocess
import sys

import pytest

from tests import conftest


@dataclasses.dataclass(eq=False)
class _Item:
  """What the hook reads of a pytest item: its file, its marks, and skip marks added."""
  path: pathlib.Path
  marks: tuple = ()
  added: list = dataclasses.field(default_factory=list)

  def get_closest_marker(self, name):
    return name if name in self.marks else None

  def add_marker(self, mark):
    self.added.append(mark)


class _Config:
  def __init__(self, quality, evidence=False):
    self.options = {conftest.QUALITY_OPTION: quality, conftest.EVIDENCE_OPTION: evidence}

  def getoption(self, name):
    return self.options[name]


def _items():
  fast, slow, mixed = pathlib.Path('fast.py'), pathlib.Path('slow.py'), pathlib.Path('mixed.py')
  return [_Item(fast), _Item(slow, ('slow',)), _Item(fast), _Item(mixed),
          _Item(mixed, ('slow', 'quality')), _Item(mixed), _Item(slow, ('slow', 'evidence'))]


def test_files_holding_slow_tests_come_first_each_files_tests_in_their_order():
  items = _items()
  ordered = conftest.slow_files_first(items)
  assert [item.path.name for item in ordered] == ['slow.py', 'mixed.py', 'mixed.py', 'mixed.py',
                                                  'slow.py', 'fast.py', 'fast.py']
  # A stable sort: each file's items keep the order they were collected in.
  for name in ('slow.py', 'mixed.py', 'fast.py'):
    assert ([items.index(item) for item in ordered if item.path.name == name]
            == sorted(items.index(item) for item in items if item.path.name == name))


def test_the_collection_hook_orders_the_items_and_skips_the_optional_tiers_unless_asked():
  for quality, evidence in ((False, False), (True, False), (False, True), (True, True)):
    items = _items()
    conftest.pytest_collection_modifyitems(_Config(quality, evidence), items)
    assert [(item.path.name, item.marks) for item in items] == [
        ('slow.py', ('slow',)), ('mixed.py', ()), ('mixed.py', ('slow', 'quality')),
        ('mixed.py', ()), ('slow.py', ('slow', 'evidence')), ('fast.py', ()), ('fast.py', ())]
    skipped = {item.marks[-1]: item.added[0].kwargs['reason'] for item in items if item.added}
    assert set(skipped) == {tier for tier, asked in (('quality', quality),
                                                     ('evidence', evidence)) if not asked}
    for tier, reason in skipped.items():
      assert reason == f'a {tier} test: run with --{tier}'


# A suite of two files of one slow test each and two of six quick tests: xdist's
# default (--loadscope-reorder) hands out the files with the most tests first.
_SYNTHETIC_CONFTEST = """
from tests.conftest import pytest_addoption, pytest_collection_modifyitems, pytest_configure
"""
_SYNTHETIC_TEST = """
import os
import time
import pytest

@pytest.mark.parametrize('case', range({count}))
{mark}
def test_case(case):
  with open(os.environ['ORDER_LOG'], 'a') as log:
    log.write(os.environ['PYTEST_XDIST_WORKER'] + ' ' + os.path.basename(__file__) + '\\n')
  time.sleep(0.2)
"""


@pytest.mark.slow
def test_pytest_xdist_hands_the_files_of_slow_tests_out_first(tmp_path):
  suite = tmp_path / 'suite'
  suite.mkdir()
  (suite / 'conftest.py').write_text(_SYNTHETIC_CONFTEST)
  for name, count, mark in (('test_a_quick.py', 6, ''), ('test_b_quick.py', 6, ''),
                            ('test_y_slow.py', 1, '@pytest.mark.slow'),
                            ('test_z_slow.py', 1, '@pytest.mark.slow')):
    (suite / name).write_text(_SYNTHETIC_TEST.format(count=count, mark=mark))
  log = tmp_path / 'order.log'
  result = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-n', '2', '--dist',
                           'loadfile', '-p', 'no:cacheprovider', str(suite)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, ORDER_LOG=str(log)))
  assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
  first = {}
  for line in log.read_text().splitlines():
    worker, name = line.split()
    first.setdefault(worker, name)
  # Each worker's first file is one of the slow ones: the order the hook gave, kept.
  assert sorted(first.values()) == ['test_y_slow.py', 'test_z_slow.py'], log.read_text()


def test_quality_tests_are_skipped_unless_asked_for_and_only_they(request):
  from tests.conftest import QUALITY_OPTION  # pylint: disable=g-import-not-at-top
  asked = request.config.getoption(QUALITY_OPTION)
  for item in request.session.items:
    skipped = any(mark.kwargs.get('reason', '').startswith('a quality test')
                  for mark in item.iter_markers('skip'))
    assert skipped == (item.get_closest_marker('quality') is not None and not asked), item.nodeid


# The quality tests CI does not run (docs/development.md): a quality mark added or
# lost elsewhere changes what CI checks, and fails here until this list says so.
# The pixel-shuffle and structN2V learning tests left it: CI keeps a test that
# each correlated-noise scheme helps.
QUALITY_TESTS = {
    'tests/training/test_colour_generalisation.py::'
    'test_a_model_keeps_colours_unlike_its_training_photographs[scenes]',
    'tests/training/test_colour_generalisation.py::'
    'test_a_model_keeps_colours_unlike_its_training_photographs[clean]',
    'tests/training/test_percentile_training.py::'
    'test_narrow_16_bit_data_trains_to_within_half_a_db_of_the_stretched_data',
}


def test_exactly_the_listed_tests_are_quality_tests(request):
  for item in request.session.items:
    assert (item.get_closest_marker('quality') is not None) == (item.nodeid in QUALITY_TESTS), (
        item.nodeid)
  options = request.config.option
  if options.keyword or options.markexpr:
    pytest.skip('-k or -m chose some tests: a listed one may be left out on purpose')
  # A listed test renamed or removed: its file ran, the name was not collected.
  collected = {item.nodeid for item in request.session.items}
  files = {nodeid.split('::')[0] for nodeid in collected}
  missing = [nodeid for nodeid in QUALITY_TESTS
             if nodeid.split('::')[0] in files and nodeid not in collected]
  assert not missing, missing
