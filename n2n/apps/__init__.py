"""The command-line programs: train.py, validate.py, denoise.py, export.py and
diagnose.py at the repository root, and the n2n-train, n2n-validate,
n2n-denoise, n2n-export and n2n-diagnose console scripts of an installed
package, run the same main.

Each module's run() defines its flags and hands argv to absl; main(argv) reads
them into a config and makes one library call. The launchers below quiet
TensorFlow's start-up (n2n/cli.py) before the program's module, and with it
TensorFlow, is imported.
"""

import contextlib
import importlib
import os
import sys

from absl import app

from n2n import autograph_files
from n2n import cli
from n2n import config_flags


def _launch(program):
  """Prepares the start-up (cli.prepare_startup), keeps AutoGraph's files out of
  the temp folder (autograph_files.install), then imports n2n.apps.<program> and runs it."""
  cli.prepare_startup()
  autograph_files.install()
  importlib.import_module(f'{__name__}.{program}').run()


# The console scripts and the root *.py wrappers (pyproject.toml's [project.scripts]).
def run_train():
  _launch('train')


def run_validate():
  _launch('validate')


def run_denoise():
  _launch('denoise')


def run_export():
  _launch('export')


def run_diagnose():
  _launch('diagnose')


@contextlib.contextmanager
def configured(argv, config_class):
  """Every program's main: refuses stray arguments, then yields config_class
  from the parsed flags; a user error in the block (or in the flags) ends the
  program with one line naming it (cli.exit_on_user_error).

  cli and config_flags import no TensorFlow: importing this package keeps the
  launchers' promise to quiet the start-up first.
  """
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {" ".join(argv[1:])}')
  with cli.exit_on_user_error(os.path.basename(argv[0])):
    yield config_flags.config_from_flags(config_class)


def start(main, doc, argv=None):
  """absl.app.run(main, argv) with doc as the program's --help text.

  absl prints the __main__ module's docstring for --help; a console script's
  generated __main__ and the root wrappers have none of their own.
  """
  main_module = sys.modules['__main__']
  if not main_module.__doc__:
    main_module.__doc__ = doc
  app.run(main, argv=argv)
