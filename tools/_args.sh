#!/usr/bin/env bash
# What the launch scripts share to check their command line; sourced by them after they set
# USAGE to their usage line. A bad call prints the usage line and what is wrong to stderr and
# exits with 2, as command-line tools do; -h or --help prints the usage line.

# usage_error MESSAGE
usage_error() {
    echo "usage: $USAGE" >&2
    echo "$(basename "$0"): $1" >&2
    exit 2
}

# need_arguments "$@": the positional arguments USAGE names before its first [...] are there
need_arguments() {
    if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
        echo "usage: $USAGE"
        exit 0
    fi
    local words names=() word
    read -r -a words <<< "$USAGE"
    for word in "${words[@]:2}"; do  # after "bash tools/NAME.sh"
        [[ $word == \[* ]] && break
        names+=("$word")
    done
    if [ $# -lt ${#names[@]} ]; then
        local missing=("${names[@]:$#}") i
        local said=${missing[0]} verb="is"
        for ((i = 1; i < ${#missing[@]}; i++)); do
            if ((i == ${#missing[@]} - 1)); then
                said+=" and ${missing[i]}"
            else
                said+=", ${missing[i]}"
            fi
            verb="are"
        done
        usage_error "$said $verb missing (got $# of the ${#names[@]} arguments)"
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
