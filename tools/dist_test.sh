#!/usr/bin/env bash
# Test a checkpoint on NPROC processes per node with torchrun:
#   bash tools/dist_test.sh CONFIG CHECKPOINT NPROC [test.py args...]
set -euo pipefail
CONFIG=$1
CHECKPOINT=$2
NPROC=$3
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
cd "$(dirname "$0")/.."
exec python -m torch.distributed.run \
    --nnodes="$NNODES" --node_rank="$NODE_RANK" --master_addr="$MASTER_ADDR" \
    --nproc_per_node="$NPROC" --master_port="$PORT" \
    tools/test.py "$CONFIG" "$CHECKPOINT" --launcher pytorch "${@:4}"
