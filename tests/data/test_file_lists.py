import os

import pytest

from n2n.data import file_lists


def test_files_below_skips_hidden_files_and_folders(tmp_path):
  (tmp_path / 'a.png').write_bytes(b'x')
  (tmp_path / 'sub').mkdir()
  (tmp_path / 'sub' / 'b.png').write_bytes(b'x')
  (tmp_path / '.DS_Store').write_bytes(b'x')
  (tmp_path / '.ipynb_checkpoints').mkdir()
  (tmp_path / '.ipynb_checkpoints' / 'c.png').write_bytes(b'x')
  assert file_lists.files_below(str(tmp_path)) == [str(tmp_path / 'a.png'),
                                               str(tmp_path / 'sub' / 'b.png')]


def test_a_dataset_folder_or_its_star_glob_names_its_shards_not_the_manifest(tfrecord_dir):
  shards = sorted(str(path) for path in tfrecord_dir.glob('*.tfrecord'))
  assert len(shards) == 2 and (tfrecord_dir / 'manifest.json').exists()
  assert file_lists.record_files(str(tfrecord_dir)) == shards
  assert file_lists.record_files(f'{tfrecord_dir}/*') == shards
  assert file_lists.record_files(f'{shards[0]}, {shards[1]}') == shards


def test_glob_matching_nothing_names_the_flag_and_glob(tmp_path):
  with pytest.raises(ValueError, match=r"--train_data: no file matches '.*nothing-\*'"):
    file_lists.record_files(str(tmp_path / 'nothing-*'))
  with pytest.raises(ValueError, match=r'--val_data is empty'):
    file_lists.record_files(' , ', flag_name='val_data')


def test_a_link_back_up_the_tree_lists_each_file_once(tmp_path):
  (tmp_path / 'sub').mkdir()
  (tmp_path / 'sub' / 'a.png').write_bytes(b'x')
  (tmp_path / 'sub' / 'up').symlink_to('..')  # a loop: sub/up/sub/up/...
  (tmp_path / 'again').symlink_to('sub')  # the same folder under a second name
  found = file_lists.files_below(str(tmp_path))
  assert len(found) == 1 and os.path.samefile(found[0], tmp_path / 'sub' / 'a.png')
