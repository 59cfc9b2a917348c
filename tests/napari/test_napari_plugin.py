"""The napari plugin in a real viewer: every widget docks and every sample
opens through napari's plugin manager; Diagnose reports the sample's noise;
Train trains a tiny run from a layer, stops (a checkpoint) and resumes, and
starts a run from another's weights (another network refused); Denoise
denoises a 2D, an RGB and a 3D layer into new layers placed as their inputs, and a
photograph through the shipped camera model;
Cancel and bad input end in one-line notifications. One tiny run (width 8, crops
of 64, 10 steps), trained by a fixture, serves the Denoise tests.

Run under an X server: pytest-xvfb (the test extra) starts one where Xvfb is installed.
"""

import glob
import multiprocessing
import os
import re

import numpy as np
import pytest

_EXTRA = 'the napari plugin tests need the napari extra: pip install -r requirements-napari.txt'
pytest.importorskip('napari.viewer', reason=_EXTRA)
pytest.importorskip('pytestqt', reason=_EXTRA)
if not os.environ.get('DISPLAY'):
  pytest.skip('the napari plugin tests need an X server: apt-get install xvfb (pytest-xvfb '
              'starts one), or run pytest under xvfb-run -a',
              allow_module_level=True)

# pylint: disable=g-import-not-at-top,wrong-import-position
import n2n
import npe2
from napari.utils import notifications

from n2n import config as config_lib
from n2n import settings
from n2n import shipped
from n2n.napari import denoise_widget
from n2n.napari import samples
from n2n.napari import start_from
from n2n.napari import train_widget
from n2n.napari import training_time
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow
WIDGETS = ('Diagnose noise', 'Train', 'Denoise')
# The dock that holds the three as tabs: the one docs/napari.md has users open.
TABS = 'Diagnose, Train, Denoise'
# A child process imports TensorFlow and n2n before it trains or denoises: seconds.
TIMEOUT_MS = 120_000
TINY = dict(network_width=8, steps_per_loop=5)


@pytest.fixture(autouse=True)
def plugin():
  """n2n's manifest in napari's plugin manager: an installed n2n is found
  through its entry point; a source tree (the suite's own) is registered here."""
  manager = npe2.PluginManager.instance()
  if 'n2n' not in manager:
    manager.register(npe2.PluginManifest.from_file(
        os.path.join(REPO_ROOT, 'n2n', 'napari', 'napari.yaml')))
  return manager


@pytest.fixture(autouse=True)
def speed_record(tmp_path, monkeypatch):
  """The training speeds the Train widget records go to a cache of the test's own."""
  monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))
  return training_time.record_path()


@pytest.fixture
def notes():
  """The messages of the notifications shown during the test."""
  shown = []

  def keep(event):
    shown.append((event.severity, event.message))

  notifications.notification_manager.notification_ready.connect(keep)
  yield shown
  notifications.notification_manager.notification_ready.disconnect(keep)


def _noisy_grey(size=96):
  """A grey crop of the noisy picture sample: uint8 [size, size]."""
  picture = samples.noisy_picture()[0][0]
  return np.ascontiguousarray(picture[-size:, :size, 1])


def _dock(viewer, name):
  _, widget = viewer.window.add_plugin_dock_widget('n2n', name)
  return widget


@pytest.fixture(scope='module')
def run_folder(tmp_path_factory):
  """The tiny run the Denoise tests use, trained here once for this file: the
  same whichever tests run, in whatever order."""
  folder = str(tmp_path_factory.mktemp('napari') / 'run')
  config = n2n.train_config(model_dir=folder, noise='none', method='neighbor2neighbor',
                            crop_size=64, batch_size=4, train_steps=10, **TINY)
  n2n.train(config, noisy=[_noisy_grey()], progress_bar=False)
  return folder


def test_napari_finds_the_installed_plugin_with_no_further_step():
  """The entry point of an installed n2n (pip install -e .[napari], as the
  README's set-up and CI install it) is what napari reads: a plugin manager
  of its own, which the other tests' registration does not touch, finds n2n,
  its three widgets and its two samples, and its manifest validates."""
  import importlib.metadata  # pylint: disable=g-import-not-at-top
  points = importlib.metadata.entry_points(group='napari.manifest')
  if not any(point.name == 'n2n' for point in points):
    pytest.skip('n2n is not installed (pip install -e .[napari]): no entry point to find')
  manager = npe2.PluginManager()
  manager.discover()
  assert 'n2n' in manager
  manifest = manager.get_manifest('n2n')
  assert sorted(widget.display_name for widget in manifest.contributions.widgets) == sorted(
      WIDGETS + (TABS,))
  assert sorted(sample.key for sample in manifest.contributions.sample_data) == [
      'noisy_picture', 'noisy_stack']
  npe2.PluginManifest.from_file(os.path.join(REPO_ROOT, 'n2n', 'napari', 'napari.yaml'))


def test_every_widget_docks_and_every_sample_opens(make_napari_viewer):
  viewer = make_napari_viewer()
  docked = [_dock(viewer, name) for name in WIDGETS]
  viewer.open_sample('n2n', 'noisy_picture')
  viewer.open_sample('n2n', 'noisy_stack')
  picture = viewer.layers['noisy picture']
  assert picture.rgb and picture.data.shape == (512, 512, 3) and picture.data.dtype == np.uint8
  first, second = viewer.layers['noisy stack 1'], viewer.layers['noisy stack 2']
  assert first.data.shape == second.data.shape == (32, 128, 128)
  assert first.data.dtype == np.uint16 and tuple(first.scale) == (4.0, 1.0, 1.0)
  assert not np.array_equal(first.data, second.data)  # two acquisitions, two noises
  diagnose, train, denoise = docked
  # The layer choices follow the viewer's layer list; the axes are guessed from the shape.
  assert [layer.name for layer in train.data_layers.choices] == [
      'noisy picture', 'noisy stack 1', 'noisy stack 2']
  denoise.layer.value = first
  assert denoise.axes.value == 'ZYX'
  diagnose.layer.value = picture
  assert diagnose.axes.value == 'YXC'


def test_the_tabbed_dock_holds_the_three_and_leaves_the_canvas_most_of_a_narrow_window(
    make_napari_viewer, qtbot):
  viewer = make_napari_viewer(show=True)
  window, canvas = _window_and_canvas(viewer, width=1066, height=600)
  dock, tabs = viewer.window.add_plugin_dock_widget('n2n', TABS)
  assert [tabs.tabText(index) for index in range(tabs.count())] == list(WIDGETS)
  qtbot.wait(200)
  assert canvas.width() > window.width() / 2, (canvas.width(), dock.width())
  # Docked apart, the three stack in a column as wide as the widest: the canvas a strip.
  apart = make_napari_viewer(show=True)
  apart_window, apart_canvas = _window_and_canvas(apart, width=1066, height=600)
  for name in WIDGETS:
    _dock(apart, name)
  qtbot.wait(200)
  assert apart_canvas.width() < apart_window.width() / 2
  # Each tab fits the dock's width, its sections open: it may scroll down, never sideways.
  tabs.train.show_more.value = tabs.denoise.show_export.value = True
  tabs.train.method.value = 'blind_spot'  # the method with the most settings of its own
  for index, widget in enumerate((tabs.diagnose, tabs.train, tabs.denoise)):
    tabs.setCurrentIndex(index)
    qtbot.wait(50)
    area = tabs.widget(index)
    assert area.widget() is widget.native and widget.native.isVisible()
    assert not area.horizontalScrollBar().isVisible(), (index, area.viewport().width())
  # The three follow the viewer's layers as docked apart.
  layer = viewer.add_image(_noisy_grey(), name='noisy')
  assert tabs.diagnose.layer.value is layer and tabs.denoise.layer.value is layer
  assert list(tabs.train.data_layers.choices) == [layer]


def _window_and_canvas(viewer, width, height):
  """The viewer's main window, resized, and its canvas (Qt widgets napari keeps private)."""
  # pylint: disable=protected-access
  window = viewer.window._qt_window
  window.resize(width, height)
  return window, viewer.window._qt_viewer.canvas.native


def test_diagnose_widget_reports_the_noise_of_two_captures(make_napari_viewer, qtbot):
  viewer = make_napari_viewer()
  viewer.open_sample('n2n', 'noisy_stack')
  widget = _dock(viewer, 'Diagnose noise')
  widget.layer.value = viewer.layers['noisy stack 1']
  widget.second.value = viewer.layers['noisy stack 2']
  widget.run_button.native.click()
  qtbot.waitUntil(lambda: widget.run_button.enabled, timeout=TIMEOUT_MS)
  assert widget.diagnosis is not None, widget.summary.value
  assert widget.diagnosis.method == 'pairs'  # two captures: Noise2Noise on them
  assert widget.summary.value.startswith(f'{widget.diagnosis.kind} noise, sigma ')
  assert widget.recommended.value == 'pairs'
  assert 'measured from two captures' in widget.report.value
  assert 'Recommended: python train.py' in widget.report.value
  # One noisy picture: its noise, Gaussian of a sigma the sample sets, read back within
  # 15% from the picture's flat patches, and called independent.
  viewer.open_sample('n2n', 'noisy_picture')
  widget.layer.value, widget.second.value = viewer.layers['noisy picture'], None
  widget.axes.value = 'YXC'
  widget.run_button.native.click()
  qtbot.waitUntil(lambda: widget.run_button.enabled, timeout=TIMEOUT_MS)
  assert widget.diagnosis.kind == 'independent', widget.summary.value
  sigma = samples.PICTURE_SIGMA / 255.0  # on the 0-1 scale the diagnosis reads
  assert abs(widget.diagnosis.noise_level - sigma) < 0.15 * sigma, widget.diagnosis.noise_level
  assert widget.recommended.value == widget.diagnosis.method == 'neighbor2neighbor'


def test_train_widget_takes_recorruptions_for_correlated_planes_and_a_3d_method_for_stacks(
    make_napari_viewer, qtbot):
  # Colour noise correlated over 2x2 pixels (lag-1 correlation 0.5) on a flat grey: read
  # from enough flat patches for a noise model, the diagnosis recommends recorruptions,
  # which are 2D only; a stack of the same noise, whose planes the diagnosis reads alike,
  # gets the method the advice names for stacks.
  white = np.random.default_rng(5).standard_normal((3, 129, 129, 3))
  noise = (white[:, 1:, 1:] + white[:, :-1, 1:] + white[:, 1:, :-1] + white[:, :-1, :-1]) / 2
  stack = np.round(128 + 12 * noise).astype(np.uint8)
  viewer = make_napari_viewer()
  widget = _dock(viewer, 'Train')
  for data, name, axes, method in ((stack[0], 'plane', 'YXC', 'recorrupted'),
                                   (stack, 'stack', 'ZYXC', 'neighbor2neighbor')):
    qtbot.waitUntil(lambda: not widget._diagnosing.running, timeout=TIMEOUT_MS)
    widget.data_layers.value = [viewer.add_image(data, name=name, rgb=True)]
    assert widget.axes.value == axes
    qtbot.waitUntil(lambda: 'sigma' in widget.diagnosis.value
                    or 'not diagnosed' in widget.diagnosis.value, timeout=TIMEOUT_MS)
    assert widget.diagnosis.value.startswith('correlated noise'), widget.diagnosis.value
    # What the diagnosis recommended (its report is the tooltip), and what was chosen.
    assert '--method=recorrupted' in widget.diagnosis.tooltip
    assert widget.method.value == method, widget.diagnosis.value
    assert widget.diagnosis.value.endswith(method)


def test_train_widget_trains_a_layer_stops_and_resumes(make_napari_viewer, qtbot, tmp_path):
  viewer = make_napari_viewer()
  layer = viewer.add_image(_noisy_grey(), name='noisy')
  widget = _dock(viewer, 'Train')
  denoise = _dock(viewer, 'Denoise')
  widget.data_layers.value = [layer]
  assert widget.axes.value == 'YX'
  qtbot.waitUntil(lambda: 'sigma' in widget.diagnosis.value
                  or 'not diagnosed' in widget.diagnosis.value, timeout=TIMEOUT_MS)
  # The method the diagnosis recommends for the sample's independent noise is chosen.
  assert 'sigma' in widget.diagnosis.value
  assert widget.method.value == 'neighbor2neighbor', widget.diagnosis.value
  assert widget.diagnosis.value.endswith(widget.method.value)
  widget.model_dir.value = str(tmp_path / 'run')
  # Steps enough that Stop, clicked at the first loss, lands before the end: a loop of 5
  # steps at width 8 takes milliseconds, and the stop reaches the child within 0.1 s.
  widget.steps.value, widget.crop_size.value, widget.batch_size.value = 400, 64, 4
  widget.more.fields['network_width'].value = 8
  widget.more.line.value = 'steps_per_loop=5'
  # No run of this kind on this host yet: the time is measured as the run goes.
  assert widget.time.value == ('known after the first steps (no neighbor2neighbor 2D run on '
                               'this host yet)')
  widget.train_button.native.click()
  qtbot.waitUntil(lambda: bool(widget.plot.steps), timeout=TIMEOUT_MS)
  widget.stop_button.native.click()
  qtbot.waitUntil(lambda: widget.train_button.enabled, timeout=TIMEOUT_MS)
  assert widget.result.stopped and widget.result.step < 400, widget.status.value
  assert widget.train_button.text == 'Resume'
  assert glob.glob(str(tmp_path / 'run' / 'ckpt-*.index'))
  # The run stopped with a checkpoint is Denoise's model now, listed among its choices.
  run = ('trained', str(tmp_path / 'run'))
  assert denoise.model_choice.value == run
  assert run in denoise.model_choice.choices
  stopped_at = widget.result.step
  before = list(widget.plot.steps)
  # The step each call reports it starts from (its first progress report, which the
  # widget hands to the plot's keep_before): from the checkpoint, not from 0.
  starts, keep_before = [], widget.plot.keep_before
  widget.plot.keep_before = lambda step: (starts.append(step), keep_before(step))

  widget.train_button.native.click()
  # The time left, shown from the second loop on (the first one traces the network).
  qtbot.waitUntil(lambda: ' left (' in widget.time.value or widget.train_button.enabled,
                  timeout=TIMEOUT_MS)
  assert re.fullmatch(r'\d+ (s|min) left \([0-9.e-]+ s a step\)', widget.time.value), (
      widget.time.value)
  qtbot.waitUntil(lambda: widget.train_button.enabled, timeout=TIMEOUT_MS)
  assert not widget.result.stopped and widget.result.step == 400, widget.status.value
  assert widget.train_button.text == 'Train'
  assert starts == [stopped_at]
  # The plot went on from where the run stopped: what it showed before the stop kept, then
  # one loss per loop of 5 steps, in order.
  steps = widget.plot.steps
  assert steps == sorted(set(steps)) and steps[-1] == 400
  assert [step for step in steps if step < stopped_at] == [
      step for step in before if step < stopped_at]
  assert min(step for step in steps if step > stopped_at) == stopped_at + 5
  assert all(np.isfinite(widget.plot.losses))
  # The host's speed is recorded, and the time before Train is pressed now comes from it;
  # Steps, set by hand, stays as it was set.
  assert training_time.recorded('neighbor2neighbor 2D')['seconds_per_unit'] > 0
  assert widget.time.value.startswith('about ') and widget.steps.value == 400
  # A Train widget whose Steps is not set by hand starts at what fits the budget here.
  fresh = _dock(viewer, TABS).train
  assert fresh.steps.value == train_widget.STEPS
  fresh.method.value = 'neighbor2neighbor'
  kind, units = fresh._kind_and_units()
  assert kind == 'neighbor2neighbor 2D'
  assert fresh.steps.value == training_time.fitting_steps(kind, units) != train_widget.STEPS
  speed = training_time.recorded(kind)
  assert fresh.steps.value * units * speed['seconds_per_unit'] <= training_time.BUDGET_SECONDS
  # Neighbor2Neighbor: the plot's curve is the reconstruction term, under the raw loss
  # (which adds the regulariser) at every step, and falling as the run trains; the raw
  # loss joins it on demand.
  reconstruction, losses = widget.plot.reconstruction_losses, widget.plot.losses
  assert all(np.isfinite(reconstruction)) and np.all(np.array(reconstruction) <= losses)
  assert np.mean(reconstruction[-5:]) < np.mean(reconstruction[:5]), reconstruction
  np.testing.assert_array_equal(widget.plot.axes.lines[0].get_ydata(), reconstruction)
  widget.raw_loss.value = True
  assert [list(line.get_ydata()) for line in widget.plot.axes.lines] == [reconstruction, losses]
  # Trained on: still the one run trained here, chosen; Denoise denoises with it.
  trained = [choice for choice in denoise.model_choice.choices if choice[0] == 'trained']
  assert trained == [run] and denoise.model_choice.value == run
  output = _denoise(qtbot, denoise, layer)
  assert output is not None and output.name == 'noisy denoised', denoise.status.value


def test_train_widget_s_more_settings_are_fields_of_their_declarations_and_checked(
    make_napari_viewer, notes, tmp_path):
  declared = {spec.flag: spec for spec in settings.settings_of(config_lib.TrainConfig)}
  viewer = make_napari_viewer()
  widget = _dock(viewer, 'Train')
  more = widget.more
  # Each field as its flag is declared: default, range, choices, help.
  width = more.fields['network_width']
  assert (width.value, width.min) == (declared['network_width'].default, 1)
  assert declared['network_width'].help in width.tooltip
  assert more.fields['precision'].choices == config_lib.PRECISIONS
  assert more.fields['learning_rate'].value == 0.0 and more.fields['learning_rate'].min == 0.0
  # The method's own settings follow the method: Neighbor2Neighbor's gamma, blind-spot's
  # fraction and line; none of them for pairs. Inference-time ones are left to the line.
  shown = lambda flag: not more.fields[flag].native.isHidden()
  widget.method.value = 'neighbor2neighbor'
  assert shown('neighbor2neighbor_gamma') and not shown('blind_spot_fraction')
  assert 'neighbor2neighbor_inference_stride' not in more.fields
  widget.method.value = 'blind_spot'
  assert shown('blind_spot_fraction') and shown('blind_spot_line')
  assert not shown('neighbor2neighbor_gamma')
  assert more.fields['blind_spot_line'].choices == declared['blind_spot_line'].choices
  # Settings a diagnosis recommends go into their fields, the others into the line.
  more.set_values({'blind_spot_line': 'rows', 'blind_spot_line_span': 63,
                   'neighbor2neighbor_inference_stride': 2})
  assert (more.fields['blind_spot_line'].value, more.fields['blind_spot_line_span'].value) == (
      'rows', 63)
  assert more.line.value == 'neighbor2neighbor_inference_stride=2'
  more.line.value = ''
  widget.method.value = 'pairs'
  assert not any(shown(flag) for flag in more.fields if flag.startswith(('blind', 'neighbor2')))
  # What the fields and the line give n2n.train_config: values other than the defaults.
  widget.kind.value = 'clean'  # no diagnosis, so no child process: this test is quick
  widget.data_layers.value = [viewer.add_image(_noisy_grey(), name='clean')]
  widget.model_dir.value = str(tmp_path / 'run')
  width.value = 8
  more.line.value = 'rampdown_fraction=0.5 noise_range=0,50 augment_flips=false'
  flags = widget.arguments()[0]
  assert {name: flags[name] for name in ('network_width', 'rampdown_fraction', 'noise_range',
                                         'augment_flips')} == {
      'network_width': 8, 'rampdown_fraction': 0.5, 'noise_range': (0.0, 50.0),
      'augment_flips': False}
  assert 'precision' not in flags and 'seed' not in flags
  # Anything else, in one line naming the flag, before a process starts.
  lines = {'network_widht=8': 'network_widht is not a train.py flag: did you mean '
                              'network_width?',
           'rampdown_fraction=2': '--rampdown_fraction=2.0 must be <= 1',
           'log_every=abc': "--log_every='abc' is not an integer",
           'noise_range=0,a': "--noise_range='0,a' is not a comma-separated list of numbers",
           'crop_size=64': '--crop_size has a field of its own: set it there',
           'network_width=16': '--network_width has a field of its own: set it there',
           'steps_per_loop': "'steps_per_loop': write name=value, as train.py's flags (e.g. "
                             'rampdown_fraction=0.5)'}
  for line in lines:
    more.line.value = line
    widget.train_button.native.click()
  errors = [message for severity, message in notes
            if severity == notifications.NotificationSeverity.ERROR]
  assert errors == [f'n2n: {message}' for message in lines.values()]
  assert widget.train_button.enabled and not widget._call.running


def _network_weights(model_dir):
  """{name: value} of the network's weights in model_dir's newest checkpoint (a Trainer's
  checkpoint keys them under the optimizer's trainable variables, in the network's order)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (loaded here by run_folder too)
  reader = tf.train.load_checkpoint(str(model_dir))
  return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
          if name.startswith('optimizer/_trainable_variables/')}


def _train(qtbot, widget, folder, steps):
  widget.model_dir.value, widget.steps.value = str(folder), steps
  widget.train_button.native.click()
  qtbot.waitUntil(lambda: widget.train_button.enabled, timeout=TIMEOUT_MS)


def test_train_widget_starts_from_a_run_trained_here_and_refuses_another_network(
    make_napari_viewer, qtbot, tmp_path, notes):
  viewer = make_napari_viewer()
  grey = viewer.add_image(_noisy_grey(), name='grey')
  rgb = viewer.add_image(samples.noisy_picture()[0][0][:96, :96], name='rgb', rgb=True)
  widget = _dock(viewer, 'Train')
  start, fields = widget.start_from.choice, widget.more.fields
  camera, fluorescence = ('shipped', 'camera_srgb'), ('shipped', 'fluorescence')
  # The shipped camera model is offered for RGB layers, and chosen.
  widget.kind.value = 'clean'  # no diagnosis of the RGB layer: this one is not trained on
  widget.data_layers.value = [rgb]
  assert start.value == start_from.SCRATCH and camera in start.choices
  start.value = camera
  # Clean grey layers train an RGB network, as clean files do: still the colour model.
  widget.data_layers.value = [grey]
  assert camera in start.choices and fluorescence not in start.choices
  assert start.value == camera
  # --channels=1 in More makes it a grey network: the one-channel model, not the colour one.
  widget.more.line.value = 'channels=1'
  assert fluorescence in start.choices and camera not in start.choices
  assert start.value == start_from.SCRATCH
  widget.more.line.value = ''
  # A clean grey stack trains a grey 3D network, as clean volumes keep their channels.
  stack = viewer.add_image(np.stack([_noisy_grey()] * 4), name='stack')
  widget.data_layers.value = [stack]
  widget.axes.value = 'ZYX'
  assert fluorescence in start.choices and camera not in start.choices
  widget.data_layers.value = [grey]
  # Noisy grey layers train a grey network.
  widget.kind.value = 'noisy'
  assert fluorescence in start.choices and camera not in start.choices
  qtbot.waitUntil(lambda: 'sigma' in widget.diagnosis.value
                  or 'not diagnosed' in widget.diagnosis.value, timeout=TIMEOUT_MS)
  widget.crop_size.value, widget.batch_size.value = 64, 2
  fields['network_width'].value = 8
  widget.more.line.value = 'steps_per_loop=5'
  source = tmp_path / 'source'
  _train(qtbot, widget, source, 10)
  assert widget.result.step == 10, widget.status.value
  # The run trained here is offered. A run started from it (another seed, whose own first
  # weights would be far from these) at the field's least learning rate, 1e-5, for one
  # step: Adam's first step moves each weight by about the rate, so its first checkpoint
  # holds the source's weights within a few 1e-5.
  start.value = ('trained', str(source))
  fields['learning_rate'].value = fields['learning_rate'].step
  fields['seed'].value = 7
  tuned = tmp_path / 'tuned'
  _train(qtbot, widget, tuned, 1)
  assert widget.result.step == 1, widget.status.value
  tuned_weights, source_weights = _network_weights(tuned), _network_weights(source)
  assert tuned_weights.keys() == source_weights.keys() and tuned_weights
  assert max(float(np.abs(tuned_weights[name] - source_weights[name]).max())
             for name in tuned_weights) < 1e-4
  # Another network: a wider one from that run, a grey layer from the shipped camera
  # model's folder (RGB). One line each naming --init_from and the difference, no run.
  fields['network_width'].value = 16
  _train(qtbot, widget, tmp_path / 'wider', 1)
  start.value = start_from.FOLDER
  camera = shipped.folder('camera_srgb')
  widget.start_from.folder.value = camera
  fields['network_width'].value = config_lib.ModelConfig().network_width  # the camera's 48
  _train(qtbot, widget, tmp_path / 'grey', 1)
  errors = [message for severity, message in notes
            if severity == notifications.NotificationSeverity.ERROR]
  assert len(errors) == 2 and not any('\n' in message for message in errors), errors
  assert errors[0].startswith(f'n2n: --init_from={source}: ') and (
      'network_width: 8 -> 16' in errors[0]), errors
  assert errors[1].startswith(f'n2n: --init_from={camera}: ') and (
      'channels: 3 -> 1' in errors[1]), errors
  assert {os.path.basename(os.path.dirname(path)) for path in glob.glob(
      str(tmp_path / '*' / 'ckpt-*.index'))} == {'source', 'tuned'}


def _denoise(qtbot, widget, layer, tta=False):
  widget.layer.value = layer
  widget.tta.value = tta
  widget.denoise_button.native.click()
  qtbot.waitUntil(lambda: widget.denoise_button.enabled, timeout=TIMEOUT_MS)
  return widget.output


def test_denoise_widget_denoises_2d_rgb_and_3d_layers(make_napari_viewer, qtbot, run_folder):
  viewer = make_napari_viewer()
  rng = np.random.default_rng(0)
  grey = viewer.add_image(_noisy_grey(48), name='grey', scale=(0.5, 0.25),
                          translate=(10.0, -4.0), metadata={'acquired': 'today'})
  rgb = viewer.add_image(samples.noisy_picture()[0][0][-40:, :56], name='rgb', rgb=True,
                         metadata={'camera': 'procedural'})
  stack = viewer.add_image(rng.integers(900, 1100, (3, 40, 36), dtype=np.uint16), name='stack',
                           scale=(4.0, 1.0, 1.0), translate=(2.0, 0.0, 0.0),
                           metadata={'z_step_um': 2.0})
  widget = _dock(viewer, 'Denoise')
  widget.model.value = run_folder
  for layer, axes, tta in ((grey, 'YX', True), (rgb, 'YXC', False), (stack, 'ZYX', False)):
    output = _denoise(qtbot, widget, layer, tta)
    assert output is not None and output is not layer, widget.status.value
    assert widget.axes.value == axes
    assert output.name == f'{layer.name} denoised{" (TTA)" if tta else ""}'
    assert output.data.shape == layer.data.shape and output.data.dtype == layer.data.dtype
    assert output.rgb == layer.rgb and output.metadata == layer.metadata
    np.testing.assert_array_equal(output.scale, layer.scale)
    np.testing.assert_array_equal(output.translate, layer.translate)
    assert not np.array_equal(output.data, layer.data)
    assert 'tiles' in widget.status.value or widget.status.value.startswith('added layer')
  assert len(viewer.layers) == 6


def test_denoise_widget_keeps_the_model_loaded_until_it_changes_or_the_widget_closes(
    make_napari_viewer, qtbot, run_folder):
  viewer = make_napari_viewer()
  layer = viewer.add_image(_noisy_grey(48), name='grey')
  widget = _dock(viewer, 'Denoise')
  widget.model.value = run_folder
  # Two clicks, one process, one load: the process says how many models it has loaded.
  first = _denoise(qtbot, widget, layer)
  pid = widget.child_pid
  assert pid is not None and widget.model_loads == 1, widget.status.value
  second = _denoise(qtbot, widget, layer)
  assert widget.child_pid == pid and widget.model_loads == 1
  np.testing.assert_array_equal(first.data, second.data)
  # Another tile size loads the model anew, in a new process; the old one ends at once.
  widget.tile_size.value = 512
  qtbot.waitUntil(lambda: not _alive(pid), timeout=TIMEOUT_MS)
  _denoise(qtbot, widget, layer)
  assert widget.child_pid not in (None, pid) and widget.model_loads == 1
  # Closing the dock ends the process holding the model.
  pid = widget.child_pid
  viewer.window.remove_dock_widget(widget.native)
  qtbot.waitUntil(lambda: not _alive(pid), timeout=TIMEOUT_MS)


def test_denoise_widget_exports_the_model_in_the_process_that_holds_it(
    make_napari_viewer, qtbot, run_folder, tmp_path, notes):
  viewer = make_napari_viewer()
  layer = viewer.add_image(_noisy_grey(48), name='grey')
  widget = _dock(viewer, 'Denoise')
  widget.model.value = run_folder
  _denoise(qtbot, widget, layer)
  pid = widget.child_pid
  widget.show_export.value = True
  export, folder = widget.export, tmp_path / 'export'
  export.output.value = str(folder)
  export.button.native.click()
  assert not widget.denoise_button.enabled  # the one process answers one call at a time
  qtbot.waitUntil(lambda: export.button.enabled, timeout=TIMEOUT_MS)
  assert export.written == [str(folder), str(folder / 'model.onnx'),
                            str(folder / 'bioimageio_model.zip')], export.status.value
  assert (folder / 'saved_model.pb').is_file() and (folder / 'model.onnx').stat().st_size > 0
  assert export.status.value == 'wrote ' + ', '.join(export.written)
  # Exported by the process that holds the model, which holds it still.
  assert widget.child_pid == pid and widget.denoise_button.enabled
  _denoise(qtbot, widget, layer)
  assert widget.child_pid == pid and widget.model_loads == 1
  # Again into the same folder, without Replace: refused in one line, nothing written.
  export.button.native.click()
  qtbot.waitUntil(lambda: export.button.enabled, timeout=TIMEOUT_MS)
  errors = [message for severity, message in notes
            if severity == notifications.NotificationSeverity.ERROR]
  assert len(errors) == 1 and errors[0].startswith('n2n: ') and '\n' not in errors[0], errors
  assert str(folder) in errors[0] and export.status.value.startswith('failed: ')


def _alive(pid):
  """Whether a child process of this one with that id runs (not yet reaped)."""
  return pid in {process.pid for process in multiprocessing.active_children()}


def test_denoise_widget_denoises_an_rgb_photograph_with_the_shipped_camera_model(
    make_napari_viewer, qtbot, notes, tmp_path, monkeypatch):
  # A folder named like the model where napari runs, holding some other run: the widget's
  # choice is the package's model all the same.
  monkeypatch.chdir(tmp_path)
  (tmp_path / 'camera_srgb').mkdir()
  (tmp_path / 'camera_srgb' / 'checkpoint').write_text('not the shipped model')
  viewer = make_napari_viewer()
  photograph = samples.noisy_picture()[0][0][:64, :80]
  rgb = viewer.add_image(photograph, name='photograph', rgb=True)
  grey = viewer.add_image(_noisy_grey(48), name='grey')
  widget = _dock(viewer, 'Denoise')
  widget.model_choice.value = ('shipped', 'camera_srgb')
  assert not widget.model.enabled  # the folder field is not what runs
  output = _denoise(qtbot, widget, rgb)
  assert output is not None, widget.status.value
  model = n2n.Denoiser.load(os.path.join(n2n.__path__[0], 'shipped_models', 'camera_srgb'))
  np.testing.assert_array_equal(output.data, model(photograph, axes='YXC'))
  assert not np.array_equal(output.data, photograph)
  # Layers a shipped model was not trained for (a grey one, 16-bit data) are refused in
  # one line each, as every front door refuses them (shipped.refusal); no layer is added.
  viewer.add_image(grey.data.astype(np.uint16) * 257, name='sixteen')
  for layer in (grey, viewer.layers['sixteen']):
    widget.layer.value = layer
    widget.denoise_button.native.click()
  errors = [message for severity, message in notes
            if severity == notifications.NotificationSeverity.ERROR]
  assert errors == [
      f"n2n: layer '{name}': the model camera_srgb denoises 8-bit RGB (uint8, 3 channels) "
      f'images, not {pixel_type} with 1 channel(s): train one on such images (diagnose.py says '
      'how) or choose another model' for name, pixel_type in ((grey.name, 'uint8'),
                                                              ('sixteen', 'uint16'))], errors
  assert len(viewer.layers) == 4 and widget.denoise_button.enabled


def test_cancel_and_bad_input_are_one_line_notifications(make_napari_viewer, qtbot, tmp_path,
                                                         notes, run_folder):
  viewer = make_napari_viewer()
  layer = viewer.add_image(_noisy_grey(64), name='noisy')
  denoise = _dock(viewer, 'Denoise')
  denoise.model.value = run_folder
  denoise.denoise_button.native.click()
  denoise.cancel_button.native.click()
  qtbot.waitUntil(lambda: denoise.denoise_button.enabled, timeout=TIMEOUT_MS)
  assert denoise.status.value == 'cancelled' and len(viewer.layers) == 1
  assert (notifications.NotificationSeverity.INFO, 'n2n: denoising: cancelled') in notes

  # A folder without a run: the child's ValueError, in one line.
  (tmp_path / 'empty').mkdir()
  denoise.model.value = str(tmp_path / 'empty')
  denoise.denoise_button.native.click()
  qtbot.waitUntil(lambda: denoise.denoise_button.enabled, timeout=TIMEOUT_MS)
  # Refused before anything starts: no model there, no layers to train on.
  denoise.model.value = str(tmp_path / 'model.zip')
  denoise.denoise_button.native.click()
  train = _dock(viewer, 'Train')
  train.train_button.native.click()
  errors = [message for severity, message in notes
            if severity == notifications.NotificationSeverity.ERROR]
  assert len(errors) == 3, errors
  assert all(message.startswith('n2n: ') and '\n' not in message and 'Traceback' not in message
             for message in errors), errors
  assert str(tmp_path / 'empty') in errors[0]
  assert f'no model at {tmp_path / "model.zip"}' in errors[1]
  assert errors[2] == 'n2n: choose the layers to train on'
  assert train.status.value == 'choose the layers to train on'
  assert len(viewer.layers) == 1 and layer.name == 'noisy'


def test_fine_tuning_advice_sets_start_from_and_its_other_flags(make_napari_viewer, qtbot):
  # A diagnosis that advises fine-tuning carries --init_from and the flags the tuned figure
  # used beyond it (shipped_advice's tune_flags): Train puts the model under Start from, the
  # flags in their fields; the rate stays 0, which --init_from's default (1e-4) then sets.
  import dataclasses  # pylint: disable=g-import-not-at-top
  viewer = make_napari_viewer()
  picture = samples.noisy_picture()[0][0][:96, :96]
  layer = viewer.add_image(picture, name='photograph', rgb=True)
  widget = _dock(viewer, 'Train')
  widget.data_layers.value = [layer]
  # The layer's own diagnosis runs first (in a worker); its result is replaced below.
  qtbot.waitUntil(lambda: 'sigma' in widget.diagnosis.value
                  or 'not diagnosed' in widget.diagnosis.value, timeout=TIMEOUT_MS)
  read = n2n.diagnose([picture])
  tuned = dataclasses.replace(read, recommendation=dataclasses.replace(
      read.recommendation, flags=('--init_from=camera_srgb', '--normalization=percentile',
                                  '--noise=none', '--method=recorrupted')))
  widget._diagnosed(tuned)  # pylint: disable=protected-access  (the Diagnose call's result)
  assert widget.start_from.choice.value == ('shipped', 'camera_srgb')
  assert widget.more.fields['normalization'].value == 'percentile'
  assert widget.more.fields['learning_rate'].value == 0.0
  assert 'init_from' not in widget.more.line.value


def test_diagnose_names_the_recommended_model_and_denoise_takes_it_for_that_layer(
    make_napari_viewer, qtbot):
  # A diagnosis that recommends a shipped model as is: the Diagnose tab's Advice row
  # names it (not only the method), and the Denoise tab chooses it, with TTA, for the
  # layer diagnosed, where no model was chosen there yet; a chosen one is left alone.
  import dataclasses  # pylint: disable=g-import-not-at-top
  viewer = make_napari_viewer()
  viewer.add_image(_noisy_grey(), name='other')
  layer = viewer.add_image(_noisy_grey(64), name='grey')
  _, tabs = viewer.window.add_plugin_dock_widget('n2n', TABS)
  diagnose, denoise = tabs.diagnose, tabs.denoise
  denoise.layer.value = viewer.layers['other']
  assert denoise.model_choice.value == denoise_widget.FOLDER and not denoise.tta.value
  diagnose.layer.value = layer
  diagnose.run_button.native.click()
  qtbot.waitUntil(lambda: diagnose.run_button.enabled, timeout=TIMEOUT_MS)
  read = diagnose.diagnosis
  assert read is not None and not read.model, diagnose.summary.value
  assert diagnose.recommended.value == read.method
  # Its result as the advice gives it where a shipped model fits (shipped_advice):
  advised = dataclasses.replace(read, recommendation=dataclasses.replace(
      read.recommendation, model='fluorescence', model_flags=('--tta',)))
  diagnose._show(advised)  # pylint: disable=protected-access  (the Diagnose call's result)
  assert diagnose.recommended.value == 'fluorescence as is (Denoise tab)'
  assert denoise.model_choice.value == ('shipped', 'fluorescence')
  assert denoise.tta.value and denoise.layer.value is layer
  # Fine-tuning advice names the model training starts from.
  tuned = dataclasses.replace(read, recommendation=dataclasses.replace(
      read.recommendation, flags=('--init_from=fluorescence',) + read.recommendation.flags))
  diagnose._show(tuned)  # pylint: disable=protected-access
  assert diagnose.recommended.value == f'{read.method} from fluorescence'
  # A later diagnosis recommending another model replaces the one a diagnosis chose...
  other = dataclasses.replace(read, recommendation=dataclasses.replace(
      read.recommendation, model='camera_srgb', model_flags=()))
  diagnose._show(other)  # pylint: disable=protected-access
  assert denoise.model_choice.value == ('shipped', 'camera_srgb') and not denoise.tta.value
  # ...but a model the person chose stays chosen.
  denoise.model_choice.value = denoise_widget.FOLDER
  denoise.model.value = '/some/run'
  diagnose._show(advised)  # pylint: disable=protected-access
  assert denoise.model_choice.value == denoise_widget.FOLDER
