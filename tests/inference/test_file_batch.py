"""denoise.py's batch with a stand-in network: skips, and the read-ahead and
write-behind stages keeping every file and the batch's order."""

import numpy as np
import pytest

from n2n.data import native_images
from n2n.inference import file_batch
from n2n.inference import noisy_files
from n2n.inference import serving


def _identity(values):
  return values


def _write(path, array):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_bytes(native_images.encode_pages([array], native_images.output_family(str(path))))


def test_unreadable_files_are_skipped_and_listed(tmp_path):
  _write(tmp_path / 'in' / 'a.png', np.full((4, 4, 3), 7, np.uint8))
  (tmp_path / 'in' / 'broken.png').write_bytes(b'\x89PNG\r\n\x1a\n nope')
  jobs = noisy_files.plan_jobs(noisy_files.find_inputs(str(tmp_path / 'in')), str(tmp_path / 'out'),
                             'auto', False)
  summary = file_batch.denoise_files(jobs, _identity, serving.without_run(3))
  assert summary.written == [str(tmp_path / 'out' / 'a.png')]
  assert [path for path, _ in summary.skipped] == [str(tmp_path / 'in' / 'broken.png')]
  (page,) = native_images.read_pages(summary.written[0])
  assert (page == 7).all()


@pytest.mark.parametrize('prefetch', [0, 1, 3])
def test_reading_ahead_and_writing_behind_keep_every_file_and_the_batch_order(tmp_path, prefetch,
                                                                             monkeypatch):
  for index in range(7):
    _write(tmp_path / 'in' / f'{index}.png', np.full((4, 4, 3), 10 * index, np.uint8))
  (tmp_path / 'in' / '3.png').write_bytes(b'\x89PNG\r\n\x1a\n nope')  # fails while read
  jobs = noisy_files.plan_jobs(noisy_files.find_inputs(str(tmp_path / 'in')), str(tmp_path / 'out'),
                             'auto', False)
  encode = native_images.encode_pages

  def encode_failing_on_fifties(pages, family, **options):
    if (pages[0] == 50).all():
      raise ValueError('disk full')  # fails while written, on the writer thread
    return encode(pages, family, **options)

  monkeypatch.setattr(native_images, 'encode_pages', encode_failing_on_fifties)
  summary = file_batch.denoise_files(jobs, _identity, serving.without_run(3), prefetch=prefetch)
  assert summary.written == [str(tmp_path / 'out' / f'{index}.png') for index in (0, 1, 2, 4, 6)]
  assert [(path.rsplit('/', 1)[1], reason) for path, reason in summary.skipped][1] == (
      '5.png', 'disk full')
  for index in (0, 1, 2, 4, 6):
    (page,) = native_images.read_pages(str(tmp_path / 'out' / f'{index}.png'))
    assert (page == 10 * index).all()
  assert not list((tmp_path / 'out').glob('*.partial'))
