#!/usr/bin/env bash
# Test a checkpoint on NPROC processes per node with torchrun:
#   bash tools/dist_test.sh CONFIG CHECKPOINT NPROC [test.py args...]
set -euo pipefail
exec bash "$(dirname "$0")/_torchrun.sh" test "$3" "$1" "$2" "${@:4}"
