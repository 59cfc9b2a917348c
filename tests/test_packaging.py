"""pyproject.toml agrees with requirements*.txt and names console scripts that exist.
(`pip install .` itself is too slow for the suite: docs/python_api.md says how it was checked.)"""

import os
import subprocess
import sys
import tomllib

from tests.conftest import REPO_ROOT


def _project():
  with open(os.path.join(REPO_ROOT, 'pyproject.toml'), 'rb') as pyproject:
    return tomllib.load(pyproject)['project']


def _requirements(name):
  """The requirement lines of a requirements file, comments and -r includes left out."""
  with open(os.path.join(REPO_ROOT, name)) as requirements:
    lines = (line.split('#')[0].strip() for line in requirements)
    return [line for line in lines if line and not line.startswith('-r')]


def test_runtime_dependencies_are_requirements_txt():
  assert _project()['dependencies'] == _requirements('requirements.txt')


def test_export_and_test_extras_are_their_requirements_files():
  extras = _project()['optional-dependencies']
  assert extras['export'] == _requirements('requirements-export.txt')
  assert extras['test'] == _requirements('requirements-test.txt') + ['n2n[export]']


def test_napari_extra_is_its_requirements_file_and_its_manifest_is_declared():
  project = _project()
  assert project['optional-dependencies']['napari'] == _requirements('requirements-napari.txt')
  assert project['entry-points']['napari.manifest'] == {'n2n': 'n2n.napari:napari.yaml'}
  with open(os.path.join(REPO_ROOT, 'pyproject.toml'), 'rb') as pyproject:
    package_data = tomllib.load(pyproject)['tool']['setuptools']['package-data']
  assert package_data['n2n.napari'] == ['napari.yaml']
  assert os.path.exists(os.path.join(REPO_ROOT, 'n2n', 'napari', 'napari.yaml'))


def test_python_version_claims_agree():
  assert _project()['requires-python'] == '>=3.11'
  with open(os.path.join(REPO_ROOT, 'requirements.txt')) as requirements:
    assert 'Python 3.11-3.12' in requirements.readline()


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
