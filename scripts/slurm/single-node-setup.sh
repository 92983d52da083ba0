#!/usr/bin/env bash
# A one-machine Slurm cluster (this host is controller and only compute node) to try
# scripts/slurm-sweep.sh without a real cluster. Debian/Ubuntu, as root; not used by CI.
#
#   scripts/slurm/single-node-setup.sh          # install if needed, configure, start
#   scripts/slurm/single-node-setup.sh --stop   # stop the daemons it started
#
# Safe to rerun: packages are installed only when missing, the munge key is kept, slurm.conf is
# rewritten, and a daemon whose pid file names a live process is left running.
# Without systemd (containers) the daemons are started directly: munged, slurmctld, slurmd.
# There is no slurmdbd, so `sacct` has no accounting database; finished jobs are recorded by
# jobcomp/filetxt in /var/log/slurm/jobcomp.log (read with `sacct --completion`).
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "single-node-setup.sh: must run as root (it installs packages and starts daemons)" >&2
    exit 1
fi

CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
MUNGE_PID=/run/munge/munged.pid

alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

if [[ ${1:-} == --stop ]]; then
    for f in "$SLURMD_PID" "$CTLD_PID" "$MUNGE_PID"; do
        if alive "$f"; then
            pid=$(cat "$f")
            kill "$pid" && echo "stopped $(basename "$f" .pid) ($pid)"
        fi
    done
    exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm munge
fi

# munge: one key shared by every node (here: one node). The package normally creates it.
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! alive "$MUNGE_PID"; then
    runuser -u munge -- /usr/sbin/munged --pid-file="$MUNGE_PID"
fi
munge -n | unmunge >/dev/null

HOST=$(hostname -s)
CPUS=$(nproc)
install -d -o slurm -g slurm -m 0755 /var/spool/slurmctld /var/log/slurm
install -d -m 0755 /var/spool/slurmd
cat >/etc/slurm/slurm.conf <<EOF
# Written by satquic's scripts/slurm/single-node-setup.sh: one node, controller and compute.
ClusterName=satquic
SlurmctldHost=$HOST
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# No cgroups needed (containers, hosts without systemd).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# One job per core, so the array's tasks share the node.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
NodeName=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

if ! alive "$CTLD_PID"; then
    slurmctld
else
    scontrol reconfigure
fi
if ! alive "$SLURMD_PID"; then
    slurmd
fi

# Wait until the node is schedulable.
for _ in $(seq 1 30); do
    state=$(sinfo -h -n "$HOST" -o %t 2>/dev/null || true)
    case $state in
    idle* | mix* | alloc*) break ;;
    down* | drain*) scontrol update NodeName="$HOST" State=RESUME 2>/dev/null || true ;;
    esac
    sleep 1
done
sinfo
