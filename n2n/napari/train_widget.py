"""Train: a denoiser trained on image layers through n2n.train, in a worker
thread, with napari's progress bar, a live loss plot, Stop (a checkpoint is
written) and Resume (the same call again continues from it).

The data: noisy layers (one capture of each view: a single-image method),
the captures of one view (Noise2Noise pairs), or clean layers to which the
chosen synthetic noise is added as training goes. The method comes from
n2n.diagnose of the noisy layers, shown and changeable. A new run starts from
scratch, or from a shipped model's or another run's weights (--init_from).
"""

import functools
import os

from magicgui import widgets
from n2n import shipped
from n2n.corruptions import catalog
from n2n.methods import registry

from n2n.napari import calls
from n2n.napari import layers
from n2n.napari import loss_plot
from n2n.napari import running
from n2n.napari import setting_fields
from n2n.napari import start_from
from n2n.napari import trained_runs
from n2n.napari import training_time

DATA_KINDS = (('noisy layers (one capture of each view)', 'noisy'),
              ('captures of one view (Noise2Noise pairs)', 'captures'),
              ('clean layers + synthetic noise', 'clean'))
# The widget's starting values where this host has no speed recorded (training_time.py;
# with one, Steps starts at what fits its budget): 2000 steps took 21 min for the RGB
# sample on a 2-core AVX2 host. Crops that fit the samples.
STEPS, CROP_SIZE, BATCH_SIZE = 2000, 128, 4
# The flags the widget's own fields set: More settings refuses them.
OWN_FLAGS = ('model_dir', 'noise', 'method', 'train_steps', 'crop_size', 'batch_size',
             'init_from')


class TrainWidget(widgets.Container):
  """Data and its layers, axes, noise, method, steps, folder; Train/Resume, Stop; the plot."""

  def __init__(self, napari_viewer):
    viewer = napari_viewer
    super().__init__(labels=True)
    self._viewer = viewer
    self.kind = widgets.ComboBox(label='Data', choices=DATA_KINDS, value='noisy')
    self.data_layers = widgets.Select(label='Layers', choices=functools.partial(
        layers.layer_choices, viewer))
    self.data_layers.native.setMaximumHeight(90)
    self.axes = widgets.LineEdit(label='Axes', tooltip=(
        "The layers' axes in n2n's letters: YX, YXC (RGB), ZYX and TYX (3D network), ... "
        'Edit them where the guess from the shape is wrong.'))
    self.noise = widgets.ComboBox(label='Synthetic noise', choices=[
        name for name in catalog.NAMES if name != catalog.NO_NOISE], value='gaussian')
    self.method = widgets.ComboBox(label='Method', choices=registry.NAMES)
    self.diagnosis = running.text_line('Diagnosis')
    self.val = widgets.ComboBox(label='Held-out layer', choices=functools.partial(
        layers.layer_choices, viewer, optional=True), tooltip=(
            'Optional: a layer of the same kind kept out of training and scored as it goes'))
    self.steps = widgets.SpinBox(label='Steps', min=1, max=10_000_000, value=STEPS)
    self.crop_size = widgets.SpinBox(label='Crop size', min=8, max=4096, step=8, value=CROP_SIZE)
    self.batch_size = widgets.SpinBox(label='Batch size', min=1, max=4096, value=BATCH_SIZE)
    self.time = running.text_line('Time')
    self.model_dir = running.folder_field('Model folder', (
        'The run: its checkpoints, config.json and the arrays it trains on are written here '
        'and nowhere else. An existing run in it is resumed.'))
    self.start_from = start_from.StartFrom(viewer, self._channels)
    self.show_more = widgets.CheckBox(text='More settings', tooltip=(
        "The network's width, learning rate, seed, the method's own settings... as train.py's "
        'flags, and a line for any other flag'))
    self.more = setting_fields.MoreSettings()
    self.more.visible = False
    self.train_button, self.stop_button, buttons = running.buttons('Train', 'Stop')
    self.status = running.text_line()
    self.plot = loss_plot.LossPlot(viewer.theme)
    self.raw_loss = widgets.CheckBox(text='Raw loss', tooltip=(
        "Also plot the loss as trained, with the method's own term: Neighbor2Neighbor's "
        'regulariser, whose weight rises over the run, and the raw loss with it. The '
        'reconstruction loss plotted without it is the one that shows the run improving.'))
    self.extend([self.kind, self.data_layers, self.axes, self.noise, self.method, self.diagnosis,
                 self.val, self.steps, self.crop_size, self.batch_size, self.time,
                 self.model_dir, self.start_from.choice, self.start_from.folder])
    running.below(self, self.show_more, self.more, buttons, self.status, self.raw_loss,
                  self.plot)
    self.result = None
    self._folder = None
    # The run's clock and (kind, work units) while it trains; whether Steps was set by hand.
    self._clock, self._measured = None, None
    self._steps_by_hand, self._fitting = False, False
    self._call = running.Call('n2n: training', on_progress=self._progress, on_done=self._done,
                              on_error=self._failed, on_finished=self._finished)
    self._diagnosing = running.Call('n2n: diagnosing', on_done=self._diagnosed,
                                    on_error=self._not_diagnosed,
                                    on_finished=self._diagnosis_finished)
    self._diagnose_again = False
    self.kind.changed.connect(self._data_changed)
    self.data_layers.changed.connect(self._data_changed)
    self.axes.changed.connect(self.start_from.update)
    self.more.line.changed.connect(self.start_from.update)  # --channels there
    self.train_button.changed.connect(self.start)
    self.stop_button.changed.connect(self.stop)
    self.raw_loss.changed.connect(self.plot.set_show_raw)
    self.show_more.changed.connect(lambda shown: setattr(self.more, 'visible', shown))
    self.method.changed.connect(self.more.show_method)
    self.steps.changed.connect(self._steps_set)
    for field in (self.data_layers, self.axes, self.method, self.steps, self.crop_size,
                  self.batch_size, self.more.fields['network_width'],
                  self.more.fields['crop_depth']):
      field.changed.connect(self._estimate)
    self._data_changed()
    self._estimate()

  def _channels(self):
    """The channels of the network the run will train, which a model it starts from must
    have: --channels where More sets it; 3 for clean 2D layers (train.py's clean images are
    RGB unless --channels says otherwise); else the first chosen layer's channels as the
    axes lay it out. None without a layer."""
    chosen = self.data_layers.value
    if not chosen:
      return None
    try:
      given = self.more.values(taken=OWN_FLAGS).get('channels', 0)
    except ValueError:  # a More line that does not parse: Train names it when pressed
      given = 0
    if given:
      return given
    clean_planes = self.kind.value == 'clean' and not layers.is_stack(chosen[0], self.axes.value)
    # Clean stacks keep their own channels, as clean volumes do.
    return 3 if clean_planes else layers.channels(chosen[0], self.axes.value)

  def _steps_set(self, _):
    if not self._fitting:
      self._steps_by_hand = True

  def _kind_and_units(self):
    """(the run's kind, e.g. 'neighbor2neighbor 2D', and a step's work units), as
    training_time records them."""
    chosen = self.data_layers.value
    three_d = bool(chosen) and layers.is_stack(chosen[0], self.axes.value)
    fields = self.more.fields
    units = training_time.work_units(self.batch_size.value, self.crop_size.value,
                                     fields['network_width'].value,
                                     fields['crop_depth'].value if three_d else 1)
    return f'{self.method.value} {3 if three_d else 2}D', units

  def _estimate(self, *_):
    """Time: the run's length from this host's record of its kind, and Steps set to what
    fits training_time.BUDGET_SECONDS while it was not set by hand."""
    kind, units = self._kind_and_units()
    steps = training_time.fitting_steps(kind, units)
    if steps is not None and not self._steps_by_hand and steps != self.steps.value:
      self._fitting = True
      self.steps.value = steps  # calls _estimate again, with these steps
      self._fitting = False
      return
    seconds = training_time.estimate(kind, self.steps.value, units)
    self.time.value = (f'about {training_time.describe(seconds)} (this host, {kind})'
                       if seconds is not None
                       else f'known after the first steps (no {kind} run on this host yet)')

  def _data_changed(self, *_):
    """New data: the axes guessed from the first layer; the method from its diagnosis."""
    kind, chosen = self.kind.value, self.data_layers.value
    self.noise.enabled = kind == 'clean'
    self.val.enabled = kind != 'captures'
    if chosen:
      self.axes.value = layers.axes_of(chosen[0])
    self.start_from.update()  # the shipped models for these layers' channels
    if kind != 'noisy':
      # Pairs of captures, or pairs of synthetic noise on clean layers: Noise2Noise.
      self.method.value = 'pairs'
      self.diagnosis.value = ''
    elif chosen:
      self._diagnose()

  def _diagnose(self):
    if self._diagnosing.running:
      self._diagnose_again = True
      return
    try:
      images = [plane for layer in self.data_layers.value
                for plane in layers.planes(layers.pixels(layer), self.axes.value)]
    except ValueError as error:
      self.diagnosis.value = running.one_line(error)
      return
    self.diagnosis.value = 'diagnosing...'
    self._diagnosing.start(calls.diagnose, images, None, 0.0)

  def _diagnosed(self, diagnosis):
    # The diagnosis reads a stack's planes; a stack trains the 3D network, which a
    # 2D-only method (recorruptions) cannot: the method the advice names for stacks.
    method = (diagnosis.stack_method if layers.is_stack(self.data_layers.value[0], self.axes.value)
              else diagnosis.method)
    self.diagnosis.value = (f'{diagnosis.kind} noise (sigma {diagnosis.noise_level:.3f}): '
                            f'{method}')
    self.diagnosis.tooltip = str(diagnosis)
    self.method.value = method
    recommended = {name: value for name, value in diagnosis.settings.items()
                   if name not in ('method', 'noise')}
    if 'crop_size' in recommended:
      self.crop_size.value = recommended.pop('crop_size')
    # Fine-tuning advice names a shipped model: Start from is where it goes (the settings'
    # own fields refuse init_from).
    start = ('shipped', recommended.pop('init_from', ''))
    if start[1] in shipped.MODELS and start in self.start_from.choice.choices:
      self.start_from.choice.value = start
    self.more.set_values(recommended)

  def _not_diagnosed(self, message):
    self.diagnosis.value = f'not diagnosed: {message}'

  def _diagnosis_finished(self):
    if self._diagnose_again:
      self._diagnose_again = False
      self._diagnose()

  def arguments(self):
    """(flags for n2n.train_config, data, val, axes) from the widget, as calls.train takes them.

    Raises:
      ValueError: no layer, no folder, or a More setting that is no flag or a value its
        declaration refuses (naming the flag).
    """
    kind, chosen = self.kind.value, self.data_layers.value
    if not chosen:
      raise ValueError('choose the layers to train on')
    if kind == 'captures' and len(chosen) < 2:
      raise ValueError('choose two or more captures of one view')
    folder = running.chosen_folder(self.model_dir)
    if not folder:
      raise ValueError('choose a model folder: the run is written there')
    flags = dict(model_dir=os.path.abspath(os.path.expanduser(folder)),
                 noise=self.noise.value if kind == 'clean' else catalog.NO_NOISE,
                 method=self.method.value, train_steps=self.steps.value,
                 crop_size=self.crop_size.value, batch_size=self.batch_size.value)
    flags.update(self.more.values(taken=OWN_FLAGS))
    init_from = self.start_from.init_from()
    if init_from:
      flags['init_from'] = init_from
    val = self.val.value if kind != 'captures' else None
    arrays = [layers.pixels(layer) for layer in chosen]
    data = {'captures': [tuple(arrays)]} if kind == 'captures' else {kind: arrays}
    return (flags, data, [layers.pixels(val)] if val is not None else None,
            self.axes.value.strip().upper())

  def start(self):
    """Trains (or resumes) in a worker thread."""
    try:
      arguments = self.arguments()
    except ValueError as error:
      self.status.value = running.show_error(error)
      return
    self._folder = arguments[0]['model_dir']
    self._clock, self._measured = training_time.RunClock(), self._kind_and_units()
    self.time.value = 'known after the first steps'
    self.train_button.enabled = False
    self.stop_button.enabled = True
    self.status.value = 'starting (the first steps build the network)...'
    self._call.start(calls.train, *arguments)

  def stop(self):
    """Asks the run to stop: it saves a checkpoint after the steps under way."""
    self._call.stop.set()
    self.stop_button.enabled = False
    self.status.value = 'stopping: saving a checkpoint...'

  def _progress(self, step, total, logs):
    self._clock.report(step, logs)
    if not logs:
      self.plot.keep_before(step)
      return
    self.plot.add(step, logs)
    held_out = ''.join(f', {loss_plot.HELD_OUT[name]} {logs[name]:.4g}'
                       for name in loss_plot.HELD_OUT if name in logs)
    loss = ('reconstruction_loss', 'reconstruction loss') if 'reconstruction_loss' in logs else (
        'loss', 'loss')
    left = self._clock.remaining(step, total)
    if left is not None:
      self.time.value = (f'{training_time.describe(left)} left '
                         f'({self._clock.seconds_per_step:.3g} s a step)')
    self.status.value = f'step {step}/{total}, {loss[1]} {logs[loss[0]]:.4g}{held_out}'

  def _done(self, result):
    self.result = result
    if result.step > 0:  # a checkpoint to denoise with: offered to the Denoise widget
      trained_runs.of(self._viewer).add(self._folder)
    if result.stopped:
      self.status.value = f'stopped at step {result.step}: Resume continues from it'
    else:
      self.status.value = f'trained to step {result.step} in {self.model_dir.value}'

  def _failed(self, message):
    self.status.value = f'failed: {message}'

  def _finished(self):
    self._clock.save(*self._measured)
    self._estimate()
    self.train_button.enabled = True
    self.stop_button.enabled = False
    self.train_button.text = 'Resume' if self.result is not None and self.result.stopped else 'Train'

