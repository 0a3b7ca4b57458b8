#!/usr/bin/env bash
# The runners' memory on loopback (hack/bench/BASELINES.md, "Runners' memory"): four plain
# bin/fleetbench-runner processes at once against a local TLS target, the device-push script at
# the real rate of a Stab-2-2 runner (2.5 req/s) and 40 times it (100 req/s), each with and
# without --out fleetbench, for DURATION (20m); VmRSS, RssAnon and RssFile every 5 s, the Go
# heap from GODEBUG=gctrace=1. Traffic goes to 127.0.0.1 only; every process ends by itself.
# It measures memory, not time; run it when nothing else loads the machine much.
# usage: hack/bench/runnermem/run.sh OUTDIR        env: DURATION (20m; at most 30m: the polling
#        stops after 33 min and the target after 40)
# Re-runnable: processes an earlier, crashed run left (recorded in OUTDIR/pids) are ended first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:?usage: $0 OUTDIR}
mkdir -p "$out"
if [ -f "$out/pids" ]; then
  while read -r pid; do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE "fleetbench-runner|runnermem-target"; then kill "$pid" 2>/dev/null || true; fi
  done <"$out/pids"
  rm -f "$out/pids"
fi
[ -x "$root/bin/fleetbench-runner" ] || { echo "no bin/fleetbench-runner: make e2e or hack/runner-image.sh builds it" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/runnermem-target" "$here/target.go"
sed -n '/push.js: |/,$p' "$root/examples/dwarfguard/device-push.yaml" | tail -n +2 | sed 's/^    //' >"$work/push.js"
# The scenario pkg/runners.LoadConfig makes of 1,000 (and 40,000) devices every 200 s.
for r in 1000:11:100:real 40000:30:120:fast; do
  IFS=: read -r rate pre max name <<<"$r"
  echo "{\"tags\":{\"testrun\":\"rmem\"},\"scenarios\":{\"devices\":{\"executor\":\"constant-arrival-rate\",\"rate\":$rate,\"timeUnit\":\"200s\",\"duration\":\"${DURATION:-20m}\",\"preAllocatedVUs\":$pre,\"maxVUs\":$max}}}" >"$work/$name.json"
done
one() { # NAME CONFIG OUT(yes|no) APIPORT LIVEPORT
  local d=$out/$1 i pid t0
  mkdir -p "$d"
  rm -f "$d/rss.txt"
  local args=(run --execution-segment 0:1/2 --execution-segment-sequence 0,1/2,1 --address "127.0.0.1:$4"
    --summary-mode=disabled --no-thresholds --config "$work/$2" --insecure-skip-tls-verify)
  if [ "$3" = yes ]; then args+=(--out fleetbench); fi
  K6_FLEETBENCH_CHECKPOINT=60s K6_FLEETBENCH_LIVE=127.0.0.1:$5 K6_FLEETBENCH_FILE=$d/final.json \
    K6_FLEETBENCH_RUNNER=$1 K6_NO_USAGE_REPORT=true K6_AUTO_EXTENSION_RESOLUTION=false \
    DEVICE_ID_FIRST=0 DEVICE_ID_LAST=499 DEVICE_COUNT=500 DEVICE_PERIOD=200s \
    TARGET_WEB_URL=https://127.0.0.1:18443 GODEBUG=gctrace=1 \
    nice -n 10 "$root/bin/fleetbench-runner" "${args[@]}" "$work/push.js" >"$d/stdout" 2>"$d/stderr" &
  pid=$!
  echo "$pid" >>"$out/pids"
  t0=$(date +%s)
  for i in $(seq 1 400); do # bounded; polls k6's API and the live envelope as the operator does
    kill -0 "$pid" 2>/dev/null || break
    echo "$(($(date +%s) - t0)) $(awk '/VmRSS|RssAnon|RssFile/{printf "%s ", $2}' "/proc/$pid/status" 2>/dev/null)" >>"$d/rss.txt"
    curl -s -m 2 "http://127.0.0.1:$4/v1/status" >/dev/null || true
    if [ "$3" = yes ] && [ $((i % 3)) = 0 ]; then curl -s -m 2 "http://127.0.0.1:$5/v1/fleetbench/envelope" >/dev/null || true; fi
    sleep 5
  done
  wait "$pid" || true
}
nice -n 10 "$work/runnermem-target" 18443 &
srv=$!
echo "$srv" >>"$out/pids"
sleep 1
one fast-out fast.json yes 16601 16611 &
one fast-plain fast.json no 16602 16612 &
one real-out real.json yes 16603 16613 &
one real-plain real.json no 16604 16614 &
wait %2 %3 %4 %5
kill "$srv" 2>/dev/null || true
rm -f "$out/pids"
echo "RSS per process: $out/*/rss.txt (seconds, VmRSS, RssAnon, RssFile in kB)"
