#!/usr/bin/env python3
"""How well simple loss-classifier rules would have done on recorded runs.

Reads the `losses.csv` a `satquic run` writes for a Hybla flow (one row per loss batch: what the
controller saw, its verdict, and the path's record of why the batch's packets were lost) and
scores each rule below on it, packet by packet as summary.json does: the share of queue drops
(overflow and AQM) the rule takes as congestion, and the share of random link losses it takes
as random. A batch holding both kinds counts both ways, since quinn gives one verdict per batch.

The runs were made under the controller's own rule, so a different rule would have changed
them (a random loss taken as congestion halves the window and moves every later loss): a rule
that scores well here is worth building and measuring, not yet a result.

    satquic run scenarios/reproduce/loss-matrix.toml --cc hybla \\
        --set path.forward.delay=15ms --set path.return.delay=15ms \\
        --set path.forward.loss=1% --set path.return.loss=1% \\
        --set 'path.forward.jitter={ distribution = "exponential", mean = "10ms" }' \\
        --set 'path.return.jitter={ distribution = "exponential", mean = "10ms" }' \\
        --out out/jitter-30ms-1
    scripts/loss-rules.py out/jitter-30ms-1
"""
import argparse
import bisect
import csv
import os
import sys
from dataclasses import dataclass


@dataclass
class Batch:
    flow: str
    sent_s: float
    verdict_congestion: bool
    queue_ms: float
    budget_ms: float
    highest_queue_ms: float
    in_a_row: int
    window_bytes: int
    pipe_bytes: int | None
    base_rtt_s: float
    queue_over_round_ms: float | None
    queue_drops: int
    random_losses: int


def read(path: str) -> list[Batch]:
    if os.path.isdir(path):
        path = os.path.join(path, "losses.csv")
    batches = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            batches.append(
                Batch(
                    flow=f"{row['run']}/{row['flow']}",
                    sent_s=float(row["sent_s"]),
                    verdict_congestion=row["verdict"] == "congestion",
                    queue_ms=float(row["queue_ms"]),
                    budget_ms=float(row["budget_ms"]),
                    highest_queue_ms=float(row["highest_queue_ms"]),
                    in_a_row=int(row["in_a_row"]),
                    window_bytes=int(row["window_bytes"]),
                    pipe_bytes=int(row["pipe_bytes"]) if row["pipe_bytes"] else None,
                    base_rtt_s=float(row["base_rtt_ms"] or 0.0) / 1e3,
                    queue_over_round_ms=float(row["queue_over_round_ms"]) if row["queue_over_round_ms"] else None,
                    queue_drops=int(row["queue_drops"]),
                    random_losses=int(row["random_losses"]),
                )
            )
    return batches


def near_a_run_of_losses(batches: list[Batch], rounds: float, after_only: bool):
    """Congestion where the batch lost packets in a row, or lies within `rounds` base RTTs
    (by send time) of a batch that did: an overflow's drops come in episodes. `after_only`
    keeps the rule causal (only earlier batches count); otherwise it needs a verdict held back
    until the episode is over."""
    runs = {}
    for b in batches:
        if b.in_a_row >= 2:
            runs.setdefault(b.flow, []).append(b.sent_s)

    def rule(b: Batch) -> bool:
        if b.in_a_row >= 2:
            return True
        times = runs.get(b.flow, [])
        window = rounds * b.base_rtt_s
        lo = b.sent_s - window
        hi = b.sent_s if after_only else b.sent_s + window
        i = bisect.bisect_left(times, lo)
        return i < len(times) and times[i] <= hi

    return rule


def rules(batches: list[Batch]):
    yield "the controller's verdicts", lambda b: b.verdict_congestion
    yield "losses in a row (>= 2)", lambda b: b.in_a_row >= 2
    yield "queue >= 2 budgets", lambda b: b.queue_ms >= 2 * b.budget_ms
    yield "queue >= 3/4 of the highest", lambda b: b.queue_ms >= 0.75 * b.highest_queue_ms
    yield "window >= 1.9 pipes", lambda b: b.pipe_bytes is not None and b.window_bytes >= 1.9 * b.pipe_bytes
    yield "in a row, or queue >= 2 budgets", lambda b: b.in_a_row >= 2 or b.queue_ms >= 2 * b.budget_ms
    for budgets in (2.0, 2.5, 3.0):
        yield f"in a row, or queue over a round >= {budgets:g} budgets", lambda b, k=budgets: (
            b.in_a_row >= 2 or (b.queue_over_round_ms is not None and b.queue_over_round_ms >= k * b.budget_ms)
        )
    for rounds in (1.0, 2.0):
        yield f"in a row, or <= {rounds:g} RTT after one", near_a_run_of_losses(batches, rounds, True)
        yield f"in a row, or <= {rounds:g} RTT from one (held)", near_a_run_of_losses(batches, rounds, False)


def score(batches: list[Batch], rule) -> tuple[float, float]:
    queue = sum(b.queue_drops for b in batches)
    random = sum(b.random_losses for b in batches)
    queue_as_congestion = sum(b.queue_drops for b in batches if rule(b))
    random_as_random = sum(b.random_losses for b in batches if not rule(b))
    return (
        queue_as_congestion / queue if queue else float("nan"),
        random_as_random / random if random else float("nan"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="losses.csv files or run directories holding one")
    args = parser.parse_args()
    print("| run | queue drops | random losses | rule | queue drops as congestion | random losses as random |")
    print("|---|---|---|---|---|---|")
    for path in args.runs:
        try:
            batches = read(path)
        except (OSError, KeyError, ValueError) as error:
            sys.exit(f"error: {path}: {error}")
        queue = sum(b.queue_drops for b in batches)
        random = sum(b.random_losses for b in batches)
        for name, rule in rules(batches):
            qc, rr = score(batches, rule)
            print(f"| {path} | {queue} | {random} | {name} | {100 * qc:.1f} % | {100 * rr:.1f} % |")


if __name__ == "__main__":
    main()
