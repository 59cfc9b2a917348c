#!/bin/bash
# Trains the same short deterministic runs (--deterministic, float32, seed 3) at
# two commits and prints each run's logged losses and final PSNR: a refactor
# that claims "no behaviour change" must print the same lines for both.
#
#   bash bench/compare_commits.sh daa6c09 HEAD "pairs neighbor2neighbor"
#
# Run from the repository root with .venv set up (README). Each commit is
# checked out in a temporary worktree; records are built once, by the first
# (PYTHONPATH: that commit's n2n, not the one .venv may have installed).
set -euo pipefail
OLD=${1:?first commit}; NEW=${2:-HEAD}; METHODS=${3:-"pairs neighbor2neighbor blind_spot"}
ROOT=$(pwd); PY=$ROOT/.venv/bin/python
WORK=$(mktemp -d); trap 'git -C "$ROOT" worktree remove --force "$WORK/old" >/dev/null 2>&1; git -C "$ROOT" worktree remove --force "$WORK/new" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
git worktree add --detach "$WORK/old" "$OLD" >/dev/null 2>&1
git worktree add --detach "$WORK/new" "$NEW" >/dev/null 2>&1
(cd "$WORK/old" && PYTHONPATH="$WORK/old" $PY datasets/make_tfrecords.py --input_dir=datasets/demo/train \
   --output_dir="$WORK/records" >/dev/null 2>&1)
COMMON="--train_data=$WORK/records --val_data=datasets/demo/val --noise=gaussian --noise_range=25,25
  --eval_noise_levels=25 --crop_size=64 --batch_size=4 --train_steps=40 --steps_per_loop=10
  --log_every=10 --eval_every=40 --checkpoint_every=40 --precision=float32 --deterministic
  --seed=3 --learning_rate=1e-3"
for method in $METHODS; do
  for tree in old new; do
    log="$WORK/${tree}_$method.log"
    (cd "$WORK/$tree" && $PY train.py $COMMON --method=$method --model_dir="$WORK/${tree}_$method" \
       > "$log" 2>&1)
    echo "$tree $method: $(grep -o 'loss [0-9.e-]*' "$log" | tr '\n' ' ')| $(grep -o 'Evaluation at step 40: .*' "$log")"
  done
done
