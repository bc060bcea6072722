#!/bin/sh
# Includes run one way: a file in src/LAYER/ (or a folder of it) may include headers of its own
# layer and of the layers before it in the list given (the Makefile's LAYERS,
# lowest first), always by their layer path ("nn/gru.h"). Prints every
# include that breaks the order and exits 1; silent and 0 when all hold.
#   usage: scripts/check-layers.sh common text model ... cmd
[ $# -gt 0 ] || { echo "usage: $0 LAYER..." >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
rank=1
order=""
for layer in "$@"; do
    order="$order $layer=$rank"
    rank=$((rank + 1))
done
status=0
for dir in src/*/; do
    layer=$(basename "$dir")
    case " $* " in *" $layer "*) ;; *) echo "src/$layer/: a folder that is not a layer (add it to LAYERS)"; status=1 ;; esac
done
for file in src/*/*.c src/*/*.cc src/*/*.h src/*/*/*.c src/*/*/*.h; do
    [ -f "$file" ] || continue
    layer=$(echo "$file" | cut -d/ -f2) # src/LAYER/[FOLDER/]FILE
    awk -v file="$file" -v layer="$layer" -v order="$order" '
        BEGIN { n = split(order, pairs, " ")
                for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); rank[kv[1]] = kv[2] + 0 } }
        /^[ \t]*#[ \t]*include[ \t]*"/ {
            match($0, /"[^"]*"/); header = substr($0, RSTART + 1, RLENGTH - 2)
            if (header !~ /\//) {
                printf "%s:%d: includes \"%s\" without its layer folder\n", file, NR, header; bad = 1; next
            }
            split(header, part, "/"); target = part[1]
            if (!(target in rank)) {
                printf "%s:%d: includes \"%s\" from no layer\n", file, NR, header; bad = 1
            } else if (rank[target] > rank[layer]) {
                printf "%s:%d: %s includes %s (\"%s\"), a layer above it\n", file, NR, layer, target, header; bad = 1
            }
        }
        END { exit bad }' "$file" || status=1
done
exit $status
