#!/usr/bin/env bash
# What the launch scripts share to check their command line; sourced by them after they set
# USAGE to their usage line. A bad call prints the usage line and what is wrong to stderr and
# exits with 2, as command-line tools do; -h or --help prints the usage line and the
# environment variables the script reads.

# usage_error MESSAGE
usage_error() {
    echo "usage: $USAGE" >&2
    echo "$(basename "$0"): $1" >&2
    exit 2
}

# print_help: the usage line, then the environment variables that _torchrun.sh (dist_*.sh)
# or _srun.sh (slurm_*.sh) reads, with their defaults
print_help() {
    echo "usage: $USAGE"
    case $(basename "$0") in
    dist_*)
        cat <<'END'
environment (several nodes: run the script on each, with its NODE_RANK):
  NNODES=1               number of nodes
  NODE_RANK=0            this node's rank, 0 to NNODES-1
  MASTER_ADDR=127.0.0.1  address of the node with NODE_RANK=0
  PORT=29500             its port for the rendezvous
END
        ;;
    slurm_*)
        cat <<'END'
environment:
  GPUS=8                     tasks in all, one per GPU
  GPUS_PER_NODE=8            tasks per node
  CPUS_PER_TASK=5            CPUs per task (data loading workers)
  GRES=gpu:$GPUS_PER_NODE    srun --gres; GRES=none on CPU-only nodes
  SRUN_ARGS=""               more srun options, e.g. "--time=4:00:00 --signal=USR1@90"
END
        ;;
    esac
}

# need_arguments "$@": the positional arguments USAGE names before its first [...] are there.
# When some are missing and the last one given is a whole number where NPROC comes later,
# that number is taken as NPROC: what is missing is an argument before it (dist_test.sh
# CONFIG 2 lacks its CHECKPOINT).
need_arguments() {
    if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
        print_help
        exit 0
    fi
    local words names=() word
    read -r -a words <<< "$USAGE"
    for word in "${words[@]:2}"; do  # after "bash tools/NAME.sh"
        [[ $word == \[* ]] && break
        names+=("$word")
    done
    if [ $# -lt ${#names[@]} ]; then
        local missing=("${names[@]:$#}") i taken=""
        if [ $# -ge 1 ] && [[ ${!#} =~ ^[1-9][0-9]*$ ]] && [ "${missing[-1]}" = NPROC ]; then
            missing=("${names[@]:$# - 1:${#missing[@]}}")
            taken="; '${!#}' is taken as NPROC"
        fi
        local said=${missing[0]} verb="is"
        for ((i = 1; i < ${#missing[@]}; i++)); do
            if ((i == ${#missing[@]} - 1)); then
                said+=" and ${missing[i]}"
            else
                said+=", ${missing[i]}"
            fi
            verb="are"
        done
        usage_error "$said $verb missing (got $# of the ${#names[@]} arguments$taken)"
    fi
}

# need_count NAME VALUE [WORD...]: VALUE is a whole number above 0, or one of the WORDs
need_count() {
    local name=$1 value=$2 word
    shift 2
    [[ $value =~ ^[1-9][0-9]*$ ]] && return
    for word in "$@"; do
        [ "$value" = "$word" ] && return
    done
    local hint=""
    if [[ $value == */* || $value =~ \.(py|json|ya?ml|pth|pt)$ ]] || [ -e "$value" ]; then
        hint=": the arguments may be swapped"
    fi
    usage_error "$name must be a number, got $name='$value'$hint"
}

# need_srun_counts: GPUS, GPUS_PER_NODE and CPUS_PER_TASK, when set, are numbers
need_srun_counts() {
    local name
    for name in GPUS GPUS_PER_NODE CPUS_PER_TASK; do
        if [ -n "${!name+set}" ] && ! [[ ${!name} =~ ^[1-9][0-9]*$ ]]; then
            usage_error "$name (from the environment) must be a number, got $name='${!name}'"
        fi
    done
}
