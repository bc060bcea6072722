#!/bin/sh
# Writes the manual pages of rnnsearch into OUTDIR, made by help2man from the
# program's own help, so that they say what --help says:
#   rnnsearch.1            `rnnsearch --help` and `rnnsearch help models`
#   rnnsearch-COMMAND.1    `rnnsearch COMMAND --help`, for every command that
#                          `rnnsearch --help` lists
# usage: sh scripts/gen-man.sh RNNSEARCH OUTDIR
# (`sh scripts/gen-man.sh --print RNNSEARCH [COMMAND]` is what help2man runs.)
set -e

# The help text as help2man reads it: its synopsis is found by a capital
# "Usage:" (and "or:" lines); the main page also gets the models section.
if [ "$1" = --print ]; then
    prog=$2
    case "$3" in
    -* | '')
        "$prog" --help |
            sed -e '1s/^usage:/Usage:/' -e 's/^       rnnsearch /   or: rnnsearch /'
        ;;
    *) "$prog" "$3" --help | sed -e '1s/^usage:/Usage:/' ;;
    esac
    exit 0
fi

if [ $# -ne 2 ]; then
    echo "usage: sh scripts/gen-man.sh RNNSEARCH OUTDIR" >&2
    exit 2
fi
prog=$1 out=$2
case "$prog" in /*) ;; *) prog=$(pwd)/$prog ;; esac
case "$0" in /*) self=$0 ;; *) self=$(pwd)/$0 ;; esac
if ! command -v help2man >/dev/null 2>&1; then
    echo "gen-man.sh: help2man not found (Debian: apt-get install help2man; scripts/install-deps.sh)" >&2
    exit 1
fi
# The help names the models directory from the environment; the pages must not.
unset RNNSEARCH_MODELS
# The date of the pages is the last commit's when there is one (the same
# pages from the same sources).
if [ -z "${SOURCE_DATE_EPOCH:-}" ] && t=$(git log -1 --format=%ct 2>/dev/null) && [ -n "$t" ]; then
    SOURCE_DATE_EPOCH=$t
    export SOURCE_DATE_EPOCH
fi

# shellcheck source=scripts/help-commands.sh
. "$(dirname "$0")/help-commands.sh"
read_commands "$prog" gen-man.sh

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# page NAME SUMMARY PRINT-ARG SECTIONS: one page, written whole or not at all.
page() {
    { printf '[NAME]\n%s \\- ' "$1" && printf '%s\n' "$2" | sed 's/[\\-]/\\&/g' && cat "$4"; } >"$tmp/include"
    help2man --no-info --locale=C.UTF-8 --section=1 --source="rnnsearch $version" --manual="rnnsearch manual" \
        --version-string="$version" --include="$tmp/include" --output="$tmp/$1.1" \
        "sh '$self' --print '$prog' $3"
    mv "$tmp/$1.1" "$out/$1.1"
}

{
    printf '[ENVIRONMENT]\n.TP\n.B RNNSEARCH_MODELS\n'
    printf 'The models directory: where \\fB\\-m\\fR NAME and \\fBtrain \\-\\-name\\fR NAME look first (see MODELS).\n'
    printf '[SEE ALSO]\n'
    printf '%s\n' "$commands" | while IFS='	' read -r c _; do
        printf '.BR rnnsearch\\-%s (1),\n' "$c"
    done
    printf 'and README.md and docs/ in the documentation directory of the installation (share/doc/rnnsearch).\n'
} >"$tmp/main"
# `rnnsearch help models` as a MODELS section, in roff: its list items
# ("  - ") as bullets, the rest as paragraphs. Its first line is the topic's
# title; its last says where this machine's models are, no part of a manual.
"$prog" help models | sed -e '1,2d' -e '/^Now:/d' | awk '
    { gsub(/\\/, "\\e"); gsub(/-/, "\\-"); if (/^[.\047]/) $0 = "\\&" $0 }
    /^$/ { blank = 1; next }
    /^  \\- / { sub(/^  \\- /, ""); print ".IP \\(bu 2"; print; blank = 0; item = 1; next }
    /^ / && item && !blank { sub(/^ +/, ""); print; next }
    { if (blank || item || NR == 1) print ".PP"; print; blank = 0; item = 0 }
' | { printf '[MODELS]\n'; cat; } >>"$tmp/main"
page rnnsearch "an attentive RNN translator (Bahdanau et al., 2014)" "" "$tmp/main"

# A command that takes a model or a model's name (its help says MODEL or
# NAME) gets the ENVIRONMENT section too.
printf '[ENVIRONMENT]\n.TP\n.B RNNSEARCH_MODELS\n' >"$tmp/environment"
printf 'The models directory (see \\fBrnnsearch help models\\fR).\n' >>"$tmp/environment"
printf '[SEE ALSO]\n.BR rnnsearch (1)\n' >"$tmp/see-also"
printf '%s\n' "$commands" | while IFS='	' read -r c summary; do
    if "$prog" "$c" --help | grep -q -e MODEL -e NAME; then
        cat "$tmp/environment" "$tmp/see-also" >"$tmp/command"
    else
        cat "$tmp/see-also" >"$tmp/command"
    fi
    page "rnnsearch-$c" "$summary" "$c" "$tmp/command"
done
