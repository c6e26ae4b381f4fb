#!/usr/bin/env bash
# Train under Slurm, one task per GPU:
#   bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG [WORK_DIR] [train.py args...]
# GPUS, GPUS_PER_NODE, CPUS_PER_TASK, GRES and SRUN_ARGS from the environment (see _srun.sh).
set -euo pipefail
USAGE="bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG [WORK_DIR] [train.py args...]"
. "$(dirname "$0")/_args.sh"
need_arguments "$@"
need_srun_counts
PARTITION=$1
JOB_NAME=$2
ARGS=("$3")
shift 3
if [ $# -ge 1 ] && [[ "$1" != -* ]]; then
    ARGS+=(--work-dir "$1")
    shift
fi
exec bash "$(dirname "$0")/_srun.sh" train "$PARTITION" "$JOB_NAME" "${ARGS[@]}" "$@"
