#!/usr/bin/env bash
# A single-node Slurm for the tests: Debian's munge, slurmctld and slurmd on this machine.
#
#   slurm_cluster.sh install        apt-get install the packages (root; .ci/run calls it)
#   slurm_cluster.sh start DIR      write DIR/slurm.conf, start munged, slurmctld and slurmd,
#                                   wait until the node takes jobs; prints SLURM_CONF=DIR/slurm.conf
#                                   (ports: SLURMCTLD_PORT, SLURMD_PORT, default 16817, 16818)
#   slurm_cluster.sh stop DIR       stop the daemons started for DIR
#
# The cluster's configuration and state stay in DIR: clients find it through SLURM_CONF, so
# nothing under /etc/slurm is touched. The node offers 4 CPUs whatever the machine has
# (config_overrides), so `srun -n 2` fits beside a batch step on a 2-core machine.
set -euo pipefail

install() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
        return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
}

start() {
    local dir="$1" node
    node="$(hostname -s)"
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    cat > "$dir/slurm.conf" <<CONF
ClusterName=runnerxtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmdPort=${SLURMD_PORT:-16818}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
JobRequeue=1
KillWait=10
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    if ! munge -n >/dev/null 2>&1; then  # no munged answering yet
        mkdir -p /run/munge /var/log/munge /var/lib/munge
        chown munge:munge /run/munge /var/log/munge /var/lib/munge
        [ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
        runuser -u munge -- munged
    fi
    slurmctld -i
    slurmd
    for _ in $(seq 1 60); do
        if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
            echo "SLURM_CONF=$SLURM_CONF"
            return 0
        fi
        sleep 0.5
    done
    echo "the Slurm node did not come up; logs in $dir/log" >&2
    sinfo >&2 || true
    tail -n 20 "$dir"/log/*.log >&2 || true
    return 1
}

stop() {
    local dir="$1" pid
    for name in slurmd slurmctld; do
        if [ -s "$dir/$name.pid" ]; then
            pid="$(cat "$dir/$name.pid")"
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        fi
    done
}

"$@"
