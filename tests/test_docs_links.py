"""Every relative link in README.md and docs/*.md points to a file or folder that exists,
and every #anchor to a heading of the page it names."""

import glob
import os
import re

import pytest

from tests.conftest import REPO_ROOT

_PAGES = sorted([os.path.join(REPO_ROOT, 'README.md')] +
                glob.glob(os.path.join(REPO_ROOT, 'docs', '*.md')))
_FENCED_CODE = re.compile(r'^```.*?^```', re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r'`[^`\n]*`')
# [text](target) and ![alt](target); the target ends at whitespace (a title) or ')'.
_LINK = re.compile(r'!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')


def _prose(text):
  """The page without code, where brackets are not links."""
  return _INLINE_CODE.sub('', _FENCED_CODE.sub('', text))


def _links(page):
  with open(page) as markdown:
    return _LINK.findall(_prose(markdown.read()))


def _anchor(heading):
  """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
  heading = re.sub(r'[^\w\- ]', '', heading.strip().lower())
  return heading.replace(' ', '-')


def _anchors(page):
  with open(page) as markdown:
    text = _FENCED_CODE.sub('', markdown.read())
  return {_anchor(heading) for heading in re.findall(r'^#+\s+(.*)$', text, re.MULTILINE)}


def _problems(page):
  """Every relative link of page that does not resolve, as 'target: why'."""
  problems = []
  for target in _links(page):
    if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.IGNORECASE):  # http:, https:, mailto:
      continue
    path, _, anchor = target.partition('#')
    resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
    if not os.path.exists(resolved):
      problems.append(f'{target}: no {os.path.relpath(resolved, REPO_ROOT)}')
    elif anchor and resolved.endswith('.md') and anchor not in _anchors(resolved):
      problems.append(f'{target}: no heading #{anchor}')
  return problems


def test_the_pages_have_links_to_check():
  assert len(_PAGES) >= 5
  assert len(_links(os.path.join(REPO_ROOT, 'README.md'))) >= 10


@pytest.mark.parametrize('page', _PAGES, ids=lambda page: os.path.relpath(page, REPO_ROOT))
def test_every_relative_link_resolves(page):
  assert _problems(page) == []


def test_a_broken_link_is_reported_with_every_other(tmp_path):
  page = tmp_path / 'page.md'
  (tmp_path / 'there.md').write_text('# A heading, with punctuation\n')
  page.write_text('[ok](there.md) [gone](missing.md) `[code](nowhere.md)`\n'
                  '[anchor](there.md#a-heading-with-punctuation) [bad](there.md#nothing)\n'
                  '[web](https://example.org/x) ![picture](img/missing.png)\n'
                  '```\n[fenced](nowhere.md)\n```\n')
  assert _problems(str(page)) == [
      'missing.md: no ' + os.path.relpath(str(tmp_path / 'missing.md'), REPO_ROOT),
      'there.md#nothing: no heading #nothing',
      'img/missing.png: no ' + os.path.relpath(str(tmp_path / 'img' / 'missing.png'), REPO_ROOT),
  ]
