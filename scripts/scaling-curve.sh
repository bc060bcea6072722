#!/bin/bash
# Step time and target tokens/s of data-parallel training on 1, 2 and 4 hosts
# (one rank of one thread per host), emulated by network namespaces
# (scripts/netns-hosts.sh) whose links are shaped by tc, with the share of a
# step spent in the gradient all-reduce (the progress line's, timed in
# src/train/dist.c). docs/scaling.md, "Across hosts", says what it measures.
#
# Usage (as root, from the checkout; with fewer cores than hosts, ranks share
# cores, which the step times then show):
#   scripts/scaling-curve.sh
# Settings (environment):
#   CONFIGS="S M"   the model sizes of `rnnsearch bench` (S: emb 128, hidden 256,
#                   att 256, maxout 128, batch 64; M: 256, 512, 512, 256, batch 128)
#   RANKS="1 2 4"   hosts, one rank each
#   LINKS="10gbit:0.05ms 1gbit:0.2ms 100mbit:1ms"  rate:delay of every host's
#                   link (tc tbf for the rate; tc netem for the delay where the
#                   kernel has it, said otherwise)
#   STEPS=30        training steps per run (M: a third, at least 5)
#   DATA="--src F --tgt F ..."  the data (default: Multi30k de→en from
#                   ../shared/corpora/multi30k, word level, lower-cased, min-freq 2)
#   OUT=build/scaling  the runs' directories and the table (OUT/scaling.tsv)
#   RNNSEARCH_ALLREDUCE_OVERLAP=1  the all-reduce overlapped with the backward
#                   (src/train/buckets.h) instead of after it, to compare
# A run on one host does not depend on the link: it is run once per size.
set -u
cd "$(dirname "$0")/.."
RNNSEARCH=$(realpath "${RNNSEARCH:-./rnnsearch}")
CONFIGS=${CONFIGS:-S M}
RANKS=${RANKS:-1 2 4}
LINKS=${LINKS:-10gbit:0.05ms 1gbit:0.2ms 100mbit:1ms}
STEPS=${STEPS:-30}
OUT=$(realpath -m "${OUT:-build/scaling}")

. scripts/netns-hosts.sh
missing=$(nh_missing)
[ -z "$missing" ] && ldd "$RNNSEARCH" | grep -q libmpi ||
    { echo "scaling-curve: cannot run: ${missing:-$RNNSEARCH built without MPI}" >&2; exit 1; }
mkdir -p "$OUT"
if [ -z "${DATA:-}" ]; then
    corpus=../shared/corpora/multi30k
    for l in de en; do
        [ -f "$OUT/train.$l" ] || zcat "$corpus/train.$l.gz" >"$OUT/train.$l" ||
            { echo "scaling-curve: no $corpus/train.$l.gz: set DATA" >&2; exit 1; }
    done
    DATA="--src $OUT/train.de --tgt $OUT/train.en --lowercase --tokenizer word --min-freq 2"
fi
nh_setup scaling-curve || { echo "scaling-curve: the namespaces could not be made" >&2; exit 1; }

# shape RATE DELAY: every host's outgoing traffic at RATE after DELAY (traffic
# between hosts leaves one host's eth0 and enters another's, so shaping each
# egress shapes every path once).
DELAY_NOTE=
shape() {
    local i ns
    for i in 1 2 3 4; do
        ns=$P"h$i"
        ip netns exec "$ns" tc qdisc del dev eth0 root 2>/dev/null
        if ip netns exec "$ns" tc qdisc add dev eth0 root handle 1: netem delay "$2" \
            rate "$1" limit 100000 2>/dev/null; then
            continue
        fi
        # No netem: the rate alone, by a token bucket (burst: 1 ms at RATE,
        # at least 64 kB; queue: 50 ms), the delay left out.
        ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$1" \
            burst "$(rate_burst "$1")" latency 50ms || return 1
        DELAY_NOTE="no tc netem in this kernel: links shaped by rate only (tbf), without the delay"
    done
}
rate_burst() {
    awk -v r="$1" 'BEGIN { n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u);
        m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : 1;
        b = n * m / 8 / 1000; if (b < 65536) b = 65536; printf "%d", b }'
}

sizes() {
    case $1 in
    S) echo "--emb 128 --hidden 256 --att 256 --maxout 128 --batch-size 64" ;;
    M) echo "--emb 256 --hidden 512 --att 512 --maxout 256 --batch-size 128" ;;
    *) echo "scaling-curve: CONFIGS: S or M, not $1" >&2; return 1 ;;
    esac
}

# run CONFIG N LINK: one training run; a row of the table. Step time and
# tokens/s from the last row of train.log.tsv (wall time of the training
# loop over its steps), the all-reduce from the last progress line.
run() {
    local cfg=$1 n=$2 link=$3 steps=$STEPS dir args
    [ "$cfg" = M ] && steps=$((STEPS / 3 > 5 ? STEPS / 3 : 5))
    dir=$OUT/$cfg-n$n-${link//[:.]/_}
    rm -rf "$dir"
    args="train $DATA $(sizes "$cfg") --threads 1 --max-steps $steps --out $dir"
    if [ "$n" = 1 ]; then
        ip netns exec "${P}h1" timeout 3600 env OPENBLAS_NUM_THREADS=1 "$RNNSEARCH" $args \
            >"$dir.log" 2>&1
    else
        nh_mpirun "$n" 3600 "$RNNSEARCH" $args >"$dir.log" 2>&1
    fi || { echo "scaling-curve: $cfg on $n hosts, $link failed:" >&2; tail "$dir.log" >&2; return 1; }
    awk -F'\t' -v cfg="$cfg" -v n="$n" -v link="$link" -v steps="$steps" -v logf="$dir.log" '
        END {
            ar = 0; share = 0
            while ((getline line < logf) > 0)
                if (match(line, /all-reduce [0-9.]+ ms \([0-9]+%\)/)) {
                    split(substr(line, RSTART, RLENGTH), f, /[ (%]+/); ar = f[2]; share = f[4] }
            printf "%s\t%d\t%s\t%d\t%.1f\t%.0f\t%.1f\t%s\n", cfg, n, link, steps,
                1000 * $8 / steps, $6, ar, share
        }' "$dir/train.log.tsv" | tee -a "$OUT/scaling.tsv"
}

printf "config\thosts\tlink\tsteps\tstep_ms\ttokens_per_s\tallreduce_ms\tallreduce_percent\n" |
    tee "$OUT/scaling.tsv"
for cfg in $CONFIGS; do
    sizes "$cfg" >/dev/null || exit 2
    for n in $RANKS; do
        [ "$n" = 1 ] && { run "$cfg" 1 none || exit 1; continue; }
        for link in $LINKS; do
            shape "${link%%:*}" "${link#*:}" || exit 1
            run "$cfg" "$n" "$link" || exit 1
        done
    done
done
[ -n "$DELAY_NOTE" ] && echo "scaling-curve: $DELAY_NOTE"
echo "scaling-curve: $OUT/scaling.tsv"
