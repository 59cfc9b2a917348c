import pytest

from n2n import config as config_lib
from n2n import run_dir


def _config(model_dir, channels=3):
  return config_lib.train_config(train_data='x', model_dir=str(model_dir),
                                channels=channels)


def test_config_round_trips_and_a_missing_one_reads_as_none(tmp_path):
  assert run_dir.read_config(str(tmp_path)) is None
  config = _config(tmp_path)
  run_dir.write_config(str(tmp_path), config)
  saved = run_dir.read_config(str(tmp_path))
  assert config_lib.read_train_config(saved) == config
  assert not list(tmp_path.glob('*.tmp'))


def test_a_different_network_is_refused_naming_the_field(tmp_path):
  run_dir.write_config(str(tmp_path), _config(tmp_path))
  run_dir.check_compatible(str(tmp_path), _config(tmp_path))
  with pytest.raises(ValueError, match=r'holds a different network \(channels: 3 -> 1\)'):
    run_dir.check_compatible(str(tmp_path), _config(tmp_path, channels=1))


def test_invalid_json_and_missing_checkpoints_are_named(tmp_path):
  (tmp_path / 'config.json').write_text('{not json')
  with pytest.raises(ValueError, match='config.json is not valid JSON'):
    run_dir.read_config(str(tmp_path))
  with pytest.raises(ValueError, match="no checkpoint in '"):
    run_dir.resolve_checkpoint(str(tmp_path))
  with pytest.raises(ValueError, match='ckpt-5.* is missing or incomplete'):
    run_dir.resolve_checkpoint(str(tmp_path / 'ckpt-5'))
  (tmp_path / 'ckpt-5.index').write_bytes(b'')
  with pytest.raises(ValueError, match=r'ckpt-5.* is incomplete \(no .data files\)'):
    run_dir.resolve_checkpoint(str(tmp_path / 'ckpt-5'))
