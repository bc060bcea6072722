#!/bin/sh
# Whether a change kept the arithmetic: two rnnsearch builds train tiny seeded
# models on the dates corpus (each attention kind; 1 thread, 2 threads, 3
# with --accumulate 2, label smoothing; 2 MPI ranks with and without the
# all-reduce overlap where mpirun exists), and their exported parameters are
# compared byte for byte; then both translate (greedy at batch 1 and 64, beam
# with n-best, --int8, --shortlist, int8 with a shortlist and beam), align
# (text, json, pharaoh, --pairs), score and build a lexicon with the
# reference's model. Both run on OpenBLAS's road (RNNSEARCH_GEMM=openblas),
# the one whose bits a build of any earlier commit has.
#   dev/ident.sh REF_PROGRAM NEW_PROGRAM [OUT]
# prints IDENTICAL or DIFFERS per comparison; exits 1 on any DIFFERS.
# A reference build: git worktree add ../ref COMMIT && make -C ../ref rnnsearch
set -u
[ $# -ge 2 ] || { echo "usage: $0 REF_PROGRAM NEW_PROGRAM [OUT]" >&2; exit 2; }
REF=$(readlink -f "$1"); NEW=$(readlink -f "$2"); OUT=${3:-${TMPDIR:-/tmp}/ident.$$}
MAIN=$(cd "$(dirname "$0")/.." && pwd)
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then
    echo "ident: $OUT is not empty: give a new folder" >&2
    exit 2
fi
mkdir -p "$OUT" && cd "$OUT" || exit 2
head -n 1500 $MAIN/corpora/dates/train.tsv > train.tsv
head -n 100 $MAIN/corpora/dates/train.tsv | tail -n 50 > dev.tsv
head -n 120 $MAIN/corpora/dates/test.tsv > test.tsv
cut -f1 test.tsv > src.txt
export OPENBLAS_NUM_THREADS=1 RNNSEARCH_GEMM=openblas
fail=0
cmpf() { e=""; [ -s "$2" ] || e=" (both empty)"; if cmp -s "$2" "$3"; then echo "IDENTICAL $1$e"; else echo "DIFFERS   $1"; fail=1; fi; }
SZ="--emb 16 --hidden 24 --att 20 --maxout 16 --batch-size 32 --max-steps 250 --lr 0.01 --seed 7 --quiet --dropout 0.1"
tr() { # side bin tag args...
    side=$1 bin=$2 tag=$3; shift 3
    "$bin" train --train train.tsv --dev dev.tsv --out "m.$tag.$side" $SZ "$@" > "log.$tag.$side" 2>&1 || { echo "train $tag $side failed"; tail -3 "log.$tag.$side"; }
    "$bin" export -m "m.$tag.$side/last.ckpt" "m.$tag.$side.st" >/dev/null 2>&1
}
for att in additive general scaled-dot none; do
    for side in ref new; do
        if [ $side = ref ]; then b=$REF; else b=$NEW; fi
        tr $side "$b" "$att" --attention $att --threads 1
    done
    cmpf "train export attention=$att threads=1" m.$att.ref.st m.$att.new.st
done
for cfg in "t2:--threads 2" "acc:--threads 3 --accumulate 2" "ls:--label-smoothing 0.1 --threads 1"; do
    tag=${cfg%%:*}; args=${cfg#*:}
    tr ref "$REF" $tag $args; tr new "$NEW" $tag $args
    cmpf "train export $args" m.$tag.ref.st m.$tag.new.st
done
if command -v mpirun >/dev/null 2>&1; then
    for ov in 0 1; do
        for side in ref new; do
            if [ $side = ref ]; then b=$REF; else b=$NEW; fi
            RNNSEARCH_ALLREDUCE_OVERLAP=$ov mpirun --allow-run-as-root --oversubscribe -np 2 -x RNNSEARCH_ALLREDUCE_OVERLAP -x OPENBLAS_NUM_THREADS \
                "$b" train --train train.tsv --dev dev.tsv --out m.mpi$ov.$side $SZ --threads 1 > log.mpi$ov.$side 2>&1 || { echo "mpi train $side failed"; tail -3 log.mpi$ov.$side; }
            "$b" export -m m.mpi$ov.$side/last.ckpt m.mpi$ov.$side.st >/dev/null 2>&1
        done
        cmpf "train export mpirun -np 2 overlap=$ov" m.mpi$ov.ref.st m.mpi$ov.new.st
    done
else
    echo "SKIPPED   mpirun not installed"
fi
for att in additive general none; do
    M=m.$att.ref/last.ckpt
    "$REF" lexicon -m $M train.tsv -o lex.$att.ref >/dev/null 2>&1
    "$NEW" lexicon -m $M train.tsv -o lex.$att.new >/dev/null 2>&1
    cmpf "lexicon $att" lex.$att.ref lex.$att.new
    while IFS='|' read -r name args; do
        # shellcheck disable=SC2086
        "$REF" translate -m $M $args src.txt > "tr.$att.$name.ref" 2>/dev/null
        "$NEW" translate -m $M $args src.txt > "tr.$att.$name.new" 2>/dev/null
        cmpf "translate $att $name" "tr.$att.$name.ref" "tr.$att.$name.new"
    done <<LIST
greedy1|--batch-size 1
greedy64|--batch-size 64
beam5|--beam 5 --n-best 3
int8|--int8 --batch-size 16
shortlist|--shortlist lex.$att.ref,10,5 --batch-size 16
int8shortbeam|--int8 --shortlist lex.$att.ref,0,3 --beam 3
LIST
    for f in text json pharaoh; do
        "$REF" align -m $M -f $f src.txt > al.$att.$f.ref 2>/dev/null
        "$NEW" align -m $M -f $f src.txt > al.$att.$f.new 2>/dev/null
        cmpf "align $att $f" al.$att.$f.ref al.$att.$f.new
    done
    "$REF" align -m $M --pairs -f json test.tsv > alp.$att.ref 2>/dev/null
    "$NEW" align -m $M --pairs -f json test.tsv > alp.$att.new 2>/dev/null
    cmpf "align --pairs $att" alp.$att.ref alp.$att.new
    "$REF" score -m $M test.tsv > sc.$att.ref 2>/dev/null
    "$NEW" score -m $M test.tsv > sc.$att.new 2>/dev/null
    cmpf "score $att" sc.$att.ref sc.$att.new
done
[ -s tr.additive.greedy1.ref ] || { echo "DIFFERS   (no reference output: check $OUT)"; fail=1; }
exit $fail
