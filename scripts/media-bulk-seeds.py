"""Issue 10's criteria over several seeds: mean ± sample stdev (and min–max) per case, from
the summary.json files that scripts/media-bulk.sh writes with --seeds."""
import json
import pathlib
import statistics
import sys

out = pathlib.Path(sys.argv[1])
MEDIA_BPS = 2e6


def metrics(run):
    periods = run["periods"]
    media = next(a for a in run["flows"][0]["apps"] if a["kind"] == "media")
    good = [p for p in periods if p["capacity_bps"] >= 1.2 * MEDIA_BPS]
    frames = sum(p["apps"]["media"]["frames"] for p in good)
    late = sum(p["apps"]["media"]["late_frames"] for p in good)
    all_frames = sum(p["apps"]["media"]["frames"] for p in periods)
    all_late = sum(p["apps"]["media"]["late_frames"] for p in periods)
    rec = [p["apps"]["media"].get("recovery_s") for p in periods if "recovery_s" in p["apps"]["media"]]
    bulk = [a for a in run["flows"][0]["apps"] if a["kind"] == "bulk"]
    return {
        "utilization %": run["link_utilization"] * 100,
        "p99 ms": media["frame_delay_ms"]["p99"],
        "p50 ms": media["frame_delay_ms"]["p50"],
        "late % (cap ≥ 1.2×media)": 100 * late / max(frames, 1),
        "on time % (all)": 100 * (all_frames - all_late) / max(all_frames, 1),
        "worst recovery s": max((r if r is not None else float("inf")) for r in rec) if rec else float("nan"),
        "bulk Mbit/s": bulk[0]["goodput_bps"] / 1e6 if bulk else 0.0,
    }


def fmt(values):
    finite = [v for v in values if v == v and v != float("inf")]
    never = len(values) - len(finite)
    if not finite:
        return "never"
    mean = statistics.fmean(finite)
    sd = statistics.stdev(finite) if len(finite) > 1 else 0.0
    text = f"{mean:.1f} ± {sd:.1f} ({min(finite):.1f}–{max(finite):.1f})"
    return text + (f", never in {never}" if never else "")


cases = sys.argv[2:]
keys = None
rows = []
for case in cases:
    path = out / case / "summary.json"
    if not path.exists():
        continue
    runs = json.loads(path.read_text())["runs"]
    ms = [metrics(r) for r in runs]
    keys = list(ms[0])
    rows.append((case, len(runs), {k: fmt([m[k] for m in ms]) for k in keys}))
if keys:
    print("| case | seeds | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for case, n, values in rows:
        print(f"| {case} | {n} | " + " | ".join(values[k] for k in keys) + " |")
