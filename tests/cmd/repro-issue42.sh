#!/bin/sh
# Reproduces each of issue 42's eight defects and prints, for each, the
# right result or the clear refusal rnnsearch now gives: "ok N - ..." or
# "FAIL N - ..." (with what was seen). Exits 0 when all hold, 1 otherwise.
#
# Run from a clone after `make` (`make check-repro` runs it so):
#   tests/cmd/repro-issue42.sh            # ./rnnsearch, build/librnnsearch.so.*
#   RNNSEARCH=/path/rnnsearch RNNSEARCH_LIBRARY=/path/lib.so tests/cmd/repro-issue42.sh
# KEEP=1 keeps its temporary directory (printed nowhere: the newest /tmp/tmp.*).
# It trains a small model on 2 000 pairs of corpora/dates (30 steps) and
# takes a few seconds on one core. Item 6 needs python3 and the shared library;
# without them it is reported as skipped (RNNSEARCH_NO_SKIPS=1: a failure).
set -u
cd "$(dirname "$0")/.." || exit 1
P=${RNNSEARCH:-./rnnsearch}
LIB=${RNNSEARCH_LIBRARY:-$(ls build/librnnsearch.so.*.* 2>/dev/null | head -n 1)}
export OPENBLAS_NUM_THREADS=1
T=$(mktemp -d) || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT INT TERM
fails=0
ok() { echo "ok $1 - $2"; }
bad() {
    echo "FAIL $1 - $2"
    fails=$((fails + 1))
}
# The first line of a file, for messages.
first() { head -n 1 "$1" | cut -c1-200; }

[ -x "$P" ] || {
    echo "repro-issue42: no program $P (run make first)" >&2
    exit 1
}
head -n 2000 corpora/dates/train.tsv >"$T/train.tsv"
head -n 200 corpora/dates/dev.tsv >"$T/dev.tsv"
if ! "$P" train --train "$T/train.tsv" --dev "$T/dev.tsv" --out "$T/m" --max-steps 30 --emb 16 \
    --hidden 32 --att 32 --maxout 16 --threads 1 >/dev/null 2>"$T/train.err"; then
    echo "repro-issue42: training the small model failed: $(tail -n 1 "$T/train.err")" >&2
    exit 1
fi
"$P" lexicon -m "$T/m" "$T/train.tsv" -o "$T/lex.tsv" 2>/dev/null || {
    echo "repro-issue42: lexicon failed" >&2
    exit 1
}

# 1. --int8 with --shortlist read a word's output bias by its id from the
# shortlist's column-ordered biases. A model whose bias favours "1999" by
# +1000 says 1999 at every step in all four settings.
id=$(grep -n -x -- 1999 "$T/m/tgt_vocab.txt" | cut -d: -f1)
"$P" export -m "$T/m" -o "$T/m.safetensors" 2>/dev/null &&
    "${PYTHON:-python3}" - "$T/m.safetensors" $((id - 1)) <<'EOF' &&
import json, struct, sys
path, word = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", data[:8])[0]
begin = 8 + n + json.loads(data[8:8 + n])["out.bw"]["data_offsets"][0] + 4 * word
struct.pack_into("<f", data, begin, struct.unpack("<f", data[begin:begin + 4])[0] + 1000.0)
open(path, "wb").write(data)
EOF
    "$P" import "$T/m.safetensors" -o "$T/biased.ckpt" >/dev/null 2>&1
if [ ! -f "$T/biased.ckpt" ]; then
    bad 1 "could not make the biased model (export, python3, import)"
else
    printf '21 nov. 1999\n14 feb. 2003\n' >"$T/two.txt"
    "$P" translate -m "$T/biased.ckpt" --quiet "$T/two.txt" >"$T/plain.out" 2>&1
    : >"$T/diff1"
    for opts in "--int8" "--shortlist $T/lex.tsv,0,2" "--int8 --shortlist $T/lex.tsv,0,2"; do
        # shellcheck disable=SC2086 # the options are words
        "$P" translate -m "$T/biased.ckpt" --quiet $opts "$T/two.txt" >"$T/o.out" 2>&1
        cmp -s "$T/o.out" "$T/plain.out" || echo "$opts: '$(first "$T/o.out")'" >>"$T/diff1"
    done
    # The issue's ASan case (beam 7, a batch of one): a beam ranks finished
    # hypotheses by length too, so the output is checked to be 1999s only;
    # only the first sentence's, since alone (--batch-size 1) the second's
    # shortlist does not hold 1999.
    "$P" translate -m "$T/biased.ckpt" --quiet --int8 --shortlist "$T/lex.tsv,3,2" --beam 7 \
        --batch-size 1 "$T/two.txt" >"$T/o.out" 2>&1
    head -n 1 "$T/o.out" | tr ' ' '\n' | grep -q -v -x 1999 &&
        echo "beam 7: '$(first "$T/o.out")'" >>"$T/diff1"
    if ! grep -q '^1999 1999' "$T/plain.out"; then
        bad 1 "the biased model does not say 1999: '$(first "$T/plain.out")'"
    elif [ -s "$T/diff1" ]; then
        bad 1 "int8/shortlist differ from '$(first "$T/plain.out")': $(first "$T/diff1")"
    else
        ok 1 "--int8 --shortlist translate as plain, --int8 and --shortlist do: '$(first "$T/plain.out")'"
    fi
fi

# 2. A vocabulary file with a CR inside a line trained to exit 0 and wrote
# checkpoints every command refused. Now: a lone CR ends a line (as in every
# text file), or the file is refused before training.
awk 'NR == 9 { printf "%s\r\r\n", $0; next } { print }' "$T/m/src_vocab.txt" >"$T/cr_vocab.txt"
"$P" train --train "$T/train.tsv" --dev "$T/dev.tsv" --out "$T/cr" --max-steps 2 --emb 8 --hidden 8 \
    --att 8 --maxout 4 --threads 1 --src-vocab "$T/cr_vocab.txt" >/dev/null 2>"$T/cr.err"
rc=$?
if [ $rc -eq 0 ]; then
    if "$P" info -m "$T/cr" >/dev/null 2>"$T/info.err" &&
        echo "21 nov. 1999" | "$P" translate -m "$T/cr" --quiet >/dev/null 2>>"$T/info.err"; then
        ok 2 "a vocabulary with CR CR LF trains a model that info and translate read"
    else
        bad 2 "trained (exit 0) a model that is refused: $(first "$T/info.err")"
    fi
elif [ $rc -ne 0 ] && [ ! -e "$T/cr" ] && grep -q 'cr_vocab.txt:[0-9]' "$T/cr.err"; then
    # Bad input: file:line and a non-zero exit (docs/guarantees.md), no run left.
    ok 2 "refused before training (exit $rc): $(first "$T/cr.err" | sed 's/^[^ ]* //')"
else
    bad 2 "train exit $rc: $(first "$T/cr.err")"
fi

# 3. translate --shortlist /dev/zero grew until memory ran out.
(
    ulimit -v 2000000 2>/dev/null
    echo "21 nov. 1999" | timeout 20 "$P" translate -m "$T/m" --shortlist /dev/zero >/dev/null 2>"$T/zero.err"
)
rc=$?
# Bad input (a NUL byte) is file:line and a non-zero exit; 124 would be
# still reading after 20 s, and a memory limit's failure names no line.
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q '/dev/zero:1:' "$T/zero.err"; then
    ok 3 "--shortlist /dev/zero refused at once (exit $rc): $(first "$T/zero.err")"
else
    bad 3 "exit $rc: $(first "$T/zero.err")"
fi

# 4. lexicon --min-prob 0 wrote rows of probability 0 that translate refused.
"$P" lexicon -m "$T/m" "$T/train.tsv" --min-prob 0 --iterations 1 -o "$T/lex0.tsv" 2>"$T/lex0.err"
rc=$?
if [ $rc -eq 0 ]; then
    if "$P" translate -m "$T/m" --quiet --shortlist "$T/lex0.tsv" "$T/two.txt" >/dev/null 2>"$T/lex0.err"; then
        ok 4 "lexicon --min-prob 0 writes a table translate --shortlist reads"
    else
        bad 4 "translate refuses lexicon's table: $(first "$T/lex0.err")"
    fi
elif [ $rc -eq 2 ]; then
    ok 4 "lexicon --min-prob 0 refused: $(first "$T/lex0.err")"
else
    bad 4 "lexicon exit $rc: $(first "$T/lex0.err")"
fi

# 5. lexicon -o onto its own input learned first, then refused with exit 1.
cp "$T/train.tsv" "$T/in.tsv"
start=$(date +%s)
"$P" lexicon -m "$T/m" "$T/in.tsv" -o "$T/in.tsv" 2>"$T/self.err"
rc=$? took=$(($(date +%s) - start))
if [ $rc -eq 2 ] && [ $took -le 2 ] && cmp -s "$T/in.tsv" "$T/train.tsv"; then
    ok 5 "lexicon -o onto its input refused at once (exit 2, input kept): $(first "$T/self.err")"
else
    bad 5 "exit $rc after ${took} s (2 at once expected): $(first "$T/self.err")"
fi

# 6. Python: shortlist="lex.tsv\0junk" was cut at the NUL and used.
if [ -n "$LIB" ] && [ -f "$LIB" ] && command -v "${PYTHON:-python3}" >/dev/null; then
    RNNSEARCH_LIBRARY=$LIB PYTHONPATH=python "${PYTHON:-python3}" - "$T/m/best.ckpt" "$T/lex.tsv" \
        >"$T/py.out" 2>&1 <<'EOF'
import sys
import rnnsearch
try:
    rnnsearch.Model(sys.argv[1]).translate(["21 nov. 1999"], shortlist=sys.argv[2] + "\0junk")
except ValueError as e:
    print("ValueError:", e)
    sys.exit(0)
print("accepted")
sys.exit(1)
EOF
    if [ $? -eq 0 ]; then
        ok 6 "Python shortlist with a NUL: $(first "$T/py.out")"
    else
        bad 6 "Python: $(tail -n 1 "$T/py.out")"
    fi
elif [ "${RNNSEARCH_NO_SKIPS:-0}" = 1 ]; then
    bad 6 "no shared library or python3 (RNNSEARCH_NO_SKIPS=1)"
else
    echo "skip 6 - Python shortlist with a NUL (no shared library or python3)"
fi

# 7. A lexical table with a UTF-8 BOM failed on its first source token.
printf '\357\273\277' | cat - "$T/lex.tsv" >"$T/bom.tsv"
"$P" translate -m "$T/m" --quiet --shortlist "$T/lex.tsv" "$T/two.txt" >"$T/nobom.out" 2>&1
if "$P" translate -m "$T/m" --quiet --shortlist "$T/bom.tsv" "$T/two.txt" >"$T/bom.out" 2>&1 &&
    cmp -s "$T/bom.out" "$T/nobom.out"; then
    ok 7 "a lexical table with a BOM translates as without it"
else
    bad 7 "$(first "$T/bom.out")"
fi

# 8. --shortlist given twice was accepted (the last won).
"$P" translate -m "$T/m" --shortlist "$T/lex.tsv" --shortlist "$T/lex.tsv" "$T/two.txt" \
    >/dev/null 2>"$T/twice.err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- --shortlist "$T/twice.err"; then
    ok 8 "--shortlist twice refused: $(first "$T/twice.err")"
else
    bad 8 "exit $rc: $(first "$T/twice.err")"
fi

# A file one command writes, another reads: every hypothesis of translate's
# n-best list, the empty one too (the model's early </s>), scored by `score`
# gives its F0 (forced decoding is another road: to 1e-4). Left out: a
# hypothesis that is the joined token "-" alone ("￭-￭"), whose text is
# written without its joiners and so reads back as another token.
head -n 5 corpora/dates/test.tsv | cut -f1 >"$T/nb.src"
"$P" translate -m "$T/m" --quiet --beam 8 --n-best 8 "$T/nb.src" >"$T/nb.out" 2>"$T/nb.err"
awk -F' [|][|][|] ' 'NR == FNR { src[NR - 1] = $0; next }
    $2 != "-" { print src[$1] "\t" $2 > "'"$T/nb.tsv"'"; sub(/^F0= /, "", $3); print $3 > "'"$T/nb.f0"'" }' \
    "$T/nb.src" "$T/nb.out"
empty=$(awk -F'\t' '$2 == ""' "$T/nb.tsv" | wc -l)
if "$P" score -m "$T/m" "$T/nb.tsv" >"$T/nb.scores" 2>"$T/nb.err" &&
    [ "$(wc -l <"$T/nb.scores")" -eq "$(wc -l <"$T/nb.f0")" ] &&
    paste "$T/nb.scores" "$T/nb.f0" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-4) exit 1 }'; then
    ok 9 "score reads translate's n-best list: $(wc -l <"$T/nb.f0") hypotheses ($empty empty) as their F0"
else
    bad 9 "score of the n-best list: $(first "$T/nb.err")"
fi
[ "$empty" -gt 0 ] || bad 9 "no empty hypothesis in the n-best list: the round trip above did not try one"

# score's memory follows its batches: one pair with a 100 000-token target
# among 200 short ones scores in a batch of its own (before: every batch of
# 64 as long, 27 GB asked for). Under a 2 GB address-space limit.
head -n 200 "$T/train.tsv" >"$T/mixlong.tsv"
"${PYTHON:-python3}" -c "print('21 nov. 2026\t' + ' '.join(['11'] * 100000))" >>"$T/mixlong.tsv"
if (ulimit -v 2000000 && "$P" score -m "$T/m" "$T/mixlong.tsv" >"$T/mixlong.out" 2>"$T/mixlong.err") &&
    [ "$(wc -l <"$T/mixlong.out")" -eq 201 ]; then
    ok 10 "score: a 100 000-token target among 200 pairs in 2 GB of address space"
else
    bad 10 "score of a long target: $(first "$T/mixlong.err")"
fi

if [ $fails -ne 0 ]; then
    echo "repro-issue42: $fails of issue 42's defects reproduced"
    exit 1
fi
echo "repro-issue42: none of issue 42's eight defects reproduced; the n-best round trip holds"
exit 0
