"""The Train widget's live plot: the loss that shows the run improving by
step and, where the run has held-out data, its held-out score on a second
axis, in napari's colours.

The loss that shows the run improving: for Neighbor2Neighbor its
reconstruction term (n2n.train's progress logs 'reconstruction_loss'), since
its raw loss holds the regulariser, whose weight rises from 0 to 2 over the
run and with it the raw loss; for the other methods the loss itself. The raw
loss joins the plot on demand (show_raw).
"""

import math

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from napari.utils.theme import get_theme

# The progress logs' held-out values (n2n.train's progress), with the label each is plotted under.
HELD_OUT = {'psnr': 'held-out PSNR (dB)', 'held_out_loss': 'held-out loss',
            'noisy_target_mse': 'held-out noisy-target MSE'}
_BLUE, _ORANGE = '#4fa3e0', '#f0a030'


class LossPlot(FigureCanvasQTAgg):
  """Reconstruction (or training) loss against step, the raw loss on demand; held-out
  score against step on the right axis.

  Attributes:
    steps, losses, reconstruction_losses: the reports plotted (NaN where a report
      has no reconstruction loss: a method without a term of its own).
    show_raw: whether the raw loss is drawn beside the reconstruction loss.
  """

  def __init__(self, theme='dark'):
    self._figure = Figure(figsize=(4.0, 2.6), tight_layout=True)
    super().__init__(self._figure)
    self._theme = theme
    self.show_raw = False
    self.setMinimumHeight(200)
    self.clear()

  @property
  def axes(self):
    """The plot's left axes (matplotlib's): its lines are the losses drawn."""
    return self._figure.axes[0]

  def clear(self):
    """Empties the plot for a new run."""
    self.steps, self.losses, self.reconstruction_losses = [], [], []
    self.held_out_steps, self.held_out = [], []
    self.held_out_name = None
    self._draw()

  def set_show_raw(self, show):
    """Draws the raw loss beside the reconstruction loss, or not."""
    self.show_raw = bool(show)
    self._draw()

  def keep_before(self, step):
    """Drops what was plotted from step on: a run resumed there, or started anew (0)."""
    self.steps, self.losses, self.reconstruction_losses = _before(
        step, self.steps, self.losses, self.reconstruction_losses)
    self.held_out_steps, self.held_out = _before(step, self.held_out_steps, self.held_out)
    self._draw()

  def add(self, step, logs):
    """Adds one report of n2n.train's progress (logs: 'loss', maybe
    'reconstruction_loss', maybe a held-out value)."""
    if 'loss' in logs:
      self.steps.append(step)
      self.losses.append(float(logs['loss']))
      self.reconstruction_losses.append(float(logs.get('reconstruction_loss', math.nan)))
    for name in HELD_OUT:
      if name in logs:
        self.held_out_name = name
        self.held_out_steps.append(step)
        self.held_out.append(float(logs[name]))
    self._draw()

  @property
  def has_reconstruction(self):
    return any(not math.isnan(value) for value in self.reconstruction_losses)

  def _draw(self):
    colours = get_theme(self._theme)
    background = colours.canvas.as_hex()
    text = colours.text.as_hex()
    self._figure.clear()
    self._figure.set_facecolor(background)
    axes = self._figure.add_subplot()
    axes.set_facecolor(background)
    for spine in axes.spines.values():
      spine.set_color(text)
    axes.tick_params(colors=text, labelsize=8)
    axes.set_xlabel('step', color=text, fontsize=9)
    reconstruction = self.has_reconstruction
    axes.set_ylabel('reconstruction loss' if reconstruction else 'training loss', color=_BLUE,
                    fontsize=9)
    if self.steps:
      axes.plot(self.steps, self.reconstruction_losses if reconstruction else self.losses,
                color=_BLUE, linewidth=1.2, label='reconstruction' if reconstruction else 'loss')
      if reconstruction and self.show_raw:
        axes.plot(self.steps, self.losses, '--', color=text, linewidth=0.8,
                  label='raw loss (with regulariser)')
        axes.legend(fontsize=7, labelcolor=text, facecolor=background, edgecolor=text)
    else:
      axes.text(0.5, 0.5, 'the loss appears here as the run trains', color=text, fontsize=8,
                ha='center', va='center', transform=axes.transAxes)
    if self.held_out:
      right = axes.twinx()
      right.plot(self.held_out_steps, self.held_out, 'o-', color=_ORANGE, markersize=3,
                 linewidth=1.0)
      right.set_ylabel(HELD_OUT[self.held_out_name], color=_ORANGE, fontsize=9)
      right.tick_params(colors=text, labelsize=8)
    self.draw_idle()


def _before(step, steps, *series):
  """[the steps before step, then each of series at those steps]."""
  kept = [index for index, at in enumerate(steps) if at < step]
  return [[values[index] for index in kept] for values in (steps,) + series]
