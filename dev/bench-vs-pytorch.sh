#!/bin/sh
# rnnsearch against PyTorch on this CPU, side by side: the interleaved A/B
# rounds of ../shared/bench (ab-train.sh for configs S and M with 1 and 2
# threads, then ab-decode.sh greedy at batch 1 and 64 plus beam 5 with each
# of THREADS), and a summary of that one run: the ratio of the medians of
# each side's rounds (at least 3), with the GEMM road and the OpenBLAS kernel
# each side ran on.
# Rounds alternate the two programs, so load from other jobs falls on both.
#   ROUNDS=3 SECS=60 CONFIGS="S M" THREADS="1 2" OUT=build/ab dev/bench-vs-pytorch.sh
# MODEL=path.ckpt decodes with that model (default: the first S 1-thread round's);
# RS=path/to/rnnsearch measures that binary; SUMMARY_ONLY=1 re-prints the
# summary of the logs already in OUT.
set -eu
cd "$(dirname "$0")/.."
BENCH=../shared/bench
ROUNDS=${ROUNDS:-3}
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
[ "$ROUNDS" -ge 3 ] || echo "ROUNDS=$ROUNDS: a median of fewer than 3 rounds says little" >&2
if [ "$summary_only" = 0 ]; then
    [ -d "$BENCH" ] || { echo "no $BENCH: the comparison scripts are missing" >&2; exit 1; }
    [ -n "${RS:-}" ] || [ -x ./rnnsearch ] || make rnnsearch >/dev/null
    mkdir -p "$OUT"
    rs=${RS:-./rnnsearch}
    # The kernels as each side loads them (bench --bound-only names its road's;
    # the twin's OpenBLAS is asked after torch has loaded it).
    road=$("$rs" bench --bound-only f:2:2:2 --threads 1 2>/dev/null | sed -n 's/^kernel //p')
    blas=$(RNNSEARCH_GEMM=openblas "$rs" bench --bound-only f:2:2:2 --threads 1 2>/dev/null |
           sed -n 's/^kernel //p')
    twin=$(/usr/bin/python3 -c '
import ctypes, torch
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libopenblas" in l}
if libs:
    h = ctypes.CDLL(libs.pop())
    h.openblas_get_corename.restype = ctypes.c_char_p
    print("OpenBLAS " + h.openblas_get_corename().decode())
else:
    print("not OpenBLAS")' 2>/dev/null || true)
    {
        echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)," \
             "$(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), binary $rs"
        echo "rnnsearch: road ${road:-unknown} (RNNSEARCH_GEMM=${RNNSEARCH_GEMM:-auto}), OpenBLAS" \
             "${blas:-unknown}; PyTorch: ${twin:-unknown}" \
             "(OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}); $ROUNDS interleaved rounds, medians"
    } > "$OUT/summary.txt"
    for cfg in $CONFIGS; do
        for t in $THREADS; do
            "$BENCH/ab-train.sh" "$cfg" "$ROUNDS" "$SECS" "$t" "$OUT/train_${cfg}_t$t" |
                tee "$OUT/train_${cfg}_t$t.log"
        done
    done
    MODEL=${MODEL:-$OUT/train_S_t1/rs_r1/last.ckpt}
    for t in $THREADS; do
        "$BENCH/ab-decode.sh" "$MODEL" "$ROUNDS" "$t" "$OUT/decode_t$t" | tee "$OUT/decode_t$t.log"
    done
fi

# Ratios: the median rate of the rnnsearch rounds over the median of the
# PyTorch rounds (rounds that gave no rate left out).
MEDIAN='function median(v, n,   i, j, t) {
            for (i = 1; i < n; i++)
                for (j = i; j > 0 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2 }'
sed -n 1,2p "$OUT/summary.txt"
{
    echo
    echo "| work | rnnsearch (per round) | PyTorch (per round) | ratio of medians |"
    echo "|---|---|---|---|"
    for cfg in $CONFIGS; do
        for t in $THREADS; do
            awk -v cfg="$cfg" -v t="$t" "$MEDIAN"'
                function rate(line) { if (!match(line, /steady tgt_tok\/s=[0-9.a-z]+/)) return "nan"
                                      return substr(line, RSTART + 17, RLENGTH - 17) }
                function rss(line) { if (!match(line, /peak_rss_MB=[0-9]+/)) return "?"
                                     return substr(line, RSTART + 12, RLENGTH - 12) }
                / A rnnsearch:/ { a[na++] = rate($0); ra = ra (ra ? " / " : "") rss($0) }
                / B torch:/ { b[nb++] = rate($0); rb = rb (rb ? " / " : "") rss($0) }
                END { ka = kb = 0; la = lb = ""
                      for (i = 0; i < na; i++) { la = la (i ? " / " : "") a[i]; if (a[i] != "nan") ga[ka++] = a[i] }
                      for (i = 0; i < nb; i++) { lb = lb (i ? " / " : "") b[i]; if (b[i] != "nan") gb[kb++] = b[i] }
                      mb = kb ? median(gb, kb) : 0
                      ratio = ka && kb && mb > 0 ? sprintf("%.2fx", median(ga, ka) / mb) : "-"
                      printf "| train %s, %s thread(s), target tokens/s | %s | %s | %s |\n", cfg, t, la, lb, ratio
                      printf "| peak RSS MB, train %s, %s thread(s) | %s | %s | |\n", cfg, t, ra, rb }
            ' "$OUT/train_${cfg}_t$t.log"
        done
    done
    for t in $THREADS; do
        [ -f "$OUT/decode_t$t.log" ] || continue
        for b in 1 64; do
            awk -v b="$b" -v t="$t" "$MEDIAN"'
                $0 ~ ("A rnnsearch greedy_b" b "_") { for (i = 1; i <= NF; i++) if ($i == "sent/s") { a[na++] = $(i - 1) } }
                / B torch / && $0 ~ ("batch=" b " ") { for (i = 1; i <= NF; i++) if ($i ~ /^sents\/s=/) { v = $i; sub(/.*=/, "", v); b2[nb++] = v } }
                END { la = lb = ""
                      for (i = 0; i < na; i++) la = la (i ? " / " : "") a[i]
                      for (i = 0; i < nb; i++) lb = lb (i ? " / " : "") b2[i]
                      if (na && nb && (mb = median(b2, nb)) > 0)
                          printf "| greedy batch %s, sentences/s, %s thread(s) | %s | %s | %.2fx |\n", b, t, la, lb, median(a, na) / mb }
            ' "$OUT/decode_t$t.log"
        done
        awk -v t="$t" '/A rnnsearch beam5/ { for (i = 1; i <= NF; i++) if ($i == "sent/s") l = l (l ? " / " : "") $(i - 1) }
             END { if (l) printf "| beam 5 batch 32, sentences/s, %s thread(s) | %s | - | - |\n", t, l }' "$OUT/decode_t$t.log"
    done
    echo
    grep -h "outputs identical" "$OUT"/decode_t*.log || true
} | tee -a "$OUT/summary.txt"
