#!/bin/sh
# Dev BLEU (or whatever metric the runs logged) per epoch of several training
# runs side by side, for comparing variants at equal epochs: the log of a run
# records its last evaluation of each epoch.
#   dev/compare-runs.sh models/A models/B ...
set -eu
[ $# -ge 1 ] || { echo "usage: $0 MODEL_DIR..." >&2; exit 2; }
for dir in "$@"; do
    [ -f "$dir/train.log.tsv" ] || { echo "$0: $dir/train.log.tsv: no such file" >&2; exit 1; }
done
awk -F'\t' '
    FNR == 1 { run++; name[run] = FILENAME; sub(/\/train\.log\.tsv$/, "", name[run]); sub(/.*\//, "", name[run]); next }
    $5 != "" { metric[run, $2 + 0] = $5; if ($2 + 0 > last) last = $2 + 0 }
    END {
        printf "epoch"; for (r = 1; r <= run; r++) printf "\t%s", name[r]; printf "\n"
        for (e = 1; e <= last; e++) {
            printf "%d", e
            for (r = 1; r <= run; r++) printf "\t%s", ((r, e) in metric) ? metric[r, e] : "-"
            printf "\n"
        }
    }' $(for dir in "$@"; do printf '%s/train.log.tsv ' "$dir"; done)
