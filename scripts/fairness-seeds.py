#!/usr/bin/env python3
"""The fairness matrix's equal-RTT cells over several seeds.

`satquic reproduce fairness-matrix` measures each cell once (seed 1). One seed decides a cell
by chance where the pair's dynamics are chaotic (Hybla against NewReno at 600 ms behind a
quarter-BDP drop-tail buffer: 1.07 at seed 1, 1.40-1.59 at seeds 2-5). This script runs the
same cells (scenarios/reproduce/fairness-matrix.toml with the overrides the reproduction
applies, see crates/studies/src/reproduce/fairness.rs) for seeds 1..N with `satquic run`, and
prints per cell the geometric mean of ours / other over the seeds with its range, and what the
other flow kept next to ours against its mean next to its own kind ([Ware2019]'s harm), then
the counts against issue 21's targets judged on the means.

    python3 scripts/fairness-seeds.py --bin target/release/satquic --seeds 5 --out DIR

Each run's second-half goodputs go to DIR/runs.csv (ours, other, cell, seed); rerunning into
the same DIR reuses the runs already there, so an interrupted sweep resumes.
"""

import argparse
import concurrent.futures
import csv
import math
import os
import subprocess
import sys
import tempfile

SCENARIO = os.path.join(os.path.dirname(__file__), "..", "scenarios", "reproduce", "fairness-matrix.toml")
# (RTT ms, rate Mbit/s, run length s): fairness.rs PATHS.
PATHS = [(10, 50, 60), (100, 20, 120), (600, 10, 300)]
BUFFERS_BDP = [0.25, 1.0, 4.0]
LOSSES_PERCENT = [0.0, 0.1]
PAIRS = [("hybla", "newreno"), ("hybla", "cubic"), ("newreno", "newreno"), ("cubic", "cubic")]
EQUAL_RTT_BAND = (0.67, 1.5)
KEPT_TARGET = 0.8


def red_thresholds(limit_packets):
    """fairness.rs red_thresholds: max at half the buffer, min at a third of max."""
    mx = max(limit_packets / 2.0, 3.0)
    return mx / 3.0, mx


def overrides(rtt_ms, rate_mbit, duration_s, buffer_bdp, red, loss, ours, other):
    one_way = f"{rtt_ms / 2}ms"
    sets = {
        "duration": f"{duration_s}s",
        "path.forward.rate": f"{rate_mbit}Mbit",
        "path.return.rate": f"{rate_mbit}Mbit",
        "path.forward.delay": one_way,
        "path.return.delay": one_way,
        "path.forward.queue": f"{buffer_bdp}bdp",
        "path.forward.loss": f"{loss}%",
        "path.return.loss": f"{loss}%",
        "flow.0.cc": ours,
        "flow.1.cc": other,
    }
    if red:
        bdp_bytes = rate_mbit * 1e6 / 8 * rtt_ms / 1000
        lo, hi = red_thresholds(bdp_bytes * buffer_bdp / 1500)
        sets["path.forward.aqm"] = "red"
        sets["path.forward.red"] = f"{{ min = {lo:.2f}, max = {hi:.2f} }}"
    return sets


def second_half_mbit(timeseries, duration_s):
    half = duration_s / 2
    at = {}
    with open(timeseries) as f:
        for row in csv.DictReader(f):
            t = float(row["t_s"])
            for mark in (half, duration_s):
                if abs(t - mark) < 1e-6:
                    at[(row["flow"], mark)] = int(row["delivered_bytes"])
    return tuple(
        (at[(flow, duration_s)] - at[(flow, half)]) * 8 / half / 1e6 for flow in ("ours", "other")
    )


def run_cell(binary, key, seed):
    (rtt, rate, duration), buffer_bdp, red, loss, (ours, other) = key
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "run", SCENARIO, "--seed", str(seed), "--out", out]
        for k, v in overrides(rtt, rate, duration, buffer_bdp, red, loss, ours, other).items():
            cmd += ["--set", f"{k}={v}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return second_half_mbit(os.path.join(out, "timeseries.csv"), duration)


def cell_id(key):
    (rtt, _, _), buffer_bdp, red, loss, (ours, other) = key
    return f"{ours}-{other}/{rtt}ms/{buffer_bdp}bdp/{'red' if red else 'drop-tail'}/{loss}%"


def geo_mean_ratio(runs):
    return math.exp(sum(math.log(max(o, 1e-3) / max(x, 1e-3)) for o, x in runs) / len(runs))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default="target/release/satquic")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    runs_path = os.path.join(args.out, "runs.csv")
    done = {}
    if os.path.exists(runs_path):
        with open(runs_path) as f:
            for cell, seed, ours, other in csv.reader(f):
                done[(cell, int(seed))] = (float(ours), float(other))
    keys = [
        (path, b, red, loss, pair)
        for pair in PAIRS
        for path in PATHS
        for b in BUFFERS_BDP
        for red in (False, True)
        for loss in LOSSES_PERCENT
    ]
    todo = [(k, s) for k in keys for s in range(1, args.seeds + 1) if (cell_id(k), s) not in done]
    with open(runs_path, "a", newline="") as f, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        writer = csv.writer(f)
        futures = {pool.submit(run_cell, args.bin, k, s): (k, s) for k, s in todo}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            k, s = futures[fut]
            ours, other = fut.result()
            done[(cell_id(k), s)] = (ours, other)
            writer.writerow([cell_id(k), s, f"{ours:.4f}", f"{other:.4f}"])
            f.flush()
            print(f"\r{i}/{len(todo)} runs", end="", file=sys.stderr)
    print(file=sys.stderr)

    def runs(key):
        return [done[(cell_id(key), s)] for s in range(1, args.seeds + 1)]

    outside, harmed = [], []
    print(f"seeds 1-{args.seeds}; ratio: geometric mean [lowest-highest]; kept: the other's mean next to ours / its mean next to its own kind")
    print()
    print("| pair | cell | ours / other | own kind | kept |")
    print("|---|---|---|---|---|")
    for k in keys:
        path, b, red, loss, (ours, other) = k
        if ours != "hybla":
            continue
        mine = runs(k)
        ref = runs((path, b, red, loss, (other, other)))
        ratio, ref_ratio = geo_mean_ratio(mine), geo_mean_ratio(ref)
        kept = (sum(x for _, x in mine) / len(mine)) / (sum(o + x for o, x in ref) / 2 / len(ref))
        lo, hi = EQUAL_RTT_BAND
        friendly = lo <= ratio <= hi or abs(math.log(ratio)) <= abs(math.log(ref_ratio))
        spread = [o / max(x, 1e-3) for o, x in mine]
        cell = cell_id(k).split("/", 1)[1]
        if not friendly:
            outside.append(f"{other} {cell}")
        if kept < KEPT_TARGET:
            harmed.append(f"{other} {cell}")
        print(
            f"| hybla-{other} | {cell} | {ratio:.2f} [{min(spread):.2f}-{max(spread):.2f}]{'' if friendly else ' ✗'} "
            f"| {ref_ratio:.2f} | {100 * kept:.0f} %{' ✗' if kept < KEPT_TARGET else ''} |"
        )
    print()
    print(f"outside the band: {len(outside)}; neighbour harmed (kept < 80 %): {len(harmed)}: {', '.join(harmed)}")


if __name__ == "__main__":
    main()
