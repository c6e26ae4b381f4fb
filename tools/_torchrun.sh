#!/usr/bin/env bash
# What dist_train.sh and dist_test.sh share: run tools/TOOL.py under torchrun with
# NPROC processes per node (NNODES, NODE_RANK, MASTER_ADDR, PORT from the environment).
#   bash tools/_torchrun.sh TOOL NPROC [tool args...]
set -euo pipefail
TOOL=$1
NPROC=$2
# As OpenMMLab's scripts do, the project holding tools/ comes first on PYTHONPATH (so its
# custom_imports work without installing it), before what the user set.
export PYTHONPATH="$(cd "$(dirname "$0")/.." && pwd)${PYTHONPATH:+:$PYTHONPATH}"
# no cd: relative paths (the config, CHECKPOINT, --work-dir) mean what the user typed
exec python -m torch.distributed.run \
    --nnodes="${NNODES:-1}" --node_rank="${NODE_RANK:-0}" \
    --master_addr="${MASTER_ADDR:-127.0.0.1}" --master_port="${PORT:-29500}" \
    --nproc_per_node="$NPROC" "$(dirname "$0")/$TOOL.py" "${@:3}" --launcher pytorch
