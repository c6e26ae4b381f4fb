#!/usr/bin/env bash
# Train on NPROC processes per node with torchrun:
#   bash tools/dist_train.sh CONFIG NPROC [train.py args...]
# Several nodes: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
CONFIG=$1
NPROC=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
cd "$(dirname "$0")/.."
exec python -m torch.distributed.run \
    --nnodes="$NNODES" --node_rank="$NODE_RANK" --master_addr="$MASTER_ADDR" \
    --nproc_per_node="$NPROC" --master_port="$PORT" \
    tools/train.py "$CONFIG" --launcher pytorch "${@:3}"
