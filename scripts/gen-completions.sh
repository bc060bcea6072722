#!/bin/sh
# Writes the bash or zsh completion of rnnsearch to standard output, drawn
# from the program's own help, so that a new command or option completes as
# soon as its --help lists it:
#   - the commands and their summaries: `rnnsearch --help` ("commands:");
#   - each command's options: the lines of `rnnsearch COMMAND --help` that
#     start with a few spaces and a dash ("  -m, --model MODEL   the model"),
#     whether an option takes a value (a placeholder follows it) and, when
#     its description starts with a list ("word, char or spm"), the values;
#   - -m/--model MODEL, and an operand NAME in the usage line (plot),
#     complete the model names of $RNNSEARCH_MODELS and ./models (the
#     directories `rnnsearch help models` describes) and files;
#     placeholders FILE, F, PATH and DIR complete file names, and so do
#     operands; other values (numbers, names) complete nothing.
# usage: sh scripts/gen-completions.sh RNNSEARCH bash|zsh
set -e
if [ $# -ne 2 ] || { [ "$2" != bash ] && [ "$2" != zsh ]; }; then
    echo "usage: sh scripts/gen-completions.sh RNNSEARCH bash|zsh" >&2
    exit 2
fi
prog=$1 shell=$2
unset RNNSEARCH_MODELS

# shellcheck source=scripts/help-commands.sh
. "$(dirname "$0")/help-commands.sh"
read_commands "$prog" gen-completions.sh

# One record per option line of every command's help, tab-separated:
#   command, names (space-separated), placeholder ("" for a flag), values
#   (space-separated, "" when not listed), description (its first line);
#   first, per command, a record without names whose placeholder says what
#   its operands are (MODEL or FILE).
options() {
    printf '%s\n' "$commands" | while IFS='	' read -r c _; do
        "$prog" "$c" --help | awk -v cmd="$c" '
        # The operands: a model NAME when the usage line has one that no
        # option takes ("rnnsearch plot NAME|DIR|LOG.tsv"), else files.
        NR == 1 {
            n = split($0, uw, " "); operand = "FILE"
            for (i = 4; i <= n; i++)
                if (uw[i] ~ /(^|[|[(])NAME([]|)]|$)/ && uw[i - 1] !~ /^[[(]?-/) operand = "MODEL"
            printf "%s\t\t%s\t\t\n", cmd, operand
        }
        # (mawk has no {m,n}: the indentation is measured.)
        match($0, /^ +-/) && RLENGTH <= 7 {
            line = $0; sub(/^ +/, "", line)
            names = ""; arg = ""; want = 1
            # Names, each perhaps with a placeholder, joined by ", ":
            # "-m, --model MODEL", "--src FILE, --tgt FILE", "--alignment[=WHAT]".
            while (want && match(line, /^-[A-Za-z0-9-]+(\[=[A-Z]+\])?/)) {
                name = substr(line, 1, RLENGTH); line = substr(line, RLENGTH + 1)
                if (name ~ /\[=/) { arg = substr(name, index(name, "[=") + 2); sub(/\]$/, "", arg); arg = "[" arg "]"; sub(/\[=.*/, "", name) }
                names = names (names == "" ? "" : " ") name
                want = 0
                if (line ~ /^, -/) { line = substr(line, 3); want = 1; continue }
                # A placeholder is one space away, in capitals ("FILE", "MODEL").
                if (match(line, /^ [A-Z][A-Za-z0-9_.]*,?/)) {
                    arg = substr(line, 2, RLENGTH - 1); line = substr(line, RLENGTH + 1)
                    if (arg ~ /,$/) { sub(/,$/, "", arg); want = 1; sub(/^ +/, "", line) }
                }
            }
            desc = line; sub(/^ +/, "", desc)
            # Values listed at the start of the description, perhaps after a
            # short "what: " ("score: additive, general, dot, scaled-dot (default: additive)").
            values = ""
            if (arg != "" && arg !~ /^\[/) {
                d = desc
                if (match(d, /^[A-Za-z -]+: /) && RLENGTH <= 20) d = substr(d, RLENGTH + 1)
                w = "[A-Za-z0-9][A-Za-z0-9_.-]*(,[A-Za-z0-9]+)*"
                if (match(d, "^" w "(, " w ")*( or " w ")?") && (substr(d, RLENGTH + 1) == "" || substr(d, RLENGTH + 1, 2) == " (")) {
                    v = substr(d, 1, RLENGTH)
                    if (v ~ /, | or /) { gsub(/, | or /, " ", v); values = v }
                }
            }
            printf "%s\t%s\t%s\t%s\t%s\n", cmd, names, arg, values, desc
        }' || exit 1
    done
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! options >"$tmp"; then
    echo "gen-completions.sh: reading the options of $prog's commands failed" >&2
    exit 1
fi

if [ "$shell" = bash ]; then
    cmds=$(printf '%s\n' "$commands" | cut -f1 | tr '\n' ' ' | sed 's/ $//')
    cat <<EOF
# bash completion for rnnsearch $version: commands, their options and values,
# model names for -m. Generated from the program's --help by
# scripts/gen-completions.sh; not to be edited.

# Model names: the directories of \$RNNSEARCH_MODELS, then of ./models.
_rnnsearch_models() {
    local d m
    for d in "\${RNNSEARCH_MODELS:-}" models; do
        if [ -z "\$d" ] || [ ! -d "\$d" ]; then continue; fi
        for m in "\$d"/*/; do
            [ -d "\$m" ] || continue
            m=\${m%/}
            printf '%s\\n' "\${m##*/}"
        done
    done
}

_rnnsearch() {
    local cur prev cmd opts values opt operand
    cur=\${COMP_WORDS[COMP_CWORD]}
    prev=
    [ "\$COMP_CWORD" -gt 0 ] && prev=\${COMP_WORDS[COMP_CWORD - 1]}
    # "--opt=value": bash splits the word at "=".
    if [ "\$cur" = = ]; then
        cur=
    elif [ "\$prev" = = ] && [ "\$COMP_CWORD" -gt 1 ]; then
        prev=\${COMP_WORDS[COMP_CWORD - 2]}
    fi
    COMPREPLY=()
    if [ "\$COMP_CWORD" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "$cmds help -h --help -V --version" -- "\$cur")
        return 0
    fi
    cmd=\${COMP_WORDS[1]}
    if [ "\$cmd" = help ]; then
        [ "\$COMP_CWORD" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "$cmds models" -- "\$cur")
        return 0
    fi
    # opts: every option of the command; values: the options that take a
    # value, each followed by ':' and its listed values ('|' between), FILE
    # for a file, DIR for a directory, MODEL for a model, or nothing (a number,
    # a name: nothing to offer).
    case "\$cmd" in
EOF
    awk -F '\t' '
        function flush() { if (cur != "") printf "    %s)\n        opts=\"%s\"\n        values=\"%s\"\n        operand=%s\n        ;;\n", cur, opts, vals, operand }
        $1 != cur { flush(); cur = $1; opts = ""; vals = ""; operand = "FILE" }
        $2 == "" { operand = $3; next }
        {
            n = split($2, names, " ")
            for (i = 1; i <= n; i++) {
                opts = opts (opts == "" ? "" : " ") names[i]
                if ($3 == "" || $3 ~ /^\[/) continue
                kind = ""
                if ($4 != "") { kind = $4; gsub(/ /, "|", kind) }
                else if ((names[i] == "-m" || names[i] == "--model") && $3 == "MODEL") kind = "MODEL"
                else if ($3 ~ /^(FILE|F|PATH|MODEL)$/) kind = "FILE"
                else if ($3 == "DIR") kind = "DIR"
                vals = vals (vals == "" ? "" : " ") names[i] ":" kind
            }
        }
        END { flush() }' "$tmp"
    cat <<EOF
    *) return 0 ;;
    esac
    for opt in \$values; do
        [ "\${opt%%:*}" = "\$prev" ] || continue
        case "\${opt#*:}" in
        MODEL)
            [ "\${cur#*/}" = "\$cur" ] && mapfile -t COMPREPLY < <(compgen -W "\$(_rnnsearch_models)" -- "\$cur")
            mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "\$cur")
            compopt -o filenames 2>/dev/null
            ;;
        FILE)
            mapfile -t COMPREPLY < <(compgen -f -- "\$cur")
            compopt -o filenames 2>/dev/null
            ;;
        DIR)
            mapfile -t COMPREPLY < <(compgen -d -- "\$cur")
            compopt -o filenames 2>/dev/null
            ;;
        '') ;;
        *)
            opt=\${opt#*:}
            mapfile -t COMPREPLY < <(compgen -W "\${opt//|/ }" -- "\$cur")
            ;;
        esac
        return 0
    done
    if [ "\${cur#-}" != "\$cur" ]; then
        mapfile -t COMPREPLY < <(compgen -W "\$opts" -- "\$cur")
    else
        [ "\$operand" = MODEL ] && [ "\${cur#*/}" = "\$cur" ] &&
            mapfile -t COMPREPLY < <(compgen -W "\$(_rnnsearch_models)" -- "\$cur")
        mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "\$cur")
        compopt -o filenames 2>/dev/null
    fi
    return 0
}
complete -F _rnnsearch rnnsearch
EOF
    exit 0
fi

# zsh: _arguments specs, one per option name.
cat <<EOF
#compdef rnnsearch
# zsh completion for rnnsearch $version: commands, their options and values,
# model names for -m. Generated from the program's --help by
# scripts/gen-completions.sh; not to be edited.

# Model names (the directories of \$RNNSEARCH_MODELS, then of ./models) and files.
_rnnsearch_models() {
    local -a names
    local d
    for d in \${RNNSEARCH_MODELS:-} models; do
        [[ -d \$d ]] && names+=(\$d/*(N/:t))
    done
    _alternative 'models:model name:compadd -a names' 'files:checkpoint or directory:_files'
}

_rnnsearch() {
    local -a commands
    commands=(
EOF
printf '%s\n' "$commands" | awk -F '\t' '{ d = $2; gsub(/\047/, "\047\\\047\047", d); gsub(/:/, "\\:", d); printf "        \047%s:%s\047\n", $1, d }'
cat <<EOF
    )
    if (( CURRENT == 2 )); then
        _describe -t commands 'rnnsearch command' commands
        return
    fi
    local cmd=\$words[2]
    shift words
    (( CURRENT-- ))
    case \$cmd in
    help)
        local -a topics
        topics=('models:where models are found and saved')
        (( CURRENT == 2 )) && _describe -t commands 'command or topic' commands topics
        ;;
EOF
awk -F '\t' '
    function q(s) { gsub(/\047/, "\047\\\047\047", s); return s }
    function flush() { if (cur != "") printf "    %s)\n        _arguments -s -S \\\n%s            \047*:%s\047\n        ;;\n", cur, specs, operand }
    $1 != cur { flush(); cur = $1; specs = ""; operand = "file:_files" }
    $2 == "" { if ($3 == "MODEL") operand = "model:_rnnsearch_models"; next }
    {
        desc = $5; gsub(/[][\\]/, "\\\\&", desc); desc = q(desc)
        n = split($2, names, " ")
        for (i = 1; i <= n; i++) {
            nm = names[i]
            rep = (nm == "-m" || nm == "--model" || $5 ~ /repeat/) ? "*" : ""
            if ($3 == "") { spec = rep nm "[" desc "]" }
            else if ($3 ~ /^\[/) { spec = rep nm "=-[" desc "]::" substr($3, 2, length($3) - 2) ":" }
            else {
                action = " "
                if ($4 != "") action = "(" $4 ")"
                else if ((nm == "-m" || nm == "--model") && $3 == "MODEL") action = "_rnnsearch_models"
                else if ($3 ~ /^(FILE|F|PATH|MODEL)$/) action = "_files"
                else if ($3 == "DIR") action = "_files -/"
                spec = rep nm (nm ~ /^--/ ? "=" : "+") "[" desc "]:" $3 ":" action
            }
            specs = specs "            \047" spec "\047 \\\n"
        }
    }
    END { flush() }' "$tmp"
cat <<EOF
    esac
}

_rnnsearch "\$@"
EOF
