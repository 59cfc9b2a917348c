"""Imports point one way: entry points -> training -> evaluation -> inference
(serving) -> methods -> data, model, corruptions. A module that imported
upwards would tie serving to training code, which an export or a denoising job
never needs."""

import ast
import collections
import os

from tests.conftest import REPO_ROOT

# Packages of n2n, and the ones each may not import.
FORBIDDEN = {
    # Writing exports uses serving (the denoiser for test outputs) and what
    # the run scored (evaluation); serving only reads them
    # (n2n/inference/exported_model.py).
    'exports': ('training', 'pipelines'),
    'inference': ('training', 'evaluation', 'exports', 'pipelines'),
    'evaluation': ('training',),
    'training': ('inference', 'exports'),  # it reaches the network through evaluation
    # A method's tensors: its training examples, loss term and held-out loss.
    'pipelines': ('training', 'evaluation', 'inference', 'exports', 'model'),
    # Methods declare what the trainer, evaluation and export ask of them, in
    # declarations that n2n/config reads: no tensor code.
    'methods': ('training', 'evaluation', 'inference', 'exports', 'model', 'data',
                'pipelines'),
    'data': ('training', 'evaluation', 'inference', 'exports', 'model', 'methods', 'pipelines'),
    'model': ('training', 'evaluation', 'inference', 'exports', 'data', 'methods', 'pipelines'),
    'corruptions': ('training', 'evaluation', 'inference', 'exports', 'data', 'model',
                    'methods', 'pipelines'),
    # Reading noise needs the data readers only; training and serving ask it.
    'diagnosis': ('training', 'evaluation', 'inference', 'exports', 'model', 'methods',
                  'pipelines'),
    # Every setting's declaration: the sections read the methods' declarations, and
    # no module that runs things (reading a config.json imports no TensorFlow).
    'config': ('training', 'evaluation', 'inference', 'exports', 'pipelines', 'data', 'model',
               'diagnosis', 'apps', 'napari'),
    # The napari plugin is a thin layer over the front door (n2n.train, n2n.Denoiser,
    # n2n.diagnose): it gathers arguments, and reaches no layer that runs things itself.
    'napari': ('training', 'evaluation', 'inference', 'exports', 'pipelines', 'model',
               'diagnosis'),
}
# The modules at the package's root (config, settings, config_flags, run_dir...) are
# what every layer uses; they use none of the layers that run things.
ROOT_FORBIDDEN = ('training', 'evaluation', 'inference', 'exports', 'pipelines')
PACKAGES = ('training', 'evaluation', 'inference', 'exports', 'pipelines', 'methods', 'data',
            'model', 'corruptions', 'diagnosis', 'napari', 'config')


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
    if os.path.basename(path) in ('__init__.py', 'front_door.py'):
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


def _module_name(path):
  parts = list(os.path.relpath(path, REPO_ROOT)[:-3].split(os.sep))
  return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def _package_modules():
  """{module name: path} of every module of the n2n package."""
  found = {}
  for folder, _, names in os.walk(os.path.join(REPO_ROOT, 'n2n')):
    for name in names:
      if name.endswith('.py'):
        found[_module_name(os.path.join(folder, name))] = os.path.join(folder, name)
  return found


def _imports_of(path, module, modules):
  """[(n2n module imported, at function level)] of one module, every form: a
  `from a.b import c` names a.b.c where that is a module, else a.b."""
  package_file = path.endswith('__init__.py')
  found = []

  def named(node):
    if isinstance(node, ast.Import):
      return [alias.name for alias in node.names]
    base = node.module or ''
    if node.level:
      parents = module.split('.')[:len(module.split('.')) - node.level + package_file]
      base = '.'.join(parents + ([node.module] if node.module else []))
    return [f'{base}.{alias.name}' if f'{base}.{alias.name}' in modules else base
            for alias in node.names]

  def visit(node, in_function):
    for child in ast.iter_child_nodes(node):
      if isinstance(child, (ast.Import, ast.ImportFrom)):
        found.extend((name, in_function) for name in named(child) if name.split('.')[0] == 'n2n')
      else:
        visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

  visit(ast.parse(open(path).read()), False)
  return found


def _import_graph():
  modules = _package_modules()
  graph = {}
  for module, path in modules.items():
    graph[module] = {name for name, _ in _imports_of(path, module, modules)
                     if name in modules and name != module}
  return graph


def _circles(graph):
  """The strongly connected groups of more than one module (Tarjan's)."""
  index, low, stack, on_stack, groups = {}, {}, [], set(), []

  def visit(node):
    index[node] = low[node] = len(index)
    stack.append(node)
    on_stack.add(node)
    for target in sorted(graph[node]):
      if target not in index:
        visit(target)
        low[node] = min(low[node], low[target])
      elif target in on_stack:
        low[node] = min(low[node], index[target])
    if low[node] == index[node]:
      group = set()
      while True:
        member = stack.pop()
        on_stack.discard(member)
        group.add(member)
        if member == node:
          break
      if len(group) > 1:
        groups.append(sorted(group))

  for node in sorted(graph):
    if node not in index:
      visit(node)
  return groups


def test_the_circle_finder_finds_a_circle_through_a_function_level_import():
  graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}
  assert _circles(graph) == [['a', 'b', 'c']]
  assert _circles({'a': {'b'}, 'b': set()}) == []


def test_no_module_of_the_package_imports_itself_back_through_others():
  """Module by module, function-level imports counted: an import circle means
  a module can only load while another is half loaded, and is dodged by
  importing inside functions."""
  assert _circles(_import_graph()) == []


def _package_of(module):
  """n2n.data.volumes -> n2n.data; a root module (n2n.run_dir) and n2n stay themselves."""
  return '.'.join(module.split('.')[:2])


def test_no_package_of_n2n_imports_itself_back_through_others():
  """The same a floor up: with each subpackage one node, no circle either (a
  module of methods importing diagnosis, whose other modules import data, which
  imports config, which imports methods, is a circle of packages)."""
  graph = collections.defaultdict(set)
  for module, imported in _import_graph().items():
    graph[_package_of(module)] |= {_package_of(name) for name in imported} - {
        _package_of(module)}
  assert _circles(graph) == []


# Modules the package imports inside functions, and why: none. Everything of n2n is
# imported at the top, but for the names the lazy front door loads on first use
# (n2n/__init__.py, PEP 562: n2n/front_door.py and the rest) and the program a launcher
# runs (n2n/apps), both through importlib.import_module, which no import statement names.
LATE_N2N_IMPORTS = {}


def test_the_package_imports_its_own_modules_at_the_top():
  modules = _package_modules()
  late = [f'{module} imports {name} inside a function'
          for module, path in sorted(modules.items()) if module not in LATE_N2N_IMPORTS
          for name, in_function in _imports_of(path, module, modules) if in_function]
  assert not late, late
