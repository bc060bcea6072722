#!/bin/sh
# Load test of `rnnsearch serve`, on loopback only and bounded in clients,
# seconds and requests: starts the server on a free 127.0.0.1 port, checks
# every answer against `rnnsearch translate` on the same sentences, and
# prints requests/s, p50/p99 latency, statuses and the server's memory (RSS)
# before and after.
#
#   dev/load-serve.sh -m MODEL [-c CLIENTS] [-t SECONDS] [-n MAX_REQUESTS]
#                         [-b BEAM] [-w WORKERS] [-f SENTENCES]
#
# Clients send POST /api/translate back to back over keep-alive connections
# (curl, 25 requests per connection). Needs curl and jq.
set -eu
model="" clients=4 seconds=20 max_requests=20000 beam=1 workers=2
sentences=corpora/dates/test.tsv
bin=${RNNSEARCH:-./rnnsearch}
while getopts m:c:t:n:b:w:f: opt; do
    case $opt in
    m) model=$OPTARG ;;
    c) clients=$OPTARG ;;
    t) seconds=$OPTARG ;;
    n) max_requests=$OPTARG ;;
    b) beam=$OPTARG ;;
    w) workers=$OPTARG ;;
    f) sentences=$OPTARG ;;
    *) sed -n '7,8p' "$0" >&2; exit 2 ;;
    esac
done
[ -n "$model" ] || { echo "load-serve: no model (-m MODEL)" >&2; exit 2; }
for n in "$clients" "$seconds" "$max_requests" "$beam" "$workers"; do
    case $n in '' | *[!0-9]*) echo "load-serve: '$n' is not a whole number" >&2; exit 2 ;; esac
done
[ "$clients" -ge 1 ] && [ "$clients" -le 64 ] || { echo "load-serve: -c from 1 to 64" >&2; exit 2; }
[ "$seconds" -ge 1 ] && [ "$seconds" -le 600 ] || { echo "load-serve: -t from 1 to 600" >&2; exit 2; }
[ "$max_requests" -ge 1 ] && [ "$max_requests" -le 1000000 ] || { echo "load-serve: -n from 1 to 1000000" >&2; exit 2; }
for tool in curl jq; do
    command -v $tool >/dev/null 2>&1 || { echo "load-serve: needs $tool" >&2; exit 1; }
done

work=$(mktemp -d /tmp/rnnsearch-load-XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# 100 sentences (the source side of a TSV file), their requests and the
# translations the command line gives them.
cut -f1 "$sentences" | head -n 100 > "$work/src.txt"
count=$(wc -l < "$work/src.txt")
OPENBLAS_NUM_THREADS=1 "$bin" translate -m "$model" --beam "$beam" "$work/src.txt" > "$work/expected.txt" 2>/dev/null
mkdir -p "$work/req"
i=0
while IFS= read -r line; do
    printf '%s' "$line" | jq -Rsc --argjson beam "$beam" '{text: ., beam: $beam, n_best: 1}' > "$work/req/$i.json"
    i=$((i + 1))
done < "$work/src.txt"

OPENBLAS_NUM_THREADS=1 "$bin" serve -m "$model" --host 127.0.0.1 --port 0 --threads "$workers" \
    --queue 256 --connections 256 --quiet 2> "$work/serve.log" &
server=$!
port=""
for _ in $(seq 50); do
    port=$(sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$work/serve.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "load-serve: the server did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }
url="http://127.0.0.1:$port/api/translate"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
rss_start=$(rss)

# One pass over the sentences first (warm-up: workspaces grow to their size).
for k in $(seq 0 $((count - 1))); do
    curl -s -o /dev/null -H "Content-Type: application/json" --data-binary "@$work/req/$k.json" "$url"
done
rss_warm=$(rss)

# A client: batches of 25 requests on one connection until the time is up or
# its share of max_requests is sent. Its output: each answer (one line of
# JSON), then a line "@@ status seconds sentence".
client() {
    c=$1 end=$2 quota=$3 sent=0 batch=0
    while [ "$(date +%s)" -lt "$end" ] && [ "$sent" -lt "$quota" ]; do
        cfg="$work/c$c.cfg"
        : > "$cfg"
        n=0
        while [ $n -lt 25 ] && [ "$sent" -lt "$quota" ]; do
            k=$(( (c * 37 + sent) % count ))
            [ $n -gt 0 ] && echo next >> "$cfg"
            printf 'url = "%s"\ndata-binary = "@%s/req/%s.json"\nheader = "Content-Type: application/json"\nwrite-out = "\\n@@ %%{http_code} %%{time_total} %s\\n"\n' \
                "$url" "$work" "$k" "$k" >> "$cfg"
            n=$((n + 1)) sent=$((sent + 1))
        done
        curl -s --max-time 30 -K "$cfg" >> "$work/c$c.out" || true
        batch=$((batch + 1))
    done
}
start=$(date +%s.%N)
end=$(( $(date +%s) + seconds ))
quota=$(( (max_requests + clients - 1) / clients ))
pids=""
for c in $(seq 0 $((clients - 1))); do
    client "$c" "$end" "$quota" &
    pids="$pids $!"
done
wait $pids
stop=$(date +%s.%N)
rss_end=$(rss)
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$server/status")

# Each answer's status line, and its body (or nothing) on the line before.
cat "$work"/c*.out | awk -v bodies="$work/bodies.txt" '
    /^@@ / { print $2, $3, $4; print (body == "" ? "{}" : body) > bodies; body = ""; next }
    NF { body = $0 }' > "$work/all.log"
total=$(wc -l < "$work/all.log")
# Every answer: status 200 and the translation the command line gives.
jq -R -r 'fromjson? // {} | .translation // "<no translation>" | gsub("\n"; " ")' "$work/bodies.txt" > "$work/got.txt"
awk -v want_file="$work/expected.txt" -v got_file="$work/got.txt" '
    BEGIN { n = 0; while ((getline line < want_file) > 0) want[n++] = line }
    { if ((getline answer < got_file) <= 0) answer = "<none>"
      if ($1 == 200 && answer == want[$3]) ok++
      else { bad++; if (bad <= 3) printf "load-serve: bad answer (%s) for sentence %d: %s\n", $1, $3, answer > "/dev/stderr" } }
    END { printf "%d %d\n", ok, bad }' "$work/all.log" > "$work/verdict.txt"
read -r ok wrong < "$work/verdict.txt"
statuses=$(awk '{print $1}' "$work/all.log" | sort | uniq -c | awk '{printf "%s x %s, ", $2, $1}')
awk '{print $2}' "$work/all.log" | sort -n > "$work/lat.txt"
pct() { awk -v p="$1" '{v[NR] = $1} END {i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; printf "%.1f", 1000 * v[i]}' "$work/lat.txt"; }
elapsed=$(awk -v a="$start" -v b="$stop" 'BEGIN {printf "%.2f", b - a}')
rate=$(awk -v n="$total" -v t="$elapsed" 'BEGIN {printf "%.1f", n / t}')
echo "load-serve: model $model, beam $beam, $workers workers, $clients clients, $seconds s at most, $max_requests requests at most"
echo "requests $total in $elapsed s | $rate requests/s | p50 $(pct 50) ms | p99 $(pct 99) ms | max $(pct 100) ms"
echo "answers: status ${statuses}correct $ok | wrong or failed $wrong"
echo "server RSS: start $rss_start kB | after warm-up $rss_warm kB | after the run $rss_end kB | peak $hwm kB"
[ "$wrong" -eq 0 ] && [ "$total" -gt 0 ]
