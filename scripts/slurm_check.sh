#!/bin/bash
# `make slurm`: cluster/slurm/course-array.sbatch on a real Slurm, a one-node cluster on this machine.
#
#   OUT=build/slurm bash scripts/slurm_check.sh      (the Makefile passes OUT; run it as root, Debian or Ubuntu)
#
# 1. Installs Debian's slurm-wlm and munge with apt-get, when they are missing.
# 2. Writes a minimal slurm.conf for one node, this machine, into OUT/conf: no cgroups
#    (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none) and no accounting, so it runs in a container
#    without systemd. Slurm's own commands find it through SLURM_CONF; /etc/slurm is not touched.
# 3. Starts munged (unless one runs already), slurmctld and slurmd in the background.
# 4. Submits the shipped script as a 2-task array job on tests/fixtures/shard_grid.yaml (4 runs of two
#    small notebooks without TensorFlow; two runs fail on purpose), and waits for it and its merge job.
# 5. Runs the same grid unsharded and compares the two reports (python -m tests.tools.batch.report_diff).
# Every daemon it started is stopped at the end, however the script ends. Exit status 0: the reports agree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-build/slurm}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
begin=$(date +%s)
export COURSE_OFFLINE=1 DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" != 0 ]; then
  echo "make slurm: run it as root (it installs packages and starts Slurm's daemons)" >&2
  exit 2
fi
if [ ! -x .venv/bin/course ]; then
  echo "make slurm: no .venv/bin/course here - run make venv first" >&2
  exit 2
fi

# 1. Packages.
missing=()
for package in slurm-wlm munge; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "slurm 1/5: installing ${missing[*]} (apt-get)"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "slurm 1/5: slurm-wlm and munge are installed"
fi
installed=$(date +%s)

# 2. slurm.conf for one node: this machine, with its cores and most of its memory.
conf=$OUT/conf
rm -rf "$conf" "$OUT/state" "$OUT/spool" "$OUT/parts" "$OUT/whole"
mkdir -p "$conf" "$OUT/state" "$OUT/spool"
host=$(hostname -s)
cpus=$(nproc)
memory=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024 * 3 / 4 ))  # MiB
cat > "$conf/slurm.conf" <<CONF
ClusterName=course
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$OUT/state
SlurmdSpoolDir=$OUT/spool
SlurmctldPidFile=$OUT/state/slurmctld.pid
SlurmdPidFile=$OUT/spool/slurmd.pid
SlurmctldLogFile=$OUT/slurmctld.log
SlurmdLogFile=$OUT/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=course Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$conf/slurm.conf

# 3. The daemons, stopped at the end whatever happens (only the ones started here).
pids=()
stop() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do  # munged is not this shell's child: wait for it by its pid
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}
trap stop EXIT
if ! pgrep -x munged >/dev/null; then  # munged forks into the background and writes its pid file
  mkdir -p /run/munge
  chown munge:munge /run/munge
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  pids+=("$(cat /run/munge/munged.pid)")
fi
for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.2; done
/usr/sbin/slurmctld -D -f "$SLURM_CONF" >"$OUT/slurmctld.stderr" 2>&1 &
pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" >"$OUT/slurmd.stderr" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -qx idle && break
  sleep 0.2
done
echo "slurm 2-3/5: slurmctld and slurmd are up: $(sinfo -h -o '%P %D node(s) %c CPU(s) %t')"
started=$(date +%s)

# 4. The shipped script, as 2 shards; small requests instead of its defaults (the command line wins).
cd "$root"
jobid=$(COURSE_GRID=tests/fixtures/shard_grid.yaml COURSE_OUT=$OUT/parts \
  sbatch --parsable --array=1-2 --cpus-per-task=1 --mem=1G --time=00:10:00 \
  --output="$OUT/course-run-%A_%a.out" cluster/slurm/course-array.sbatch)
echo "slurm 4/5: submitted array job $jobid (2 shards); waiting for it and its merge job" \
  "(each ends FAILED, exit 1: two runs of the grid fail on purpose)"
for _ in $(seq 600); do
  [ -z "$(squeue -h -o %i)" ] && [ -f "$OUT/parts/report.md" ] && break
  sleep 0.5
done
scontrol -o show job | while read -r line; do
  echo "  $(grep -oE '\b(JobId|ArrayTaskId|JobName|JobState|ExitCode)=[^ ]+' <<<"$line" | tr '\n' ' ')"
done
if [ -n "$(squeue -h -o %i)" ]; then
  echo "make slurm: jobs still queued after 5 minutes" >&2
  exit 1
fi
for log in "$OUT"/course-run-*.out "$OUT"/parts/course-merge-*.out; do
  echo "  == $log"
  sed 's/^/  | /' "$log"
done
if [ ! -f "$OUT/parts/report.md" ]; then
  echo "make slurm: the merge job wrote no report (its output is above; Slurm's logs: $OUT/*.log)" >&2
  exit 1
fi
cluster_done=$(date +%s)

# 5. The same grid without Slurm, and the comparison. Both exit 1: two runs fail on purpose.
echo "slurm 5/5: the same grid unsharded, then the two reports compared"
.venv/bin/course run --grid tests/fixtures/shard_grid.yaml --out "$OUT/whole" >"$OUT/whole.out" 2>&1 || [ $? -eq 1 ]
.venv/bin/python -m tests.tools.batch.report_diff "$OUT/whole" "$OUT/parts"
end=$(date +%s)
echo "make slurm: passed in $(( end - begin )) s: install $(( installed - begin )) s, daemons $(( started - installed )) s," \
  "array job and merge $(( cluster_done - started )) s, unsharded run and comparison $(( end - cluster_done )) s"
