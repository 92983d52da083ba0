#!/usr/bin/env bash
# Issue 10's measurements: media + bulk on one connection, four schedulers, the three
# media-bulk scenarios, and adaptive media. Writes OUT/<case>/ (satquic's usual outputs) and
# OUT/table.md. Then issue 24's targets (`satquic media-bulk`: the balancer with Cubic and
# Hybla on every media-bulk scenario, GEO with 3× rises and the RMCAT cases, five seeds) into
# OUT/targets/ (table.md, evaluation.json, each case's worst seed's outputs). The committed
# report (reports/media-bulk/) holds both tables (table.md, targets.md) and the media.png of
# the cases it links, copied from OUT by hand.
#
#   scripts/media-bulk.sh [OUT]        (default: out/media-bulk; 1.5 min on 2 cores after the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/media-bulk}
mkdir -p "$OUT"
cargo build --release -p satquic --quiet
SQ=${CARGO_TARGET_DIR:-target}/release/satquic
SCHEDULERS="none priority seed-balancer balancer"

# The thesis scenario without its bulk app: offered bulk 0.
last=$(grep -n '^\[\[flow.app\]\]$' scenarios/media-bulk-thesis.toml | tail -1 | cut -d: -f1)
head -n $((last - 1)) scenarios/media-bulk-thesis.toml >"$OUT/media-bulk-thesis-nobulk.toml"
grep -q 'kind = "bulk"' "$OUT/media-bulk-thesis-nobulk.toml" && { echo "failed to strip the bulk app" >&2; exit 1; }

jobs=()
run() { # case-dir scenario args...
  local dir=$1; shift
  jobs+=("$SQ run $* --out $OUT/$dir --quiet")
}
for s in $SCHEDULERS; do
  run "thesis-0-$s" "$OUT/media-bulk-thesis-nobulk.toml" --set flow.scheduler=$s
  for load in 0.5Mbit 2Mbit 6Mbit; do
    run "thesis-$load-$s" media-bulk-thesis --set flow.scheduler=$s --set flow.app.1.rate=$load
  done
  run "geo-$s" media-bulk-geo --set flow.scheduler=$s
  run "competing-$s" media-bulk-competing --set flow.0.scheduler=$s
done
run "thesis-2Mbit-balancer-adaptive" media-bulk-thesis --set flow.scheduler=balancer --set flow.app.0.adaptive=true
run "geo-balancer-adaptive" media-bulk-geo --set flow.scheduler=balancer --set flow.app.0.adaptive=true
# The head-to-head cases again over five seeds (mean ± stdev, min–max).
for s in seed-balancer balancer; do
  run "seeds-thesis-$s" media-bulk-thesis --set flow.scheduler=$s --seeds 5
  run "seeds-geo-$s" media-bulk-geo --set flow.scheduler=$s --seeds 5
done
for s in none balancer; do
  run "seeds-competing-$s" media-bulk-competing --set flow.0.scheduler=$s --seeds 5
done
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} sh -c '{} >/dev/null'
python3 scripts/media-bulk-table.py "$OUT" >"$OUT/table.md"
{
  echo
  echo "## Five seeds"
  echo
  python3 scripts/media-bulk-seeds.py "$OUT" seeds-thesis-seed-balancer seeds-thesis-balancer \
    seeds-geo-seed-balancer seeds-geo-balancer seeds-competing-none seeds-competing-balancer
} >>"$OUT/table.md"
cat "$OUT/table.md"
$SQ media-bulk --out "$OUT/targets"
