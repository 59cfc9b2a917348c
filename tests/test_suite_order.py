"""The suite's own order (tests/conftest.py): files that hold slow tests run
first, so that under `-n 2 --dist loadfile` the many short files, not a long
one, come last, and pytest-xdist keeps that order. The checks read the session
they run in: the whole suite, as CI runs it (every xdist worker collects all of it)."""

import pytest


def test_files_holding_slow_tests_are_collected_before_every_other_file(request):
  files, holds_slow = [], {}
  for item in request.session.items:
    if item.path not in holds_slow:
      files.append(item.path)
      holds_slow[item.path] = False
    holds_slow[item.path] |= item.get_closest_marker('slow') is not None
  flags = [holds_slow[path] for path in files]
  if all(flags) or not any(flags):
    pytest.skip('this session holds only one kind of file (e.g. -m "not slow" or one file)')
  # True for every file of the first part, False for every one after it.
  assert flags == sorted(flags, reverse=True), [
      path.name for path, slow in zip(files, flags) if slow][-3:]


def test_each_files_tests_keep_their_order_in_the_file(request):
  positions = {}
  for position, item in enumerate(request.session.items):
    positions.setdefault(item.path, []).append((position, item.location[1]))
  for found in positions.values():
    # Items of one file stay together and in the order the file defines them.
    assert found[-1][0] - found[0][0] + 1 == len(found)
    lines = [line for _, line in found]
    assert lines == sorted(lines)


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


# The tests CI does not run (README: "Five quality tests"): a quality mark added
# or lost elsewhere changes what CI checks, and fails here until this list and
# the README say so.
QUALITY_TESTS = {
    'tests/methods/test_pixel_shuffle_learning.py::'
    'test_neighbor2neighbor_through_pixel_shuffle_gains_more_on_correlated_noise',
    'tests/methods/test_structn2v_learning.py::'
    'test_blind_spot_with_structn2v_lines_gains_more_on_noise_correlated_along_rows',
    'tests/training/test_colour_generalisation.py::'
    'test_a_model_keeps_colours_unlike_its_training_photographs[scenes]',
    'tests/training/test_colour_generalisation.py::'
    'test_a_model_keeps_colours_unlike_its_training_photographs[clean]',
    'tests/training/test_percentile_training.py::'
    'test_narrow_16_bit_data_trains_to_within_half_a_db_of_the_stretched_data',
}


def test_exactly_the_five_listed_tests_are_quality_tests(request):
  assert len(QUALITY_TESTS) == 5  # the README's count
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
