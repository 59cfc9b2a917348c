"""The Train widget's live plot: the training loss by step and, where the run
has held-out data, its held-out score on a second axis, in napari's colours."""

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from napari.utils.theme import get_theme

# The progress logs' held-out values (n2n.train's progress), with the label each is plotted under.
HELD_OUT = {'psnr': 'held-out PSNR (dB)', 'held_out_loss': 'held-out loss',
            'noisy_target_mse': 'held-out noisy-target MSE'}


class LossPlot(FigureCanvasQTAgg):
  """Loss against step; held-out score against step on the right axis."""

  def __init__(self, theme='dark'):
    self._figure = Figure(figsize=(4.0, 2.6), tight_layout=True)
    super().__init__(self._figure)
    self._theme = theme
    self.setMinimumHeight(200)
    self.clear()

  def clear(self):
    """Empties the plot for a new run."""
    self.steps, self.losses, self.held_out_steps, self.held_out = [], [], [], []
    self.held_out_name = None
    self._draw()

  def keep_before(self, step):
    """Drops what was plotted from step on: a run resumed there, or started anew (0)."""
    self.steps, self.losses = _before(step, self.steps, self.losses)
    self.held_out_steps, self.held_out = _before(step, self.held_out_steps, self.held_out)
    self._draw()

  def add(self, step, logs):
    """Adds one report of n2n.train's progress (logs: 'loss', maybe a held-out value)."""
    if 'loss' in logs:
      self.steps.append(step)
      self.losses.append(float(logs['loss']))
    for name in HELD_OUT:
      if name in logs:
        self.held_out_name = name
        self.held_out_steps.append(step)
        self.held_out.append(float(logs[name]))
    self._draw()

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
    axes.set_ylabel('training loss', color='#4fa3e0', fontsize=9)
    if self.steps:
      axes.plot(self.steps, self.losses, color='#4fa3e0', linewidth=1.2)
    else:
      axes.text(0.5, 0.5, 'the loss appears here as the run trains', color=text, fontsize=8,
                ha='center', va='center', transform=axes.transAxes)
    if self.held_out:
      right = axes.twinx()
      right.plot(self.held_out_steps, self.held_out, 'o-', color='#f0a030', markersize=3,
                 linewidth=1.0)
      right.set_ylabel(HELD_OUT[self.held_out_name], color='#f0a030', fontsize=9)
      right.tick_params(colors=text, labelsize=8)
    self.draw_idle()


def _before(step, steps, values):
  kept = [(at, value) for at, value in zip(steps, values) if at < step]
  return [at for at, _ in kept], [value for _, value in kept]
