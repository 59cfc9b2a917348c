"""Finding the files a flag names: folders walked, globs expanded, through tf.io.gfile."""

import os

import tensorflow as tf

from n2n.data import tfrecord


def files_below(directory):
  """Every non-hidden file below directory (recursive), sorted.

  Hidden files and folders (.DS_Store, .ipynb_checkpoints, ...) are never data.
  A folder reached twice through symbolic links is read once.
  """
  paths = []
  visited = set()
  for root, folders, names in tf.io.gfile.walk(directory):
    # A link back up the tree (sub/up -> ..) would repeat every file below it
    # until the system's link depth runs out: each real folder is read once.
    real = os.path.realpath(root) if '://' not in root else root
    if real in visited:
      folders[:] = []
      continue
    visited.add(real)
    folders[:] = [folder for folder in folders if not folder.startswith('.')]
    paths.extend(os.path.join(root, name) for name in names if not name.startswith('.'))
  return sorted(paths)


def is_record_folder(path):
  """True for a dataset folder of TFRecords (manifest.json beside its shards, as
  the dataset writers leave it), rather than a folder of images or scenes."""
  return (tf.io.gfile.isdir(path)
          and tf.io.gfile.exists(os.path.join(path, tfrecord.MANIFEST_NAME))
          and bool(tf.io.gfile.glob(os.path.join(path, '*' + tfrecord.SHARD_SUFFIX))))


def record_files(globs, flag_name='train_data'):
  """TFRecord files named by comma-separated globs or dataset folders.

  A folder stands for its *.tfrecord shards (what datasets/make_tfrecords.py
  writes there); the dataset tool's manifest.json is never a record file, so
  'data/photos/*' works too.

  Returns:
    sorted list of paths.

  Raises:
    ValueError: naming the flag and the glob that matched nothing.
  """
  files = []
  for pattern in (part.strip() for part in globs.split(',')):
    if not pattern:
      continue
    if tf.io.gfile.isdir(pattern):
      pattern = os.path.join(pattern, '*' + tfrecord.SHARD_SUFFIX)
    matched = [path for path in tf.io.gfile.glob(pattern)
               if os.path.basename(path) != tfrecord.MANIFEST_NAME
               and not tf.io.gfile.isdir(path)]
    if not matched:
      raise ValueError(f'--{flag_name}: no file matches {pattern!r}')
    files.extend(matched)
  if not files:
    raise ValueError(f'--{flag_name} is empty')
  return sorted(set(files))
