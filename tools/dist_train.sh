#!/usr/bin/env bash
# Train on NPROC processes per node with torchrun:
#   bash tools/dist_train.sh CONFIG NPROC [train.py args...]
# Several nodes: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
USAGE="bash tools/dist_train.sh CONFIG NPROC [train.py args...]"
. "$(dirname "$0")/_args.sh"
need_arguments "$@"
need_count NPROC "$2" auto cpu gpu xpu  # torchrun's --nproc-per-node takes these words too
exec bash "$(dirname "$0")/_torchrun.sh" train "$2" "$1" "${@:3}"
