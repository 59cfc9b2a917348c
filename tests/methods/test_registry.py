"""The method registry: every method declares what the rest of n2n asks of it,
its settings are flags and a config section, and nothing outside n2n/methods/
compares method names."""

import ast
import json
import os

import pytest

from n2n import config as config_lib
from n2n import settings as settings_lib
from n2n.methods import base
from n2n.methods import registry
from tests.conftest import REPO_ROOT


def test_every_method_declares_itself_and_its_settings_are_flags():
  flags = {spec.flag for spec in settings_lib.settings_of(config_lib.TrainConfig)}
  config = config_lib.train_config(train_data='x', model_dir='y', crop_size=64)
  assert registry.NAMES == config_lib.METHODS == ('pairs', 'neighbor2neighbor', 'blind_spot',
                                                  'recorrupted', 'neighbouring_frames')
  for name in registry.NAMES:
    method = registry.get(name)
    assert isinstance(method, base.Method) and method.name == name
    assert method.describe(config) and method.crop_multiple % 32 == 0
    if method.single_image:
      assert method.citations, name  # the export's page cites the method's paper
    if method.settings_class is not None:
      settings = method.settings(config)
      for field in settings.__dataclass_fields__:
        assert method.flag_prefix + field in flags
  assert registry.SINGLE_IMAGE_NAMES == ('neighbor2neighbor', 'blind_spot', 'recorrupted')
  with pytest.raises(ValueError, match=r"--method='noise2self' is not one of pairs, "):
    registry.get('noise2self')


def test_method_settings_flags_reach_their_section_and_unknown_names_are_refused():
  config = config_lib.train_config(train_data='x', model_dir='y', method='blind_spot',
                                   blind_spot_fraction=0.01, neighbor2neighbor_gamma=1.5)
  assert config.method.blind_spot.fraction == 0.01
  assert config.method.neighbor2neighbor.gamma == 1.5
  saved = json.loads(config.to_json())['method']
  assert saved['blind_spot']['fraction'] == 0.01 and saved['neighbor2neighbor']['gamma'] == 1.5
  with pytest.raises(ValueError, match='blind_spot_fractoin: not a setting of TrainConfig'):
    config_lib.train_config(train_data='x', model_dir='y', blind_spot_fractoin=0.01)
  with pytest.raises(ValueError, match='--blind_spot_fraction=0.9 must be <= 0.5'):
    config_lib.train_config(train_data='x', model_dir='y', blind_spot_fraction=0.9)


def _names_a_method(node):
  """`method`, `x.method` or `x.method.name` (the method section's name)."""
  if isinstance(node, ast.Attribute) and node.attr == 'name':
    node = node.value
  return ((isinstance(node, ast.Attribute) and node.attr == 'method')
          or (isinstance(node, ast.Name) and node.id == 'method'))


def _method_name_comparisons(path):
  """Comparisons of a `.method`, `.method.name` or `method` value with a
  string, in one module."""
  tree = ast.parse(open(path).read())
  found = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Compare):
      names = [node.left] + node.comparators
      named_method = any(_names_a_method(item) for item in names)
      strings = any(isinstance(item, (ast.Constant, ast.Tuple, ast.List, ast.Set))
                    for item in names)
      if named_method and strings:
        found.append(f'{os.path.relpath(path, REPO_ROOT)}:{node.lineno}')
  return found


def test_no_module_outside_the_registry_compares_method_names(tmp_path):
  probe = tmp_path / 'probe.py'
  probe.write_text("if config.method.name == 'blind_spot':\n  pass\nok = method in ('pairs',)\n"
                   "old = run.method != 'pairs'\nfine = config.method.name == config.other\n")
  assert len(_method_name_comparisons(probe)) == 3
  found = []
  for folder, _, names in os.walk(os.path.join(REPO_ROOT, 'n2n')):
    if os.path.basename(folder) != 'methods':
      found += [hit for name in sorted(names) if name.endswith('.py')
                for hit in _method_name_comparisons(os.path.join(folder, name))]
  assert not found, found


def _n2n(stride, inference_stride, orientations):
  return {'neighbor2neighbor_stride': stride,
          'neighbor2neighbor_inference_stride': inference_stride,
          'neighbor2neighbor_inference_orientations': orientations}


def _blind_spot(stride, inference_stride, orientations, **others):
  return {'blind_spot_stride': stride, 'blind_spot_inference_stride': inference_stride,
          'blind_spot_inference_orientations': orientations,
          **{f'blind_spot_{name}': value for name, value in others.items()}}


# Correlated noise in 2D gets the 8 orientations (test-time augmentation inside the scheme);
# other noise gets 1.
@pytest.mark.parametrize('method,kind,crop,given,chosen', [
    ('neighbor2neighbor', 'correlated', 128, {}, _n2n(2, 2, 8)),
    # A crop that 2 x 64 does not divide keeps the plain method.
    ('neighbor2neighbor', 'correlated', 64, {}, _n2n(1, 1, 8)),
    ('neighbor2neighbor', 'independent', 128, {}, _n2n(1, 1, 1)),
    ('neighbor2neighbor', 'rows', 128, {}, _n2n(1, 1, 1)),
    # Blind-spot trains at stride 4 and denoises at 1 (AP-BSN's asymmetry)...
    ('blind_spot', 'correlated', 128, {}, _blind_spot(4, 1, 8, line='none')),
    # ... or at the largest stride the crop allows (32 x 2 divides 64).
    ('blind_spot', 'correlated', 64, {}, _blind_spot(2, 1, 8, line='none')),
    ('blind_spot', 'rows', 128, {}, _blind_spot(1, 1, 1, line='rows', line_span=63)),
    ('blind_spot', 'rows and columns', 128, {}, _blind_spot(1, 1, 1, line='rows', line_span=63)),
    # The span fits the crop: 32 pixels hold a line of 31.
    ('blind_spot', 'columns', 32, {}, _blind_spot(1, 1, 1, line='columns', line_span=31)),
    # What a flag gave stays: only the rest is chosen.
    ('blind_spot', 'correlated', 128, {'blind_spot_stride': 2, 'blind_spot_line': 'rows'},
     {'blind_spot_inference_stride': 1, 'blind_spot_line_span': 63,
      'blind_spot_inference_orientations': 8}),
    ('blind_spot', 'rows', 128, {'blind_spot_line_span': 9},
     {'blind_spot_stride': 1, 'blind_spot_inference_stride': 1, 'blind_spot_line': 'rows',
      'blind_spot_inference_orientations': 1}),
    ('neighbor2neighbor', 'correlated', 128,
     {'neighbor2neighbor_inference_stride': 1, 'neighbor2neighbor_inference_orientations': 1},
     {'neighbor2neighbor_stride': 2}),
    ('pairs', 'correlated', 128, {}, {}),
])
def test_the_diagnosis_chooses_only_the_settings_no_flag_gave(method, kind, crop, given, chosen):
  config = config_lib.train_config(train_data='x', model_dir='y', method=method,
                                   crop_size=crop, **given)
  updated, said = config_lib.with_settings_for_noise(config, kind)
  assert said == chosen
  for flag, value in {**given, **chosen}.items():
    assert getattr(getattr(updated.method, method), flag[len(method) + 1:]) == value
  # Chosen once, nothing is left to choose.
  assert config_lib.with_settings_for_noise(updated, kind)[1] == {}


def test_every_method_has_a_pipeline_that_declares_it():
  from n2n.pipelines import base as pipelines_base  # pylint: disable=g-import-not-at-top
  from n2n.pipelines import registry as pipelines  # pylint: disable=g-import-not-at-top
  for name in registry.NAMES:
    pipeline = pipelines.get(name)
    assert isinstance(pipeline, pipelines_base.Pipeline)
    assert pipeline.method is registry.get(name)
  with pytest.raises(ValueError, match=r"--method='noise2self' is not one of pairs, "):
    pipelines.get('noise2self')


def test_the_method_section_holds_a_part_for_each_method_with_settings_and_no_other():
  import dataclasses  # pylint: disable=g-import-not-at-top
  parts = {field.name: field.metadata for field in dataclasses.fields(config_lib.MethodConfig)
           if 'section' in field.metadata}
  with_settings = [name for name in registry.NAMES
                   if registry.get(name).settings_class is not None]
  assert sorted(parts) == sorted(with_settings)
  for name, meta in parts.items():
    assert meta['section'] is registry.get(name).settings_class
    assert meta['flag_prefix'] == registry.get(name).flag_prefix


def test_methods_help_names_every_method():
  help_text = next(spec.help for spec in settings_lib.settings_of(config_lib.TrainConfig)
                   if spec.flag == 'method')
  for name in registry.NAMES:
    assert f'{name}: ' in help_text and registry.get(name).summary in help_text


@pytest.mark.parametrize('method', ['neighbor2neighbor', 'blind_spot', 'recorrupted'])
def test_orientations_other_than_one_or_eight_are_refused_naming_the_flag(method):
  with pytest.raises(ValueError, match=rf'^--{method}_inference_orientations=4: 1 \(off\), 8 '):
    config_lib.train_config(train_data='x', model_dir='y', method=method, noise='none',
                            **{f'{method}_inference_orientations': 4})


@pytest.mark.parametrize('method', ['neighbor2neighbor', 'blind_spot', 'recorrupted'])
def test_every_single_image_method_refuses_clean_targets_and_bernoulli_noise(method):
  with pytest.raises(ValueError, match=rf'^--target=clean trains on clean targets; '
                                       rf'--method={method} trains from single noisy images'):
    config_lib.train_config(train_data='x', model_dir='y', method=method, noise='none',
                            target='clean')
  with pytest.raises(ValueError, match=rf'^--noise=bernoulli needs the target\'s kept-pixel '
                                       rf'mask, which --method={method} has no second copy'):
    config_lib.train_config(train_data='x', model_dir='y', method=method, noise='bernoulli')
