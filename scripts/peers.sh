#!/usr/bin/env bash
# picoquic side by side with satquic through `satquic link`, on emulated satellite paths.
#
# Usage: PICOQUIC_DIR=/path/to/picoquic scripts/peers.sh [--paths A,B,C] [--reps N]
#        [--socket-buffer 32MB] [--out DIR]
#
#   SATQUIC_BIN   optional: a satquic binary to run instead of building this checkout's (a
#                 control, e.g. an older commit's build)
#   PICOQUIC_COMMIT  optional: the commit to print when PICOQUIC_DIR is an export, not a checkout
#   PICOQUIC_DIR  a picoquic checkout with a built picoquicdemo in $PICOQUIC_DIR/build and its
#                 test certificates in $PICOQUIC_DIR/src/certs (or certs/). This script never
#                 fetches or builds picoquic. To build one outside this repository:
#                   git clone https://github.com/private-octopus/picoquic src   (and h2o/picotls
#                   as ../picotls, with its deps/picotest submodule)
#                   cmake -S picotls -B picotls/build -DCMAKE_BUILD_TYPE=Release -DWITH_FUSION=OFF
#                   cmake --build picotls/build --target picotls-core picotls-openssl picotls-minicrypto
#                   cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DPICOQUIC_FETCH_PTLS=OFF \
#                     -DPTLS_INCLUDE_DIR=$PWD/picotls/include \
#                     -DPTLS_CORE_LIBRARY=$PWD/picotls/build/libpicotls-core.a \
#                     -DPTLS_MINICRYPTO_LIBRARY=$PWD/picotls/build/libpicotls-minicrypto.a \
#                     -DPTLS_OPENSSL_LIBRARY=$PWD/picotls/build/libpicotls-openssl.a
#                   cmake --build build --target picoquicdemo
#   --paths       which paths (default A,B,C):
#                   A  250/3 Mbit/s, RTT 650 ms, 1-BDP buffers, 100 MB
#                   B  50/10 Mbit/s, RTT 650 ms, 1-BDP buffers, 100 MB
#                   C  20/2 Mbit/s, RTT 600 ms, 25-packet buffers, 1 % loss both ways, 10 MB
#   --reps        runs per cell (default 1)
#   --socket-buffer  the relay's socket buffers (default: sized from the path)
#   --out         where the table and logs go (default out/peers)
#   --resume      instead of the controller table: per run, two downloads in a row through one
#                 server process and one relay, the second resuming from the first — satquic
#                 without --path (Careful Resume, RFC 9959, from the server's store) and
#                 picoquic (its session ticket, kept in the client's directory between the two)
#   --satquic-only  with --resume: satquic's pairs alone, without picoquic (PICOQUIC_DIR unset)
#
# Every cell is one download through a fresh relay on 127.0.0.1; the time includes the
# handshake (satquic get: handshake + transfer; picoquicdemo: Connection_duration_sec). Each
# relay's final counters (queue drops, random losses, kernel drops) are kept in the logs, and
# the table shows the relay's kernel drops so a lossy emulator cannot hide.
set -euo pipefail
cd "$(dirname "$0")/.."

PATHS=A,B,C
REPS=1
SOCKET_BUFFER=
OUT=out/peers
RESUME=
SATQUIC_ONLY=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --paths) PATHS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --socket-buffer) SOCKET_BUFFER=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --resume) RESUME=1; shift ;;
    --satquic-only) SATQUIC_ONLY=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [[ -n $SATQUIC_ONLY ]]; then
  [[ -n $RESUME ]] || { echo "--satquic-only goes with --resume" >&2; exit 2; }
  PQ_COMMIT="none (--satquic-only)"
else
  : "${PICOQUIC_DIR:?set PICOQUIC_DIR to a picoquic checkout with build/picoquicdemo}"
  PQ=$PICOQUIC_DIR/build/picoquicdemo
  CERTS=$PICOQUIC_DIR/src/certs
  [[ -d $CERTS ]] || CERTS=$PICOQUIC_DIR/certs
  [[ -x $PQ ]] || { echo "no picoquicdemo at $PQ" >&2; exit 2; }
  [[ -f $CERTS/cert.pem ]] || { echo "no picoquic test certificate in $CERTS" >&2; exit 2; }
  PQ_COMMIT=${PICOQUIC_COMMIT:-}
  [[ -n $PQ_COMMIT ]] || PQ_COMMIT=$(git -C "$PICOQUIC_DIR/src" rev-parse HEAD 2>/dev/null || git -C "$PICOQUIC_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
fi

if [[ -n ${SATQUIC_BIN:-} ]]; then
  SQ=$SATQUIC_BIN  # a control: another build of satquic, run as it is
else
  cargo build --release -q -p satquic
  SQ=$PWD/target/release/satquic
fi
mkdir -p "$OUT/logs"
TABLE=$OUT/peers.md
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

path_args() {  # link flags, --path value, download size, label
  case "$1" in
    A) echo "--rate 250Mbit --return-rate 3Mbit --delay 325ms --queue 1bdp|250Mbit/3Mbit/650ms|100MB|100000000|250/3 Mbit/s, 650 ms, 1 BDP, 100 MB" ;;
    B) echo "--rate 50Mbit --return-rate 10Mbit --delay 325ms --queue 1bdp|50Mbit/10Mbit/650ms|100MB|100000000|50/10 Mbit/s, 650 ms, 1 BDP, 100 MB" ;;
    C) echo "--rate 20Mbit --return-rate 2Mbit --delay 300ms --queue 25pkt --loss 1%|20Mbit/2Mbit/600ms|10MB|10000000|20/2 Mbit/s, 600 ms, 25 pkts, 1 % loss, 10 MB" ;;
    *) echo "unknown path $1" >&2; exit 2 ;;
  esac
}

PORT=20000

# start_relay SERVER_PORT LINK_FLAGS LOG: sets RELAY_PORT and RELAY_PID (not in a subshell).
start_relay() {
  local to=$1 flags=$2 log=$3
  PORT=$((PORT + 1))
  RELAY_PORT=$PORT
  # shellcheck disable=SC2086
  "$SQ" link --listen 127.0.0.1:"$RELAY_PORT" --to 127.0.0.1:"$to" $flags \
    ${SOCKET_BUFFER:+--socket-buffer $SOCKET_BUFFER} > "$log" 2>&1 &
  RELAY_PID=$!
  PIDS+=("$RELAY_PID")
  sleep 0.5
}
# stop_relay LOG: stops the relay (it prints its counters on Ctrl-C); sets RELAY_KERNEL_DROPS
# and RELAY_BUSY: a note when the relay forwarded late against its model (p99 over 5 ms, the
# bound `satquic run --backend emu` warns at: UNFAITHFUL_LATENESS_P99_US in crates/cli/src/
# run.rs), which only a busy machine does, so such a run's time is not the path's.
stop_relay() {
  kill -INT "$RELAY_PID" 2>/dev/null || true
  wait "$RELAY_PID" 2>/dev/null || true
  RELAY_KERNEL_DROPS=$(grep -o 'kernel drops [0-9]*' "$1" | awk '{print $3}' | tail -1 || true)
  local p99_us
  p99_us=$(grep -o 'p99 [0-9]* µs' "$1" | awk '{print $2}' | tail -1 || true)
  RELAY_BUSY=
  if [[ -n $p99_us && $p99_us -gt 5000 ]]; then
    RELAY_BUSY="machine busy: relay p99 lateness $((p99_us / 1000)) ms"
  fi
}

# run_cell PATH SERVER CLIENT CC REP: sets CELL_TIME and CELL_DROPS.
run_cell() {
  local p=$1 server=$2 client=$3 cc=$4 rep=$5
  IFS='|' read -r flags sqpath size bytes _ <<< "$(path_args "$p")"
  local tag="$p-$server-$client-$cc-$rep" sport t drops
  PORT=$((PORT + 1))
  sport=$PORT
  case $server in
    satquic) "$SQ" serve --listen 127.0.0.1:"$sport" --cc "$cc" --path "$sqpath" \
               --cert-out "$OUT/logs/$tag.pem" > "$OUT/logs/$tag.server" 2>&1 & ;;
    picoquic) mkdir -p "$OUT/logs/$tag.server.d"
              (cd "$OUT/logs/$tag.server.d" && exec "$PQ" -c "$CERTS/cert.pem" -k "$CERTS/key.pem" \
               -p "$sport" -G "$cc" -B 4194304 -1) > "$OUT/logs/$tag.server" 2>&1 & ;;
  esac
  local spid=$!
  PIDS+=($spid)
  sleep 1
  start_relay "$sport" "$flags" "$OUT/logs/$tag.relay"
  local rport=$RELAY_PORT
  case $client in
    satquic)
      local trust=(--insecure --no-verify)
      [[ $server == satquic ]] && trust=(--ca "$OUT/logs/$tag.pem")
      local rc=0
      timeout 150 "$SQ" get 127.0.0.1:"$rport" --server-name localhost "${trust[@]}" \
           --download "$size" --path "$sqpath" --cc "${cc/bbr1/bbr}" --json \
           > "$OUT/logs/$tag.client" 2> "$OUT/logs/$tag.client.err" || rc=$?
      if [[ $rc == 0 ]]; then
        t=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % (d["handshake_s"]+d["transfer_s"]) if d["completed"] else "unfinished")' "$OUT/logs/$tag.client")
      elif [[ $rc == 124 ]]; then t="unfinished in 150"; else t=failed; fi ;;
    picoquic)
      # A fresh directory: picoquicdemo reuses session tickets from its working directory.
      mkdir -p "$OUT/logs/$tag.client.d"
      if (cd "$OUT/logs/$tag.client.d" && timeout 150 "$PQ" -a perf -D -n localhost -B 4194304 -G "$cc" \
            127.0.0.1 "$rport" "*1:8:$bytes;") > "$OUT/logs/$tag.client" 2>&1 \
         && grep -q "Download_bytes: $bytes" "$OUT/logs/$tag.client"; then
        t=$(awk '/Connection_duration_sec/ {printf "%.2f", $2}' "$OUT/logs/$tag.client")
      else t=failed; fi ;;
  esac
  stop_relay "$OUT/logs/$tag.relay"
  drops=$RELAY_KERNEL_DROPS
  kill "$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
  CELL_TIME=$t
  CELL_DROPS=${drops:-?}${RELAY_BUSY:+, $RELAY_BUSY}
}

# run_resume_pair PATH IMPL CC REP: two downloads in a row through one server process and one
# relay, the second resuming from the first; sets PAIR (the two times and whether the second
# resumed).
run_resume_pair() {
  local p=$1 impl=$2 cc=$3 rep=$4
  IFS='|' read -r flags _ size bytes _ <<< "$(path_args "$p")"
  local tag="resume-$p-$impl-$cc-$rep" sport t times=() resumed
  PORT=$((PORT + 1))
  sport=$PORT
  case $impl in
    # Neither end is told the path: the server keeps Careful Resume's store in memory.
    satquic) "$SQ" serve --listen 127.0.0.1:"$sport" --cc "$cc" \
               --cert-out "$OUT/logs/$tag.pem" > "$OUT/logs/$tag.server" 2>&1 & ;;
    # One process for both connections: picoquic's ticket key and what it measured for each
    # ticket live in the server's memory.
    picoquic) mkdir -p "$OUT/logs/$tag.server.d"
              (cd "$OUT/logs/$tag.server.d" && exec "$PQ" -c "$CERTS/cert.pem" -k "$CERTS/key.pem" \
               -p "$sport" -G "$cc" -B 4194304) > "$OUT/logs/$tag.server" 2>&1 & ;;
  esac
  local spid=$!
  PIDS+=($spid)
  sleep 1
  start_relay "$sport" "$flags" "$OUT/logs/$tag.relay"
  mkdir -p "$OUT/logs/$tag.client.d"
  for n in 1 2; do
    local log="$OUT/logs/$tag.client$n"
    case $impl in
      satquic)
        local rc=0
        timeout 150 "$SQ" get 127.0.0.1:"$RELAY_PORT" --server-name localhost \
             --ca "$OUT/logs/$tag.pem" --download "$size" --json > "$log" 2> "$log.err" || rc=$?
        if [[ $rc == 0 ]]; then
          t=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % (d["handshake_s"]+d["transfer_s"]) if d["completed"] else "unfinished")' "$log")
        elif [[ $rc == 124 ]]; then t="unfinished in 150"; else t=failed; fi ;;
      picoquic)
        # The same client directory for both: the second connection presents the ticket.
        if (cd "$OUT/logs/$tag.client.d" && timeout 150 "$PQ" -a perf -n localhost -B 4194304 \
              -G "$cc" -T tickets.bin 127.0.0.1 "$RELAY_PORT" "*1:8:$bytes;") > "$log" 2>&1 \
           && grep -q "Download_bytes: $bytes" "$log"; then
          t=$(awk '/Connection_duration_sec/ {printf "%.2f", $2}' "$log")
        else t=failed; fi ;;
    esac
    times+=("$t")
    sleep 2
  done
  case $impl in
    satquic) grep -q 'closed: Careful Resume.*→ Unvalidated' "$OUT/logs/$tag.server" && resumed=jumped || resumed=no ;;
    picoquic) grep -q 'The session was properly resumed' "$OUT/logs/$tag.client2" && resumed=ticket || resumed=no ;;
  esac
  stop_relay "$OUT/logs/$tag.relay"
  kill "$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
  PAIR="${times[0]} → ${times[1]} s ($resumed${RELAY_BUSY:+; $RELAY_BUSY})"
}

if [[ -n $RESUME ]]; then
  TABLE=$OUT/resume.md
  {
    echo "# First and resumed connection, satquic and picoquic, through satquic link"
    echo
    echo "picoquic commit: $PQ_COMMIT; satquic commit: ${SATQUIC_BIN:+binary $SATQUIC_BIN, not }$(git rev-parse HEAD)."
    if [[ -n $SATQUIC_ONLY ]]; then prefix=; else prefix="PICOQUIC_DIR=... "; fi
    echo "Command: ${prefix}scripts/peers.sh --resume${SATQUIC_ONLY:+ --satquic-only} --paths $PATHS --reps $REPS"
    echo
    echo "Per run: the first download → the second, through the same server process and relay"
    echo "(times include the handshake); in brackets how the second started: satquic 'jumped'"
    echo "(Careful Resume's jump, from the server's log), picoquic 'ticket' (its session resumed)."
    echo "satquic endpoints get no --path: neither end is told the path."
    echo
    echo "| path | server (cc) = client | runs |"
    echo "|---|---|---|"
  } > "$TABLE"
  IFS=',' read -r -a PATH_LIST <<< "$PATHS"
  for p in "${PATH_LIST[@]}"; do
    IFS='|' read -r _ _ _ _ label <<< "$(path_args "$p")"
    cells=("satquic hybla")
    [[ -n $SATQUIC_ONLY ]] || cells+=("picoquic bbr" "picoquic cubic")
    for cell in "${cells[@]}"; do
      read -r impl cc <<< "$cell"
      runs=()
      for rep in $(seq 1 "$REPS"); do
        run_resume_pair "$p" "$impl" "$cc" "$rep"
        runs+=("$PAIR")
        echo "$label | $impl ($cc) | $PAIR" >&2
      done
      echo "| $label | $impl ($cc) | $(IFS=';'; echo "${runs[*]}" | sed 's/;/; /g') |" >> "$TABLE"
    done
  done
  echo >> "$TABLE"
  echo "Logs: $OUT/logs (server, client and relay output of every run)." >> "$TABLE"
  cat "$TABLE"
  exit 0
fi

CELLS=(
  "satquic satquic hybla"
  "satquic satquic cubic"
  "satquic satquic bbr"
  "picoquic picoquic bbr"
  "picoquic picoquic cubic"
  "satquic picoquic hybla"
  "picoquic satquic bbr"
  "picoquic satquic cubic"
)
{
  echo "# picoquic and satquic through satquic link"
  echo
  echo "picoquic commit: $PQ_COMMIT; satquic commit: ${SATQUIC_BIN:+binary $SATQUIC_BIN, not }$(git rev-parse HEAD); relay socket buffers: ${SOCKET_BUFFER:-sized from the path}."
  echo "Command: PICOQUIC_DIR=... scripts/peers.sh --paths $PATHS --reps $REPS${SOCKET_BUFFER:+ --socket-buffer $SOCKET_BUFFER}"
  echo
  echo "Completion time of one download including the handshake, per run (relay kernel drops in brackets)."
  echo "Server controller for satquic servers and picoquic servers; 'satquic' endpoints use --path for the path."
  echo
  echo "| path | server (cc) | client | runs |"
  echo "|---|---|---|---|"
} > "$TABLE"
IFS=',' read -r -a PATH_LIST <<< "$PATHS"
for p in "${PATH_LIST[@]}"; do
  IFS='|' read -r _ _ _ _ label <<< "$(path_args "$p")"
  for cell in "${CELLS[@]}"; do
    read -r server client cc <<< "$cell"
    runs=()
    for rep in $(seq 1 "$REPS"); do
      run_cell "$p" "$server" "$client" "$cc" "$rep"
      runs+=("$CELL_TIME s [$CELL_DROPS]")
      echo "$label | $server ($cc) | $client | $CELL_TIME s, kernel drops $CELL_DROPS" >&2
    done
    echo "| $label | $server ($cc) | $client | $(IFS=' / '; echo "${runs[*]}") |" >> "$TABLE"
  done
done
echo >> "$TABLE"
echo "Logs: $OUT/logs (server, client and relay output of every run)." >> "$TABLE"
cat "$TABLE"
