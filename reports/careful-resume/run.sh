#!/usr/bin/env bash
# Reproduces every row of README.md (seed 1) into OUT (default out/careful-resume) and prints
# each connection's times, drops and Careful Resume phases. Needs target/release/satquic
# (cargo build --release) and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
SATQUIC=${SATQUIC:-target/release/satquic}
OUT=${1:-out/careful-resume}
NO_RESUME='flow.cc_params={ initial_ssthresh = "estimate", careful_resume = false }'
QUARTER='path.forward.schedule=[{ at = "12s", rate = "62.5Mbit" }]'
RTT2_F='path.forward.schedule=[{ at = "12s", delay = "650ms" }]'
RTT2_R='path.return.schedule=[{ at = "12s", delay = "650ms" }]'

run() { # name scenario [--set ...]
  local name=$1 scenario=$2; shift 2
  "$SATQUIC" run "$scenario" --out "$OUT/$name" "$@" >/dev/null
  python3 - "$OUT/$name/summary.json" "$name" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
run = (summary["runs"] if "runs" in summary else [summary])[0]
for n, c in enumerate(run["flows"][0]["connections"], 1):
    times = " ".join(f"{k} {v:.2f}" if v is not None else f"{k} -" for k, v in c["time_to_bytes"].items())
    cr = c["careful_resume"]
    phases = " → ".join(f'{t["to"]}@{t["at_s"]:.2f}({t["trigger"]})' for t in cr["transitions"]) if cr else "-"
    jump = f'jump {cr["jump_bytes"]} retreated {cr["retreated"]}' if cr else ""
    print(f'{sys.argv[2]:<24} conn {n}: {times} | drops {c["forward_queue_drops"]} lost {c["lost_packets"]} | {jump} {phases}')
PY
}

run kuhn-large resume-kuhn-large
run kuhn-large-no-resume resume-kuhn-large --set "$NO_RESUME"
run kuhn-lossy scenarios/careful-resume/kuhn-lossy.toml
run kuhn-lossy-no-resume scenarios/careful-resume/kuhn-lossy.toml --set "$NO_RESUME"
run geo-5mb scenarios/careful-resume/geo-5mb.toml
run geo-5mb-newreno scenarios/careful-resume/geo-5mb.toml --set flow.cc=newreno --set 'flow.cc_params={}'
run quarter resume-kuhn-large --set "$QUARTER"
run quarter-no-resume resume-kuhn-large --set "$QUARTER" --set "$NO_RESUME"
run quarter-small-buffer resume-kuhn-large --set "$QUARTER" --set path.forward.queue=0.25bdp
run quarter-small-buffer-no-resume resume-kuhn-large --set "$QUARTER" --set path.forward.queue=0.25bdp --set "$NO_RESUME"
# Capacity to a tenth behind a tenth of the old BDP: the jump overflows and retreats.
TENTH='path.forward.schedule=[{ at = "12s", rate = "25Mbit" }]'
run tenth-small-buffer resume-kuhn-large --set "$TENTH" --set path.forward.queue=0.1bdp
run tenth-small-buffer-no-resume resume-kuhn-large --set "$TENTH" --set path.forward.queue=0.1bdp --set "$NO_RESUME"
run rtt-doubled resume-kuhn-large --set "$RTT2_F" --set "$RTT2_R"
run rtt-doubled-no-resume resume-kuhn-large --set "$RTT2_F" --set "$RTT2_R" --set "$NO_RESUME"
run geo-5mb-50mbit scenarios/careful-resume/geo-5mb.toml --set path.forward.rate=50Mbit
run geo-5mb-50mbit-newreno scenarios/careful-resume/geo-5mb.toml --set path.forward.rate=50Mbit --set flow.cc=newreno --set 'flow.cc_params={}'
# LEO handovers between the connections: 20 MB on leo-starlink, the second connection after
# the handover at 15 s (80 Mbit/s) or after the one at 30 s (60 Mbit/s).
LEO=(--set flow.download=20MB --set 'time_to_bytes=["2MB","20MB"]')
LEO_RESUME='flow.cc_params={ initial_ssthresh = "estimate", careful_resume = true }'
for gap in 13s 28s; do
  run "leo-handover-$gap" leo-starlink "${LEO[@]}" --set flow.reconnect_after=$gap --set "$LEO_RESUME"
  run "leo-handover-$gap-no-resume" leo-starlink "${LEO[@]}" --set flow.reconnect_after=$gap --set "$NO_RESUME"
done
# The window figures: the same path, and the capacity to a quarter behind the new BDP's buffer.
"$SATQUIC" run resume-kuhn-large --set duration=30s --out "$OUT/figure" >/dev/null
echo "window figure: $OUT/figure/cwnd.png"
"$SATQUIC" run resume-kuhn-large --set "$QUARTER" --set path.forward.queue=0.25bdp \
  --set duration=30s --out "$OUT/figure-quarter" >/dev/null
echo "window figure, capacity to a quarter: $OUT/figure-quarter/cwnd.png"
