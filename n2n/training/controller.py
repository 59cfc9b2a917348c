"""The controller: runs the Trainer up to the next step where host work is due,
then runs the actions due there (orbit's Controller role).

An action is any object with
  next_boundary(step) -> int or None   the next step after `step` at which it
                                       must run (None: it never asks for a stop)
  is_due(step, final) -> bool          whether it runs at boundary `step`
  run(result)                          the work, given the LoopResult
and optionally begin(step) (before the first loop) and end(step) (after the
last). Actions run in list order at each boundary, so an earlier one (the
finite-loss check) can stop training before a later one (a save) runs. An
action ends the run early by raising StopTraining: the actions after it at
that boundary do not run, the end() hooks do, and run() returns the step.
"""

import dataclasses
import math
import time


class StopTraining(Exception):
  """Raised by an action to end the run at this boundary (a stop asked for from
  Python, after the action saved what must be kept)."""


@dataclasses.dataclass(frozen=True)
class TrainStats:
  """What the steps of one train call measured.

  Attributes:
    loss: their mean loss (may be NaN or inf).
    reconstruction_loss: their mean loss without the method's own term
      (Neighbor2Neighbor's regulariser, whose weight rises over the run); NaN
      for a method without one, whose loss is all reconstruction.
    mean_gradient_norm: mean gradient norm before clipping over the steps
      whose norm was finite (NaN: not measured, or none was).
    max_gradient_norm: the largest one.
    max_norm_ratio: the largest norm over the running average it was clipped
      against (NaN: not measured or no average yet).
    clipped_steps: how many steps had their gradient scaled down.
    skipped_steps: how many steps had a non-finite gradient norm (under
      mixed_float16: steps the loss-scale optimizer skipped).
  """
  loss: float
  reconstruction_loss: float = math.nan
  mean_gradient_norm: float = math.nan
  max_gradient_norm: float = math.nan
  max_norm_ratio: float = math.nan
  clipped_steps: int = 0
  skipped_steps: int = 0


@dataclasses.dataclass(frozen=True)
class LoopResult:
  """What one train call did.

  Attributes:
    step: the global step reached.
    num_steps: steps run by this call.
    stats: TrainStats of those steps.
    seconds: wall time of the call.
    final: step is the run's last.
  """
  step: int
  num_steps: int
  stats: TrainStats
  seconds: float
  final: bool

  @property
  def loss(self):
    """The steps' mean loss (may be NaN or inf)."""
    return self.stats.loss


class Controller:
  """Alternates trainer calls and due actions until train_steps."""

  def __init__(self, train_fn, start_step, train_steps, steps_per_loop, actions):
    """
    Args:
      train_fn: fn(num_steps) -> TrainStats, e.g. Trainer.train.
      start_step: the global step training starts (or resumes) at.
      train_steps: the run's last step.
      steps_per_loop: most steps per train_fn call.
      actions: list of actions, run in this order at each boundary.
    """
    self._train_fn = train_fn
    self._start_step = start_step
    self._train_steps = train_steps
    self._steps_per_loop = steps_per_loop
    self._actions = list(actions)

  def next_boundary(self, step):
    """The next step after `step` at which any action (or the end) is due."""
    candidates = [self._train_steps]
    for action in self._actions:
      boundary = action.next_boundary(step)
      if boundary is not None and boundary > step:
        candidates.append(boundary)
    return min(candidates)

  def run(self):
    """Trains to train_steps, or until an action raises StopTraining; returns
    the step reached."""
    step = self._start_step
    for action in self._actions:
      if hasattr(action, 'begin'):
        action.begin(step)
    while step < self._train_steps:
      num_steps = min(self._steps_per_loop, self.next_boundary(step) - step)
      started = time.perf_counter()
      stats = self._train_fn(num_steps)
      step += num_steps
      result = LoopResult(step, num_steps, stats, time.perf_counter() - started,
                          step >= self._train_steps)
      try:
        for action in self._actions:
          if action.is_due(step, result.final):
            action.run(result)
      except StopTraining:
        break
    for action in self._actions:
      if hasattr(action, 'end'):
        action.end(step)
    return step
