"""The progress bar n2n.train draws: tqdm.auto's, a widget in a Jupyter
notebook and a text bar in a terminal, fed by the run's progress reports
(actions.ReportProgress)."""

import math

from tqdm import auto


class ProgressBar:
  """fn(step, train_steps, logs) that draws a bar of steps with the last loss
  (and the last evaluation's headline values) beside it; close() when done."""

  def __init__(self, description='training'):
    self._description = description
    self._bar = None

  def __call__(self, step, train_steps, logs):
    if self._bar is None:
      self._bar = auto.tqdm(total=train_steps, initial=step, desc=self._description,
                            unit='step', dynamic_ncols=True)
    shown = {name: _short(value) for name, value in logs.items() if name != 'seconds_per_step'}
    if shown:
      self._bar.set_postfix(shown, refresh=False)
    self._bar.update(step - self._bar.n)

  def close(self):
    if self._bar is not None:
      self._bar.close()


def _short(value):
  """A log value as few digits as say it: 4 significant."""
  return f'{value:.4g}' if isinstance(value, float) and math.isfinite(value) else value


def combined(*callbacks):
  """One fn(step, train_steps, logs) calling each of callbacks (None left out) in turn,
  or None where none is given."""
  given = [callback for callback in callbacks if callback is not None]
  if not given:
    return None

  def report(step, train_steps, logs):
    for callback in given:
      callback(step, train_steps, dict(logs))

  return report
