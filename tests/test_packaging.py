"""pyproject.toml agrees with requirements*.txt, ships the package's data files and names
console scripts that exist. (`pip install .` itself is too slow for the suite: a
non-editable install outside the checkout was checked by hand, docs/development.md.)"""

import ast
import fnmatch
import glob
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib

from tests.conftest import REPO_ROOT


def _project():
  with open(os.path.join(REPO_ROOT, 'pyproject.toml'), 'rb') as pyproject:
    return tomllib.load(pyproject)['project']


def _requirements(path):
  """Every requirement `pip install -r path` installs: the file's lines, and
  for each -r line those of the file it names (beside it), comments left out."""
  found = []
  with open(path) as requirements:
    for line in requirements:
      line = line.split('#')[0].strip()
      if line.startswith('-r'):
        found += _requirements(os.path.join(os.path.dirname(path), line[2:].strip()))
      elif line:
        found.append(line)
  return found


def _extra(name):
  """Every requirement `pip install .[name]` installs: the runtime ones, the
  extra's own, and those of the extras it names (n2n[other])."""
  project = _project()
  found = list(project['dependencies'])
  for requirement in project['optional-dependencies'][name]:
    other = re.fullmatch(r'n2n\[(\w+)\]', requirement)
    found += _extra(other.group(1)) if other else [requirement]
  return found


def test_requirements_files_are_read_with_their_includes(tmp_path):
  (tmp_path / 'a.txt').write_text('# a\n-r b.txt\nx>=1  # why\n')
  (tmp_path / 'b.txt').write_text('-r c.txt\ny\n')
  (tmp_path / 'c.txt').write_text('z<2\n')
  assert _requirements(str(tmp_path / 'a.txt')) == ['z<2', 'y', 'x>=1']


def test_runtime_dependencies_are_requirements_txt():
  assert _project()['dependencies'] == _requirements(os.path.join(REPO_ROOT, 'requirements.txt'))


def test_each_extra_installs_what_its_requirements_file_does():
  extras = _project()['optional-dependencies']
  files = glob.glob(os.path.join(REPO_ROOT, 'requirements-*.txt'))
  assert sorted(f'requirements-{extra}.txt' for extra in extras) == sorted(
      os.path.basename(path) for path in files)
  for extra in extras:
    from_file = _requirements(os.path.join(REPO_ROOT, f'requirements-{extra}.txt'))
    assert sorted(set(_extra(extra))) == sorted(set(from_file)), extra


def _version(requires_python):
  """(3, N) of a '>=3.N' Requires-Python."""
  return 3, int(re.fullmatch(r'>=3\.(\d+)', requires_python).group(1))


def _product_files():
  """The code an install runs: n2n/, the root programs and datasets/."""
  return sorted(glob.glob(os.path.join(REPO_ROOT, 'n2n', '**', '*.py'), recursive=True)
                + glob.glob(os.path.join(REPO_ROOT, '*.py'))
                + glob.glob(os.path.join(REPO_ROOT, 'datasets', '**', '*.py'), recursive=True))


def _needing_newer_python(paths, version):
  """What in paths needs a Python newer than version (3, N): syntax (ast) and
  the standard library, builtins and annotations (vermin, requirements-test.txt)."""
  found = []
  for path in paths:
    with open(path) as source:
      try:
        ast.parse(source.read(), path, feature_version=version)
      except SyntaxError as error:
        found.append(f'{path}:{error.lineno}: {error.msg}')
  vermin = subprocess.run(
      [sys.executable, '-c', 'import sys; from vermin import main; sys.exit(main())', '--no-tips',
       '--violations', '--eval-annotations', f'--target={version[0]}.{version[1]}-', *paths],
      capture_output=True, text=True, timeout=120)
  if vermin.returncode:
    found.append(vermin.stdout + vermin.stderr)
  return found


def test_napari_finds_the_plugins_manifest_and_the_suite_installs_napari():
  project = _project()
  assert 'n2n[napari]' in project['optional-dependencies']['test']
  assert project['entry-points']['napari.manifest'] == {'n2n': 'n2n.napari:napari.yaml'}
  with open(os.path.join(REPO_ROOT, 'pyproject.toml'), 'rb') as pyproject:
    package_data = tomllib.load(pyproject)['tool']['setuptools']['package-data']
  assert package_data['n2n.napari'] == ['napari.yaml']
  assert os.path.exists(os.path.join(REPO_ROOT, 'n2n', 'napari', 'napari.yaml'))


def test_every_data_file_of_the_package_is_package_data():
  # A wheel (pip install . without -e) holds a package's .py files and only the
  # data files that package-data names: one it misses is absent once installed.
  with open(os.path.join(REPO_ROOT, 'pyproject.toml'), 'rb') as pyproject:
    package_data = tomllib.load(pyproject)['tool']['setuptools']['package-data']
  data_files = [path for path in glob.glob(os.path.join(REPO_ROOT, 'n2n', '**', '*'),
                                           recursive=True)
                if os.path.isfile(path) and not path.endswith(('.py', '.pyc'))]
  assert data_files  # the fonts and the napari manifest at least
  for path in data_files:
    relative = os.path.relpath(path, REPO_ROOT).split(os.sep)
    # The innermost package holding the file, and the file's path inside it.
    shipped = any(
        fnmatch.fnmatch('/'.join(relative[depth:]), pattern)
        for depth in range(1, len(relative))
        for pattern in package_data.get('.'.join(relative[:depth]), ()))
    assert shipped, f'{"/".join(relative)} is in no package-data pattern of pyproject.toml'


def test_python_version_claims_agree():
  assert _project()['requires-python'] == '>=3.10'
  with open(os.path.join(REPO_ROOT, 'requirements.txt')) as requirements:
    assert 'Python 3.10-3.13' in requirements.readline()
  # No lower than what TensorFlow installs on.
  assert _version(importlib.metadata.metadata('tensorflow')['Requires-Python']) <= _version(
      _project()['requires-python'])


def test_the_code_needs_no_newer_python_than_requires_python():
  floor = _version(_project()['requires-python'])
  assert len(_product_files()) > 100
  assert not _needing_newer_python(_product_files(), floor)


def test_the_floor_check_finds_newer_syntax_and_library(tmp_path):
  syntax = tmp_path / 'groups.py'
  syntax.write_text('try:\n  pass\nexcept* ValueError:\n  pass\n')  # 3.11
  library = tmp_path / 'toml.py'
  library.write_text('import tomllib\n')  # 3.11
  found = _needing_newer_python([str(syntax), str(library)], (3, 10))
  assert len(found) == 2
  assert 'groups.py' in found[0] and 'Exception groups' in found[0]
  assert "'tomllib' module requires !2, 3.11" in found[1]


def test_console_scripts_name_importable_callables():
  scripts = _project()['scripts']
  assert sorted(scripts) == ['n2n-denoise', 'n2n-diagnose', 'n2n-export', 'n2n-train',
                             'n2n-validate']
  # In a subprocess: the entry modules quiet TensorFlow's stderr when imported.
  code = ('import importlib, sys\n'
          'for target in sys.argv[1:]:\n'
          '  module, name = target.split(":")\n'
          '  assert callable(getattr(importlib.import_module(module), name)), target\n')
  result = subprocess.run([sys.executable, '-c', code, *scripts.values()], capture_output=True,
                          text=True, timeout=120, cwd=REPO_ROOT)
  assert result.returncode == 0, result.stderr[-2000:]
