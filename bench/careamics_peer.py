"""CAREamics (N2V2, and structN2V on row noise), the maintained blind-spot peer, on
one "Real (spatially correlated) noise" dataset of docs/results.md: trained on
the same first captures for the same wall time as n2n's run of the same family,
then denoising them and the validation scenes' first captures.

CAREamics needs PyTorch: run this with a Python that has it, never n2n's
environment (an optional extra, never in the tests; it imports no n2n code):

  python -m venv /tmp/peers && /tmp/peers/bin/pip install torch==2.13.0 careamics
  /tmp/peers/bin/python -m bench.careamics_peer --dataset_dir=data/correlated/camera \
      --seconds=300 --output_dir=/tmp/careamics/n2v2/correlated_camera
  python -m bench.correlated_peers --key=careamics_n2v2 --outputs=/tmp/careamics/n2v2 \
      --datasets=correlated_camera

For the results page, --seconds was each dataset's runs/cpu/correlated_<dataset>_blind_spot
wall_seconds in docs/results/results.json (_blind_spot_scheme's for structN2V on the
sCMOS data, --struct_axis=horizontal), the outputs scored with --key=careamics_n2v2 and
careamics_structn2v; and once --seconds=600 on the camera data, --key=careamics_n2v2_600s.

It writes OUTPUT_DIR/{own_captures,validation}/SCENE.tif (float32, the
captures' own units) and OUTPUT_DIR/careamics.json (what ran);
bench/correlated_peers.py scores them exactly as n2n's runs are scored.
CAREamics' own defaults throughout (its create_n2v_config: mean/std
normalisation, its masking, augmentations, optimiser and schedule), N2V2 on,
and what its factory makes mandatory: 64x64 patches, batch 16 (the pixels of
n2n's 128x128 x 4 per step) and the wall time (Lightning's max_time; epochs
unbounded otherwise).
"""

import argparse
import json
import os
import time

import imageio.v3 as iio
import numpy as np


def read_capture(path):
  """[H, W] or [H, W, C] array of a PNG capture; refuses 16-bit colour PNG, which
  Pillow silently reads as 8-bit."""
  with open(path, 'rb') as png:
    header = png.read(26)
  if header[24] == 16 and header[25] in (2, 6):
    raise SystemExit(f'{path}: 16-bit colour PNG, which this reader would read wrong')
  return iio.imread(path)


def first_captures(folder):
  """{scene: array} of every scene folder's capture_00.png under folder."""
  return {scene: read_capture(os.path.join(folder, scene, 'capture_00.png'))
          for scene in sorted(os.listdir(folder))}


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--dataset_dir', required=True,
                      help='data/correlated/<dataset> (train_raw/ and val/ scene folders)')
  parser.add_argument('--output_dir', required=True)
  parser.add_argument('--seconds', type=float, required=True, help='Training wall time.')
  parser.add_argument('--struct_axis', default='none', choices=('none', 'horizontal', 'vertical'),
                      help='structN2V mask (horizontal: along rows).')
  parser.add_argument('--struct_span', type=int, default=5, help='CAREamics\' default 5.')
  args = parser.parse_args()
  # pylint: disable=g-import-not-at-top  (the optional peer)
  import careamics
  from careamics import CAREamist
  from careamics.config import create_n2v_config
  from careamics.config import create_structn2v_config

  train = first_captures(os.path.join(args.dataset_dir, 'train_raw'))
  val = first_captures(os.path.join(args.dataset_dir, 'val'))
  example = next(iter(train.values()))
  axes = 'YXC' if example.ndim == 3 else 'YX'
  common = dict(experiment_name='peer', data_type='array', axes=axes, patch_size=[64, 64],
                batch_size=16, num_epochs=100000, use_n2v2=True,
                n_channels=example.shape[-1] if example.ndim == 3 else None)
  if args.struct_axis == 'none':
    config = create_n2v_config(**common)
  else:
    config = create_structn2v_config(struct_n2v_axes=args.struct_axis,
                                     struct_n2v_span=args.struct_span, **common)
  config.training_config.trainer_params['max_time'] = {'seconds': args.seconds}
  work_dir = os.path.join(args.output_dir, 'work')
  careamist = CAREamist(config, work_dir=work_dir, enable_progress_bar=False)
  started = time.perf_counter()
  careamist.train(train_data=[image.astype(np.float32) for image in train.values()])
  trained = time.perf_counter() - started
  for part, images in (('own_captures', train), ('validation', val)):
    os.makedirs(os.path.join(args.output_dir, part), exist_ok=True)
    for scene, image in images.items():
      predicted, _ = careamist.predict(image.astype(np.float32), axes=axes, data_type='array',
                                       tile_size=(256, 256), tile_overlap=(48, 48))
      denoised = np.asarray(predicted[0], np.float32).reshape(image.shape)
      iio.imwrite(os.path.join(args.output_dir, part, f'{scene}.tif'), denoised)
  with open(os.path.join(args.output_dir, 'careamics.json'), 'w') as out:
    json.dump({'careamics': careamics.__version__, 'struct_axis': args.struct_axis,
               'struct_span': args.struct_span, 'seconds_asked': args.seconds,
               'seconds_trained': round(trained, 1), 'steps': int(careamist.trainer.global_step),
               'patch_size': 64, 'batch_size': 16, 'n2v2': True}, out, indent=1)
  print(f'trained {trained:.0f} s; outputs in {args.output_dir}')


if __name__ == '__main__':
  main()
