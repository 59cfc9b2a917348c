"""The suite's own order (tests/conftest.py): files that hold slow tests run
first, so that under `-n 2 --dist loadfile` the many short files, not a long
one, come last, and pytest-xdist keeps that order. The hook is checked on
items made here, so these tests pass in any order the suite runs in (a
reordering plugin changes the session's order after the hook)."""

import dataclasses
import pathlib

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


def test_pytest_xdist_is_told_to_keep_the_collected_order(request):
  # With --loadscope-reorder (xdist's default) the scheduler sorts files by
  # their number of tests before handing them out.
  assert request.config.option.loadscopereorder is False


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
