#!/usr/bin/env bash
# Runs a satquic sweep on a Slurm cluster: an array job of N shards, then a merge job that
# starts when every shard succeeded (--dependency=afterok).
#
#   scripts/slurm-sweep.sh -n N -o OUT [-c CPUS] [-b SATQUIC] [-p PARTITION] [-t TIME] [--wait] \
#       -- SCENARIO --grid KEY=V1,V2,... [--cc a,b] [--seeds K] [--set k=v] [--metric M] [--flow F]
#
#   -n N        shards = array tasks (1 ≤ N ≤ the cluster's MaxArraySize − 1, 1000 by default)
#   -o OUT      results: OUT/shards/shard-K-of-N.{csv,json}, OUT/logs/shard-K.out and merge.out,
#               and after the merge OUT/sweep.csv and OUT/<metric>.png|svg (the same bytes as an
#               unsharded `satquic sweep ... --out OUT`). Must be on a filesystem every node sees.
#   -c CPUS     CPUs per shard (each shard runs that many runs at a time; default 1)
#   -b SATQUIC  the satquic binary, on a shared filesystem (default: $SATQUIC, else this
#               checkout's target/release/satquic, else satquic on PATH)
#   -p, -t      sbatch --partition, --time for every job
#   --wait      return when the merge job has ended, with its result
#
# The sweep flags after -- are those of `satquic sweep` without --out, --shard, --threads
# (set here). A shard that failed can be resubmitted alone (sbatch --array=K ... as printed
# in OUT/logs/submit.txt); it resumes from its csv, then run the merge as printed there.
set -euo pipefail

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
shards="" out="" cpus=1 satquic=${SATQUIC:-} wait=0
sbatch_common=()
while [[ $# -gt 0 ]]; do
    case $1 in
    -n) shards=${2:?-n needs N}; shift 2 ;;
    -o) out=${2:?-o needs a directory}; shift 2 ;;
    -c) cpus=${2:?-c needs a number}; shift 2 ;;
    -b) satquic=${2:?-b needs a path}; shift 2 ;;
    -p) sbatch_common+=(--partition "${2:?-p needs a partition}"); shift 2 ;;
    -t) sbatch_common+=(--time "${2:?-t needs a time}"); shift 2 ;;
    --wait) wait=1; shift ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) echo "slurm-sweep.sh: unknown option $1 (sweep flags go after --)" >&2; usage ;;
    esac
done
sweep_args=("$@")

[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "slurm-sweep.sh: -n: expected a number of shards ≥ 1, got '${shards}'" >&2; exit 2; }
[[ $cpus =~ ^[1-9][0-9]*$ ]] || { echo "slurm-sweep.sh: -c: expected CPUs ≥ 1, got '${cpus}'" >&2; exit 2; }
[[ -n $out ]] || { echo "slurm-sweep.sh: -o OUT is required" >&2; exit 2; }
[[ ${#sweep_args[@]} -gt 0 ]] || { echo "slurm-sweep.sh: missing the sweep after --: SCENARIO --grid ..." >&2; exit 2; }

merge_args=()
for ((i = 0; i < ${#sweep_args[@]}; i++)); do
    a=${sweep_args[i]}
    case $a in
    --out | --out=* | --shard | --shard=* | --threads | --threads=*)
        echo "slurm-sweep.sh: $a is set by this script (use -o, -n, -c)" >&2
        exit 2
        ;;
    --metric | --flow) merge_args+=("$a" "${sweep_args[i + 1]:-}") ;;
    --metric=* | --flow=*) merge_args+=("$a") ;;
    esac
done

if [[ -z $satquic ]]; then
    if [[ -x $here/../target/release/satquic ]]; then
        satquic=$here/../target/release/satquic
    else
        satquic=$(command -v satquic || true)
    fi
fi
[[ -n $satquic && -x $satquic ]] || {
    echo "slurm-sweep.sh: no satquic binary (build it: cargo build --release -p satquic, or pass -b)" >&2
    exit 2
}
satquic=$(cd "$(dirname "$satquic")" && pwd)/$(basename "$satquic")
# The whole sweep is checked here, before anything is queued: a misspelled grid key or an
# unknown controller fails now, naming the field, not in every array task.
"$satquic" sweep "${sweep_args[@]}" --check >&2 || {
    echo "slurm-sweep.sh: the sweep does not check out; nothing was submitted" >&2
    exit 2
}
mkdir -p "$out/shards" "$out/logs"
out=$(cd "$out" && pwd)

array_job=$(sbatch --parsable "${sbatch_common[@]}" --array="1-$shards" --cpus-per-task="$cpus" \
    --output="$out/logs/shard-%a.out" --export="ALL,SATQUIC=$satquic,SWEEP_SHARDS=$shards" \
    "$here/slurm/sweep.sbatch" "${sweep_args[@]}" --out "$out/shards")
array_job=${array_job%%;*}
merge_job=$(sbatch --parsable "${sbatch_common[@]}" --dependency="afterok:$array_job" \
    --kill-on-invalid-dep=yes --output="$out/logs/merge.out" --export="ALL,SATQUIC=$satquic" \
    "$here/slurm/merge.sbatch" "$out" "${merge_args[@]}")
merge_job=${merge_job%%;*}

quoted_sweep=$(printf '%q ' "${sweep_args[@]}")
quoted_merge=""
[[ ${#merge_args[@]} -eq 0 ]] || quoted_merge=$(printf '%q ' "${merge_args[@]}")
{
    echo "array job $array_job: $shards shards of: satquic sweep $quoted_sweep"
    echo "merge job $merge_job (after every shard succeeded) → $out/sweep.csv"
    echo "resubmit shard K: sbatch --array=K --cpus-per-task=$cpus --output=$out/logs/shard-%a.out" \
        "--export=ALL,SATQUIC=$satquic,SWEEP_SHARDS=$shards $here/slurm/sweep.sbatch" \
        "$quoted_sweep--out $out/shards"
    echo "merge by hand: $satquic sweep merge $out/shards --out $out $quoted_merge"
} | tee "$out/logs/submit.txt"

if [[ $wait -eq 1 ]]; then
    while [[ -n $(squeue -h -j "$merge_job" 2>/dev/null) ]]; do
        sleep 5
    done
    state=$(scontrol -o show job "$merge_job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' || true)
    echo "merge job $merge_job: ${state:-ended}"
    cat "$out/logs/merge.out" 2>/dev/null || true
    if [[ $state != JobState=COMPLETED ]]; then
        # The merge is cancelled when a shard fails: say which shards did not finish and where
        # their logs are (a shard finished when its manifest says "complete":true).
        for ((k = 1; k <= shards; k++)); do
            manifest=$out/shards/shard-$k-of-$shards.json
            if ! grep -q '"complete":true' "$manifest" 2>/dev/null; then
                echo "shard $k/$shards did not finish; its log: $out/logs/shard-$k.out" >&2
                tail -n 5 "$out/logs/shard-$k.out" 2>/dev/null | sed 's/^/    /' >&2 || true
            fi
        done
        exit 1
    fi
fi
