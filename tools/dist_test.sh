#!/usr/bin/env bash
# Test a checkpoint on NPROC processes per node with torchrun:
#   bash tools/dist_test.sh CONFIG CHECKPOINT NPROC [test.py args...]
set -euo pipefail
USAGE="bash tools/dist_test.sh CONFIG CHECKPOINT NPROC [test.py args...]"
. "$(dirname "$0")/_args.sh"
need_arguments "$@"
need_count NPROC "$3" auto cpu gpu xpu  # torchrun's --nproc-per-node takes these words too
exec bash "$(dirname "$0")/_torchrun.sh" test "$3" "$1" "$2" "${@:4}"
