#!/bin/sh
# Where a greedy decoder step goes, by part of the model, per OpenBLAS kernel:
# perf samples of `rnnsearch translate` (one thread) with their call stacks,
# each sample given to the encoder if rs_encode is on its stack, else to the
# first function on its stack (from the leaf up) that names a part:
#   encoder        rs_encode (both directions, their GRU products, the keys
#                  U_a h + b_a, s_0)
#   attention      rs_attention_forward (W_a s, tanh scores, softmax, context)
#   GRU step       rs_gru_input_forward, rs_gru_step_forward, and
#                  rs_network_step's own (the word's embedding lookup)
#   deep output    rs_readout_maxout_forward (U_o s + V_o e + C_o c, maxout)
#   output product rs_readout_logits_forward ([V x l] W_out t + b_out)
#   log-sum-exp    search/decode.c's log_normalizer, or output_layer's own (the
#                  normaliser is inlined there)
#   argmax         rs_vargmax (or its AVX2 or portable body, reached by a tail call)
#   search         rs_greedy, rs_decoder_step/select/start's own, push_row
#   BLAS, stack not unwound  samples in an OpenBLAS kernel whose stack perf
#                  could not follow (kernels without unwind tables): decoding
#                  products of unknown caller
#   rest           everything else: loading the model, tokenizing, output
#   SOURCE and MODEL as below; KERNELS="default Haswell Sandybridge"; BATCHES="1 64"
#   MODEL=build/model-S/last.ckpt SRC=build/perfdata/test_2016_flickr.de.raw dev/profile-decode.sh
# REPORT_ONLY=1 reads the samples an earlier run left in OUT.
# Prints a table per kernel and batch size: the share of each part in the
# samples of the whole run and of the decoding alone (all but "rest").
# Needs perf (Debian: linux-perf), and MODEL and SRC: the defaults are not in a
# clone (../shared/bench/ab-train.sh trains build/model-S and prepares build/perfdata).
# SkylakeX needs AVX-512: on a CPU without it OpenBLAS dies (SIGILL); skip it.
set -eu
cd "$(dirname "$0")/.."
MODEL=${MODEL:-build/model-S/last.ckpt}
SRC=${SRC:-build/perfdata/test_2016_flickr.de.raw}
RS=${RS:-./rnnsearch}
KERNELS=${KERNELS:-"default Haswell Sandybridge"}
BATCHES=${BATCHES:-"1 64"}
OUT=${OUT:-build/profile}
FREQ=${FREQ:-1999}
# The default MODEL and SRC are not in a clone: ../shared/bench/ab-train.sh makes them.
if [ -z "${REPORT_ONLY:-}" ]; then
    command -v perf >/dev/null || { echo "profile-decode: perf is not installed (Debian: linux-perf)" >&2; exit 1; }
    for f in "$MODEL" "$SRC"; do
        [ -f "$f" ] || { echo "profile-decode: no $f: set MODEL and SRC, or run ../shared/bench/ab-train.sh" >&2; exit 1; }
    done
fi
mkdir -p "$OUT"
for k in $KERNELS; do
    for b in $BATCHES; do
        data="$OUT/perf_${k}_b$b.data"
        if [ -n "${REPORT_ONLY:-}" ]; then
            :   # the samples of an earlier run
        elif [ "$k" = default ]; then
            OPENBLAS_NUM_THREADS=1 perf record -q -F "$FREQ" --call-graph dwarf,16384 -o "$data" \
                "$RS" translate -m "$MODEL" --threads 1 --batch-size "$b" "$SRC" > "$OUT/hyp_${k}_b$b.txt" 2>/dev/null
        else
            OPENBLAS_CORETYPE=$k OPENBLAS_NUM_THREADS=1 perf record -q -F "$FREQ" --call-graph dwarf,16384 -o "$data" \
                "$RS" translate -m "$MODEL" --threads 1 --batch-size "$b" "$SRC" > "$OUT/hyp_${k}_b$b.txt" 2>/dev/null
        fi
        perf script -i "$data" -F ip,sym 2>/dev/null | awk -v kernel="$k" -v batch="$b" '
            function part(sym) {
                if (sym == "rs_encode") return "encoder"
                if (sym == "rs_attention_forward") return "attention"
                if (sym == "rs_gru_input_forward" || sym == "rs_gru_step_forward" ||
                    sym == "rs_network_step") return "GRU step"
                if (sym == "rs_readout_maxout_forward") return "deep output (maxout)"
                if (sym == "rs_readout_logits_forward") return "output layer: [V x l] product"
                if (sym == "log_normalizer" || sym == "output_layer") return "output layer: log-sum-exp"
                if (sym ~ /^(rs_vargmax|vargmax_avx2|vargmax_portable)$/) return "output layer: argmax"
                if (sym == "rs_greedy" || sym == "rs_decoder_step" || sym == "rs_decoder_select" ||
                    sym == "rs_decoder_start" || sym == "push_row") return "search"
                return ""
            }
            function flush() { if (n) { c[enc ? "encoder" : got != "" ? got : blas ? "BLAS, stack not unwound" : "rest"]++; total++ }
                               n = 0; got = ""; enc = 0; blas = 0 }
            /^$/ { flush(); next }
            { n++; sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym)
              if (sym == "rs_encode") enc = 1
              if (n == 1 && sym ~ /^(sgemm|sgemv|cblas_s)|_(ZEN|HASWELL|SANDYBRIDGE)$/) blas = 1
              if (got == "") got = part(sym) }
            END { flush()
                  split("encoder|attention|GRU step|deep output (maxout)|output layer: [V x l] product|output layer: log-sum-exp|output layer: argmax|search|BLAS, stack not unwound|rest", order, "|")
                  dec = total - c["rest"]
                  printf "kernel %s, batch %s: %d samples (%d in decoding)\n", kernel, batch, total, dec
                  for (i = 1; i <= 10; i++) {
                      p = order[i]
                      if (p == "rest") printf "  %-34s %6d  %5.1f%%\n", p, c[p], 100 * c[p] / total
                      else printf "  %-34s %6d  %5.1f%%  %5.1f%% of decoding\n", p, c[p], 100 * c[p] / total, dec ? 100 * c[p] / dec : 0
                  } }' | tee "$OUT/parts_${k}_b$b.txt"
    done
done
