"""Tables of issue 10's runs (scripts/media-bulk.sh) from their summary.json files."""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])


def load_run(case):
    path = out / case / "summary.json"
    return json.loads(path.read_text())["runs"][0] if path.exists() else None


def media_of(run, flow=0):
    return next(a for a in run["flows"][flow]["apps"] if a["kind"] == "media")


def row(label, run, media_key="media"):
    periods = run["periods"]
    media = media_of(run)
    rate = 2e6
    ok = [p for p in periods if p["capacity_bps"] >= 1.2 * rate]
    late_ok = sum(p["apps"][media_key]["late_frames"] for p in ok)
    frames_ok = sum(p["apps"][media_key]["frames"] for p in ok)
    util = " / ".join(f"{p['utilization'] * 100:.0f}" for p in periods)
    rec = [p["apps"][media_key].get("recovery_s") for p in periods if "recovery_s" in p["apps"][media_key]]
    rec_s = " / ".join("never" if r is None else f"{r:.1f}" for r in rec)
    bulk = [a for a in run["flows"][0]["apps"] if a["kind"] == "bulk"]
    bulk_bps = bulk[0]["goodput_bps"] / 1e6 if bulk else 0.0
    d = media["frame_delay_ms"]
    return (
        f"| {label} | {run['link_utilization'] * 100:.1f} | {util} | {media['goodput_bps'] / 1e6:.2f} | {bulk_bps:.2f} "
        f"| {d['p50']:.0f} | {d['p99']:.0f} | {late_ok}/{frames_ok} ({100 * late_ok / max(frames_ok, 1):.1f} %) | {rec_s} |"
    )


HEADER = (
    "| case | utilization % (run) | utilization % per period | media Mbit/s | bulk Mbit/s | frame delay p50 ms | p99 ms "
    "| late frames where capacity ≥ 1.2 × media | recovery after drops (s) |\n|---|---|---|---|---|---|---|---|---|"
)
schedulers = ["none", "priority", "seed-balancer", "balancer"]
print("## media-bulk-thesis: offered bulk × scheduler\n")
print(HEADER)
for load in ["0", "0.5Mbit", "2Mbit", "6Mbit"]:
    for s in schedulers:
        run = load_run(f"thesis-{load}-{s}")
        if run:
            print(row(f"bulk {load}, {s}", run))
run = load_run("thesis-2Mbit-balancer-adaptive")
if run:
    print(row("bulk 2Mbit, balancer + adaptive media", run))
print("\n## media-bulk-geo (bulk 2 Mbit/s)\n")
print(HEADER)
for s in schedulers:
    run = load_run(f"geo-{s}")
    if run:
        print(row(s, run))
run = load_run("geo-balancer-adaptive")
if run:
    print(row("balancer + adaptive media", run))
print("\n## media-bulk-competing (bulk 2 Mbit/s + a Cubic download from 30 s)\n")
print("| scheduler | frames on time % | frame delay p50 ms | p99 ms | media Mbit/s | bulk (same connection) Mbit/s | competitor Mbit/s | utilization % |")
print("|---|---|---|---|---|---|---|---|")
for s in schedulers:
    run = load_run(f"competing-{s}")
    if not run:
        continue
    media = media_of(run)
    frames = sum(p["apps"]["media"]["frames"] for p in run["periods"])
    late = sum(p["apps"]["media"]["late_frames"] for p in run["periods"])
    bulk = next(a for a in run["flows"][0]["apps"] if a["kind"] == "bulk")
    comp = run["flows"][1]["goodput_bps"] / 1e6
    d = media["frame_delay_ms"]
    print(
        f"| {s} | {100 * (frames - late) / max(frames, 1):.1f} | {d['p50']:.0f} | {d['p99']:.0f} | {media['goodput_bps'] / 1e6:.2f} "
        f"| {bulk['goodput_bps'] / 1e6:.2f} | {comp:.2f} | {run['link_utilization'] * 100:.1f} |"
    )
