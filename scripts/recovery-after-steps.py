#!/usr/bin/env python3
"""How long each flow takes to recover after each step of a scenario's forward-link schedule.

Reads the timeseries.csv of `satquic run` (goodput per sample interval) and, for every step
time given, reports the first time at which the flow's goodput averaged over 1 s reaches 90 %
of the median 1-s goodput it holds over the second half of that period: recovery measured
against the flow's own steady state in the new period, so a period with more capacity does not
count as slow recovery.

    satquic run leo-starlink --cc hybla,cubic,newreno --out out/leo
    scripts/recovery-after-steps.py out/leo/timeseries.csv 15 30 45 60 75 90 105

With several seeds in the file (`--seeds N`) each seed is reported on its own line.
"""
import csv
import statistics
import sys


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, steps = sys.argv[1], [float(s) for s in sys.argv[2:]]
    rows = list(csv.DictReader(open(path, newline="")))
    end = max(float(r["t_s"]) for r in rows)
    runs = list(dict.fromkeys((r["cc"], r["seed"]) for r in rows))
    several_seeds = len({seed for _, seed in runs}) > 1
    for cc, seed in runs:
        samples = [
            (float(r["t_s"]), float(r["goodput_bps"]))
            for r in rows
            if r["cc"] == cc and r["seed"] == seed
        ]
        interval = samples[1][0] - samples[0][0]
        per_second = max(1, round(1.0 / interval))
        times = []
        for i, start in enumerate(steps):
            stop = steps[i + 1] if i + 1 < len(steps) else end
            period = [(t, g) for t, g in samples if start < t <= stop]
            averaged = [
                (period[j][0], sum(g for _, g in period[j : j + per_second]) / per_second)
                for j in range(len(period) - per_second + 1)
            ]
            steady = statistics.median(g for t, g in averaged if t >= (start + stop) / 2)
            recovered = next((t - start for t, g in averaged if g >= 0.9 * steady), None)
            times.append(recovered)
        shown = "; ".join(
            f"{s:g} s: {'never' if r is None else f'{r:.1f} s'}" for s, r in zip(steps, times)
        )
        worst = max((r if r is not None else float("inf")) for r in times)
        name = f"{cc} seed {seed}" if several_seeds else cc
        print(f"{name}: {shown} (worst {worst:.1f} s)")


if __name__ == "__main__":
    main()
