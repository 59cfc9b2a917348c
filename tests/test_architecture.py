"""Imports point one way: entry points -> training -> evaluation -> inference
(serving) -> methods -> data, model, corruptions. A module that imported
upwards would tie serving to training code, which an export or a denoising job
never needs."""

import ast
import os

from tests.conftest import REPO_ROOT

# Packages of n2n, and the ones each may not import.
FORBIDDEN = {
    # Writing exports uses serving (the denoiser for test outputs); serving
    # only reads them (n2n/inference/exported_model.py).
    'exports': ('training', 'evaluation'),
    'inference': ('training', 'evaluation', 'exports'),
    'evaluation': ('training',),
    'training': ('inference', 'exports'),  # it reaches the network through evaluation
    # Methods declare what the trainer, evaluation and export ask of them.
    'methods': ('training', 'evaluation', 'inference', 'exports', 'model'),
    'data': ('training', 'evaluation', 'inference', 'exports', 'model', 'methods'),
    'model': ('training', 'evaluation', 'inference', 'exports', 'data', 'methods'),
    'corruptions': ('training', 'evaluation', 'inference', 'exports', 'data', 'model',
                    'methods'),
    # Reading noise needs the data readers only; training and serving ask it.
    'diagnosis': ('training', 'evaluation', 'inference', 'exports', 'model', 'methods'),
}
# The modules at the package's root (config, settings, config_flags, run_dir...) are
# what every layer uses; they use none of the layers that run things.
ROOT_FORBIDDEN = ('training', 'evaluation', 'inference', 'exports')
PACKAGES = ('training', 'evaluation', 'inference', 'exports', 'methods', 'data', 'model',
            'corruptions', 'diagnosis')


def _n2n_imports(path):
  """The n2n package (or root module) each import of path names, in every form:
  `import n2n.x`, `from n2n.x import y`, `from n2n import x`."""
  tree = ast.parse(open(path).read())
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module == 'n2n':
      for alias in node.names:
        yield alias.name
    elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith('n2n.'):
      yield node.module.split('.')[1]
    elif isinstance(node, ast.Import):
      for alias in node.names:
        if alias.name.startswith('n2n.'):
          yield alias.name.split('.')[1]


def _python_files(folder):
  return [os.path.join(folder, name) for name in sorted(os.listdir(folder))
          if name.endswith('.py')]


def test_the_import_reader_sees_every_form(tmp_path):
  path = tmp_path / 'module.py'
  path.write_text('import n2n.training.trainer\nfrom n2n import evaluation, config\n'
                  'from n2n.inference import whole_images\n\ndef f():\n  from n2n import methods\n')
  assert sorted(_n2n_imports(path)) == ['config', 'evaluation', 'inference', 'methods',
                                        'training']


def test_packages_import_downwards_only():
  wrong = []
  for package, forbidden in FORBIDDEN.items():
    for path in _python_files(os.path.join(REPO_ROOT, 'n2n', package)):
      for imported in _n2n_imports(path):
        if imported in forbidden:
          wrong.append(f'{os.path.relpath(path, REPO_ROOT)} imports n2n.{imported}')
  assert not wrong, wrong
  assert set(FORBIDDEN) == set(PACKAGES)


def test_root_modules_use_no_layer_that_runs_things():
  wrong = []
  for path in _python_files(os.path.join(REPO_ROOT, 'n2n')):
    if os.path.basename(path) == '__init__.py':
      continue  # the front door (n2n.Denoiser, n2n.train) reaches every layer, lazily
    for imported in _n2n_imports(path):
      if imported in ROOT_FORBIDDEN:
        wrong.append(f'{os.path.relpath(path, REPO_ROOT)} imports n2n.{imported}')
  assert not wrong, wrong


def _imported_roots(path):
  """The top-level names of every module path imports (bench for `from bench.x import y`)."""
  for node in ast.walk(ast.parse(open(path).read())):
    if isinstance(node, ast.Import):
      yield from (alias.name.split('.')[0] for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.level == 0:
      yield (node.module or '').split('.')[0]


def _python_files_below(folder):
  return sorted(os.path.join(where, name) for where, _, names in os.walk(folder)
                for name in names if name.endswith('.py'))


# The product: the package, the programs and the dataset tools; what a user installs or runs.
PROGRAMS = ('train.py', 'validate.py', 'denoise.py', 'export.py', 'diagnose.py')


def test_the_product_never_imports_the_evidence_or_the_tests():
  product = (_python_files_below(os.path.join(REPO_ROOT, 'n2n'))
             + [os.path.join(REPO_ROOT, name) for name in PROGRAMS]
             + _python_files_below(os.path.join(REPO_ROOT, 'datasets')))
  wrong = [f'{os.path.relpath(path, REPO_ROOT)} imports {module}' for path in product
           for module in _imported_roots(path) if module in ('bench', 'tools', 'tests')]
  wrong += [f'{os.path.relpath(path, REPO_ROOT)} imports datasets'
            for path in _python_files_below(os.path.join(REPO_ROOT, 'n2n'))
            if 'datasets' in _imported_roots(path)]
  assert not wrong, wrong


def test_the_evidence_imports_n2n_as_a_user_does():
  """bench/ imports n2n as installed: never tests/ (the tests import its recipes), and no
  file outside tests/ edits sys.path to find the package."""
  evidence = _python_files_below(os.path.join(REPO_ROOT, 'bench'))
  wrong = [f'{os.path.relpath(path, REPO_ROOT)} imports {module}' for path in evidence
           for module in _imported_roots(path) if module in ('tests', 'tools')]
  outside_tests = [path for folder in ('n2n', 'bench', 'datasets')
                   for path in _python_files_below(os.path.join(REPO_ROOT, folder))]
  outside_tests += [os.path.join(REPO_ROOT, name) for name in PROGRAMS]
  for path in outside_tests:
    for node in ast.walk(ast.parse(open(path).read())):
      if (isinstance(node, ast.Attribute) and node.attr == 'path'
          and isinstance(node.value, ast.Name) and node.value.id == 'sys'):
        wrong.append(f'{os.path.relpath(path, REPO_ROOT)}:{node.lineno} uses sys.path')
  assert not wrong, wrong
