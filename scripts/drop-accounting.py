#!/usr/bin/env python3
"""Where the late frames after a capacity drop come from: physics, what the sender can know, or
what it did after.

For one `satquic run` output directory (one seed), counts the frames captured from SETTLE after
the drop to the period's end that were late or never arrived (refused or cancelled at the
source), and splits them by capture time:

- physics: captured while the backlog the old capacity left in the bottleneck queue was still
  too long for a frame to arrive in time behind it (the forward queue plus one mean frame
  above the media's slack at the new rate), whatever the sender did after the drop; read from
  the 0.1 s queue samples, so the bound is good to one sample;
- before the losses were declared: captured after that, but before the transport declared the
  packets the overflow dropped (until then they count as in flight, and the queue the
  sender estimates includes them);
- after: everything later (the retransmissions, the rates after the drop).

    satquic run media-bulk-geo --set flow.scheduler=balancer --set flow.app.0.adaptive=true \\
        --set flow.cc=cubic --seed 4 --out out/ga-cubic-4
    scripts/drop-accounting.py out/ga-cubic-4

The defaults are media-bulk-geo's drop at 180 s to 0.6 Mbit/s, its 2-s settling time (the
issue-24 target counts late frames after the first 2 s of the period) and its 150 ms of slack
(450 ms deadline, 300 ms one way).
"""
import argparse
import csv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", help="satquic run output directories (one seed each)")
    parser.add_argument("--drop-s", type=float, default=180.0, help="when the capacity drops")
    parser.add_argument("--end-s", type=float, default=240.0, help="end of the period")
    parser.add_argument("--settle-s", type=float, default=2.0, help="frames counted from here")
    parser.add_argument("--rate-bps", type=float, default=0.6e6, help="capacity after the drop")
    parser.add_argument("--slack-s", type=float, default=0.15, help="deadline - one-way delay")
    parser.add_argument("--fps", type=int, default=30)
    args = parser.parse_args()
    start = args.drop_s + args.settle_s
    for d in args.dirs:
        try:
            with open(f"{d}/timeseries.csv") as f:
                samples = [
                    (float(r["t_s"]), int(r["queue_forward_bytes"]), int(r["lost_packets"]))
                    for r in csv.DictReader(f)
                ]
            with open(f"{d}/frames.csv") as f:
                frames = list(csv.DictReader(f))
        except OSError as e:
            raise SystemExit(f"{d}: not a `satquic run` output with media ({e.strerror}: {e.filename})")
        except (KeyError, ValueError) as e:
            raise SystemExit(f"{d}: timeseries.csv lacks or garbles a column ({e})")
        if not frames:
            raise SystemExit(f"{d}: no frames in frames.csv")
        by_seq = {int(r["seq"]): r for r in frames}
        first_capture = min(float(r["captured_s"]) - int(r["seq"]) / args.fps for r in frames)
        # frames.csv has no sizes: the mean frame at the new rate.
        mean_frame = args.rate_bps / 8 / args.fps
        fits = args.slack_s * args.rate_bps / 8
        physics_end = next(
            (t for t, q, _ in samples if t >= start and q + mean_frame <= fits), args.end_s
        )
        lost_before = next((lost for t, _, lost in samples if t >= args.drop_s), 0)
        declared = next(
            (t for t, _, lost in samples if t >= args.drop_s and lost > lost_before), args.end_s
        )
        counts = {"physics": 0, "before declaration": 0, "after": 0}
        total = 0
        seq = int((start - first_capture) * args.fps) + 1
        while first_capture + seq / args.fps < args.end_s:
            t = first_capture + seq / args.fps
            total += 1
            r = by_seq.get(seq)
            # A frame that never arrived is late (frames.csv leaves `late` empty only where
            # the deadline fell after the run).
            if r is None or r["late"] != "false":
                if t < physics_end - 0.1:
                    counts["physics"] += 1
                elif t < declared:
                    counts["before declaration"] += 1
                else:
                    counts["after"] += 1
            seq += 1
        late = sum(counts.values())
        parts = " + ".join(f"{k} {100 * v / total:.1f}" for k, v in counts.items())
        print(
            f"{d}: {100 * late / total:.1f} % of {total} frames late or missing = {parts} "
            f"(backlog fits at {physics_end:.1f} s, losses declared at {declared:.1f} s)"
        )


if __name__ == "__main__":
    main()
