#!/bin/sh
# rnnsearch against PyTorch on this CPU, side by side: the interleaved A/B
# rounds of ../shared/bench (ab-train.sh for configs S and M with 1 and 2
# threads, then ab-decode.sh greedy at batch 1 and 64 plus beam 5), and a
# summary of the ratios of that one run. Rounds alternate the two programs, so
# load from other jobs falls on both.
#   ROUNDS=2 SECS=60 CONFIGS="S M" THREADS="1 2" OUT=build/ab dev/bench-vs-pytorch.sh
# MODEL=path.ckpt decodes with that model (default: the first S 1-thread round's);
# RS=path/to/rnnsearch measures that binary; SUMMARY_ONLY=1 re-prints the
# summary of the logs already in OUT.
set -eu
cd "$(dirname "$0")/.."
BENCH=../shared/bench
ROUNDS=${ROUNDS:-2}
SECS=${SECS:-60}
CONFIGS=${CONFIGS:-"S M"}
THREADS=${THREADS:-"1 2"}
OUT=${OUT:-build/ab}
summary_only=${SUMMARY_ONLY:-0}
if [ "$summary_only" = 0 ] && { [ ! -x /usr/bin/python3 ] || ! /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null; }; then
    echo "PyTorch is not installed (apt-get install python3-torch python3-numpy):" \
         "skipping the comparison with PyTorch"
    exit 0
fi
if [ "$summary_only" = 0 ]; then
    [ -d "$BENCH" ] || { echo "no $BENCH: the comparison scripts are missing" >&2; exit 1; }
    [ -n "${RS:-}" ] || [ -x ./rnnsearch ] || make rnnsearch >/dev/null
    mkdir -p "$OUT"
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)," \
         "$(nproc) CPUs, binary ${RS:-./rnnsearch}" > "$OUT/summary.txt"
    for cfg in $CONFIGS; do
        for t in $THREADS; do
            "$BENCH/ab-train.sh" "$cfg" "$ROUNDS" "$SECS" "$t" "$OUT/train_${cfg}_t$t" |
                tee "$OUT/train_${cfg}_t$t.log"
        done
    done
    MODEL=${MODEL:-$OUT/train_S_t1/rs_r1/last.ckpt}
    "$BENCH/ab-decode.sh" "$MODEL" "$ROUNDS" 1 "$OUT/decode_t1" | tee "$OUT/decode_t1.log"
fi

# Ratios: mean rate of the rnnsearch rounds over the mean of the PyTorch rounds.
{
    echo
    echo "| work | rnnsearch (per round) | PyTorch (per round) | ratio |"
    echo "|---|---|---|---|"
    for cfg in $CONFIGS; do
        for t in $THREADS; do
            awk -v cfg="$cfg" -v t="$t" '
                function rate(line) { if (!match(line, /steady tgt_tok\/s=[0-9.a-z]+/)) return "nan"
                                      return substr(line, RSTART + 17, RLENGTH - 17) }
                function rss(line) { if (!match(line, /peak_rss_MB=[0-9]+/)) return "?"
                                     return substr(line, RSTART + 12, RLENGTH - 12) }
                / A rnnsearch:/ { a[na++] = rate($0); ra = ra (ra ? " / " : "") rss($0) }
                / B torch:/ { b[nb++] = rate($0); rb = rb (rb ? " / " : "") rss($0) }
                END { sa = sb = ka = kb = 0; la = lb = ""
                      for (i = 0; i < na; i++) { la = la (i ? " / " : "") a[i]; if (a[i] != "nan") { sa += a[i]; ka++ } }
                      for (i = 0; i < nb; i++) { lb = lb (i ? " / " : "") b[i]; if (b[i] != "nan") { sb += b[i]; kb++ } }
                      ratio = ka && kb && sb > 0 ? sprintf("%.2fx", (sa / ka) / (sb / kb)) : "-"
                      printf "| train %s, %s thread(s), target tokens/s | %s | %s | %s |\n", cfg, t, la, lb, ratio
                      printf "| peak RSS MB, train %s, %s thread(s) | %s | %s | |\n", cfg, t, ra, rb }
            ' "$OUT/train_${cfg}_t$t.log"
        done
    done
    for b in 1 64; do
        awk -v b="$b" '
            $0 ~ ("A rnnsearch greedy_b" b "_") { for (i = 1; i <= NF; i++) if ($i == "sent/s") { a[na++] = $(i - 1) } }
            / B torch / && $0 ~ ("batch=" b " ") { for (i = 1; i <= NF; i++) if ($i ~ /^sents\/s=/) { v = $i; sub(/.*=/, "", v); b2[nb++] = v } }
            END { sa = sb = 0; la = lb = ""
                  for (i = 0; i < na; i++) { sa += a[i]; la = la (i ? " / " : "") a[i] }
                  for (i = 0; i < nb; i++) { sb += b2[i]; lb = lb (i ? " / " : "") b2[i] }
                  if (na && nb && sb > 0)
                      printf "| greedy batch %s, sentences/s, 1 thread | %s | %s | %.2fx |\n", b, la, lb, (sa / na) / (sb / nb) }
        ' "$OUT/decode_t1.log"
    done
    awk '/A rnnsearch beam5/ { for (i = 1; i <= NF; i++) if ($i == "sent/s") l = l (l ? " / " : "") $(i - 1) }
         END { if (l) printf "| beam 5 batch 32, sentences/s, 1 thread | %s | - | - |\n", l }' "$OUT/decode_t1.log"
    echo
    grep -h "outputs identical" "$OUT/decode_t1.log" || true
} | tee -a "$OUT/summary.txt"
