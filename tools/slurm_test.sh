#!/usr/bin/env bash
# Test a checkpoint under Slurm, one task per GPU:
#   bash tools/slurm_test.sh PARTITION JOB_NAME CONFIG CHECKPOINT [test.py args...]
# GPUS, GPUS_PER_NODE, CPUS_PER_TASK, GRES and SRUN_ARGS from the environment (see _srun.sh).
set -euo pipefail
USAGE="bash tools/slurm_test.sh PARTITION JOB_NAME CONFIG CHECKPOINT [test.py args...]"
. "$(dirname "$0")/_args.sh"
need_arguments "$@"
need_srun_counts
exec bash "$(dirname "$0")/_srun.sh" test "$1" "$2" "$3" "$4" "${@:5}"
