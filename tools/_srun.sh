#!/usr/bin/env bash
# What slurm_train.sh and slurm_test.sh share: run tools/TOOL.py as a Slurm job step with one
# task per GPU, every task started with --launcher slurm.
#   bash tools/_srun.sh TOOL PARTITION JOB_NAME [tool args...]
# From the environment (OpenMMLab's names and defaults):
#   GPUS=8           tasks in all (one per GPU)
#   GPUS_PER_NODE=8  tasks per node
#   CPUS_PER_TASK=5  CPUs per task (data loading workers)
#   GRES=gpu:$GPUS_PER_NODE   generic resources per node; GRES=none on CPU-only nodes
#   SRUN_ARGS=""     more srun options, e.g. "--time=4:00:00 --signal=USR1@90"
# A task that fails ends the whole step (--kill-on-bad-exit), so no rank waits for a dead one.
set -euo pipefail
TOOL=$1
PARTITION=$2
JOB_NAME=$3
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
GRES=${GRES:-gpu:${GPUS_PER_NODE}}
read -r -a EXTRA_ARGS <<< "${SRUN_ARGS:-}"
GRES_ARGS=()
if [ "$GRES" != "none" ]; then
    GRES_ARGS=(--gres="$GRES")
fi
# As OpenMMLab's scripts do, the project holding tools/ comes first on PYTHONPATH (so its
# custom_imports work without installing it), before what the user set.
export PYTHONPATH="$(cd "$(dirname "$0")/.." && pwd)${PYTHONPATH:+:$PYTHONPATH}"
# no cd: relative paths (the config, CHECKPOINT, --work-dir) mean what the user typed
exec srun --partition="$PARTITION" --job-name="$JOB_NAME" "${GRES_ARGS[@]}" \
    --ntasks="$GPUS" --ntasks-per-node="$GPUS_PER_NODE" --cpus-per-task="$CPUS_PER_TASK" \
    --kill-on-bad-exit=1 "${EXTRA_ARGS[@]}" \
    python -u "$(dirname "$0")/$TOOL.py" "${@:4}" --launcher slurm
