#!/bin/sh
# rnnsearch installed, used as a stranger would: `make install` into a
# temporary prefix, then, from another directory with RNNSEARCH_MODELS set to
# a temporary models directory and only the installed program on PATH, train a
# tiny model on a few hundred dates with --name, translate, align and serve
# (one POST /api/translate on loopback); `man rnnsearch-train` renders; the
# bash and zsh completions complete commands, options, values and model
# names; examples/translate.c builds with pkg-config against the installed
# library, and it and the installed Python package translate as the program
# does (also installed into a user site, with HOME or PYTHONUSERBASE, and
# `pip install ./python` offline in a venv of each Python >= 3.9 here);
# `make uninstall` leaves the prefix without our files; DESTDIR
# stages the same tree. Run by `make check` from the checkout (MAKE: the make
# to use). With RNNSEARCH_NO_SKIPS=1 a part that would be skipped fails.
set -u
root=$(pwd)
make=${MAKE:-make}
# The library's soname follows its major version (src/api/rnnsearch.h).
soname=librnnsearch.so.$(sed -n 's/^#define RNNSEARCH_VERSION_MAJOR //p' "$root/src/api/rnnsearch.h")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnnsearch-install-XXXXXX")
server=
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

failed=0
fail() {
    echo "install-test: FAIL: $*" >&2
    failed=1
}
skip() {
    if [ "${RNNSEARCH_NO_SKIPS:-}" = 1 ]; then
        fail "$* (RNNSEARCH_NO_SKIPS=1)"
    else
        echo "install-test: SKIP $*" >&2
    fi
}
# Shows a log and stops: what follows needs what failed.
give_up() {
    fail "$1"
    [ -f "$2" ] && sed 's/^/    /' "$2" >&2
    exit 1
}

prefix=$tmp/prefix
$make --no-print-directory -C "$root" install PREFIX="$prefix" >"$tmp/install.log" 2>&1 ||
    give_up "make install PREFIX=$prefix" "$tmp/install.log"
for f in bin/rnnsearch share/man/man1/rnnsearch.1 share/man/man1/rnnsearch-train.1 \
    share/man/man1/rnnsearch-serve.1 share/bash-completion/completions/rnnsearch \
    share/zsh/site-functions/_rnnsearch share/doc/rnnsearch/README.md \
    share/doc/rnnsearch/docs/model.md include/rnnsearch.h lib/librnnsearch.so lib/$soname \
    lib/librnnsearch.a lib/pkgconfig/rnnsearch.pc; do
    [ -f "$prefix/$f" ] || fail "make install did not install $f"
done

# Another directory, a models directory of its own, and the installed program only.
work=$tmp/work
mkdir -p "$work" "$tmp/models"
head -n 300 "$root/corpora/dates/train.tsv" >"$work/pairs.tsv"
cd "$work" || exit 1
RNNSEARCH_MODELS=$tmp/models
PATH=$prefix/bin:$PATH
export RNNSEARCH_MODELS PATH
[ "$(command -v rnnsearch)" = "$prefix/bin/rnnsearch" ] || fail "rnnsearch on PATH is $(command -v rnnsearch)"

rnnsearch train --train pairs.tsv --name tiny --emb 8 --hidden 16 --att 16 --maxout 8 \
    --epochs 2 --threads 1 >"$tmp/train.log" 2>&1 || give_up "train --name tiny" "$tmp/train.log"
[ -f "$tmp/models/tiny/last.ckpt" ] || fail "train --name tiny wrote no \$RNNSEARCH_MODELS/tiny/last.ckpt"
[ -e models ] && fail "train --name with RNNSEARCH_MODELS set made ./models"

printf '21 nov. 2026\n3/4/99\n' | rnnsearch translate -m tiny --quiet >"$tmp/out.txt" 2>"$tmp/err.txt" ||
    give_up "translate -m tiny" "$tmp/err.txt"
[ "$(wc -l <"$tmp/out.txt")" -eq 2 ] || fail "translate -m tiny printed $(wc -l <"$tmp/out.txt") lines for 2"

printf '21 nov. 2026\n' | rnnsearch align -m tiny -f json >"$tmp/align.json" 2>"$tmp/err.txt" ||
    give_up "align -m tiny -f json" "$tmp/err.txt"
grep -q '"source"' "$tmp/align.json" || fail "align -f json has no \"source\": $(head -c 200 "$tmp/align.json")"

rnnsearch translate -m no-such-model </dev/null >/dev/null 2>"$tmp/err.txt"
[ $? -eq 1 ] || fail "translate -m no-such-model did not fail with status 1"
grep -q "$tmp/models/no-such-model" "$tmp/err.txt" ||
    fail "a missing model's message does not name \$RNNSEARCH_MODELS: $(cat "$tmp/err.txt")"

# serve on any free port; its banner on stderr names the port. (The log
# exists before the server starts: the loop may read it first.)
: >"$tmp/serve.log"
rnnsearch serve -m tiny --port 0 --threads 1 --quiet 2>"$tmp/serve.log" &
server=$!
port=
i=0
while [ $i -lt 100 ] && [ -z "$port" ]; do
    port=$(sed -n 's|^rnnsearch serve: http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$tmp/serve.log")
    [ -n "$port" ] || sleep 0.1
    i=$((i + 1))
done
if [ -z "$port" ]; then
    give_up "serve -m tiny --port 0 printed no address in 10 s" "$tmp/serve.log"
fi
# One request through bash's /dev/tcp (no client program needed).
body='{"text": "21 nov. 2026"}'
if command -v bash >/dev/null 2>&1; then
    bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s" "${#2}" "$2" >&3
        cat <&3' sh "$port" "$body" >"$tmp/answer" 2>&1 || fail "no answer from serve on port $port"
    head -n 1 "$tmp/answer" | grep -q '^HTTP/1.1 200' || fail "POST /api/translate: $(head -c 300 "$tmp/answer")"
    grep -q '"translation"' "$tmp/answer" || fail "POST /api/translate answered no translation"
else
    skip "serve request: no bash for /dev/tcp"
fi
kill -TERM "$server"
wait "$server"
status=$?
server=
[ $status -eq 0 ] || fail "serve stopped by SIGTERM exited with $status"

if command -v man >/dev/null 2>&1; then
    MANPATH=$prefix/share/man man -P cat rnnsearch-train >"$tmp/man.txt" 2>"$tmp/err.txt" ||
        fail "man rnnsearch-train: $(cat "$tmp/err.txt")"
    grep -q 'rnnsearch-train - train' "$tmp/man.txt" || fail "man rnnsearch-train has no NAME line"
    grep -q -- '--epochs' "$tmp/man.txt" || fail "man rnnsearch-train does not list --epochs"
    MANPATH=$prefix/share/man man -P cat rnnsearch 2>/dev/null | grep -q 'RNNSEARCH_MODELS' ||
        fail "man rnnsearch does not say RNNSEARCH_MODELS"
else
    skip "man pages rendered: no man (Debian: man-db)"
fi

# The bash completion, called as bash calls it: COMP_WORDS and COMP_CWORD set.
if command -v bash >/dev/null 2>&1; then
    bash --norc --noprofile -c '
        . "$1" || exit 1
        complete -p rnnsearch | grep -q "_rnnsearch" || { echo "complete -p: $(complete -p rnnsearch)"; exit 1; }
        t() { want=$1; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
              _rnnsearch; [ "${COMPREPLY[*]}" = "$want" ] || echo "completing [$*] gave [${COMPREPLY[*]}], not [$want]"; }
        t "train translate" rnnsearch tr
        t "--epochs" rnnsearch train --epo
        t "word char spm space" rnnsearch train --tokenizer ""
        t "tiny" rnnsearch translate -m ti
        t "tiny" rnnsearch plot ti
        t "models" rnnsearch help mod
    ' sh "$prefix/share/bash-completion/completions/rnnsearch" >"$tmp/bash.txt" 2>&1
    [ -s "$tmp/bash.txt" ] && fail "bash completion: $(cat "$tmp/bash.txt")"
else
    skip "bash completion: no bash"
fi
# The zsh completion: found on fpath by compinit, registered for rnnsearch,
# and what a TAB lists in an interactive zsh.
if command -v zsh >/dev/null 2>&1; then
    zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -d "$2/zcompdump"
        [[ $_comps[rnnsearch] = _rnnsearch ]]' sh "$prefix/share/zsh/site-functions" "$tmp" \
        >"$tmp/zsh.txt" 2>&1 || fail "zsh completion not registered by compinit: $(cat "$tmp/zsh.txt")"
    zc() { TERM=dumb HOME=$tmp zsh -f "$root/tests/cmd/zsh-complete.zsh" "$prefix/share/zsh/site-functions" "$@" >"$tmp/zsh.txt" 2>&1 ||
        fail "$(cat "$tmp/zsh.txt")"; }
    # What a TAB lists needs a pseudo terminal (zsh's zpty), which a minimal
    # container or chroot may lack (no /dev/pts): then that part is skipped.
    if zsh -f -c 'zmodload zsh/zpty && zpty probe true && zpty -d probe' >"$tmp/zpty.txt" 2>&1; then
        zc 'tr' train translate
        zc 'train --tokenizer ' word char spm space
        zc 'translate -m ti' tiny
        zc 'plot ti' tiny
    else
        skip "zsh completion's TAB: no pseudo terminal here ($(head -n 1 "$tmp/zpty.txt"))"
    fi
else
    skip "zsh completion: no zsh"
fi

# The library from outside: examples/translate.c built with cc and the
# installed rnnsearch.pc alone, and the installed Python package (which finds
# the library through the _paths.py make install wrote), each translating as
# the installed program does; then the package installed into a user site,
# and `pip install ./python` in a venv of each Python.
printf '21 nov. 2026\n3/4/99\n\n' >"$tmp/lib-in.txt"
rnnsearch translate -m tiny --quiet "$tmp/lib-in.txt" >"$tmp/lib-want.txt" 2>"$tmp/err.txt" ||
    give_up "translate -m tiny" "$tmp/err.txt"
# shellcheck disable=SC2046
if cc -o translate "$root/examples/translate.c" $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs rnnsearch) \
    >"$tmp/cc.log" 2>&1; then
    LD_LIBRARY_PATH=$prefix/lib ./translate tiny <"$tmp/lib-in.txt" >"$tmp/lib-got.txt" 2>"$tmp/err.txt" ||
        fail "examples/translate against the installed library: $(cat "$tmp/err.txt")"
    cmp -s "$tmp/lib-want.txt" "$tmp/lib-got.txt" || fail "examples/translate translates otherwise than rnnsearch"
else
    fail "examples/translate.c does not build with pkg-config rnnsearch: $(cat "$tmp/cc.log")"
fi
python=${PYTHON:-python3}
pycode='import rnnsearch, sys; print("\n".join(rnnsearch.Model("tiny").translate(sys.stdin.read().split("\n")[:-1])))'
# py_translate WHAT [VAR=VALUE...] PYTHON: the package as PYTHON imports it
# (with only the variables given, RNNSEARCH_LIBRARY unset) translates as the
# program does.
py_translate() {
    what=$1
    shift
    env -u RNNSEARCH_LIBRARY -u PYTHONPATH -u PYTHONUSERBASE "$@" -c "$pycode" <"$tmp/lib-in.txt" \
        >"$tmp/lib-got.txt" 2>"$tmp/err.txt" || { fail "$what: $(cat "$tmp/err.txt")"; return; }
    cmp -s "$tmp/lib-want.txt" "$tmp/lib-got.txt" || fail "$what translates otherwise than rnnsearch"
}
# The package make install put where $python imports from for the prefix
# (scripts/python-site.py): a temporary prefix is on no sys.path, so
# PYTHONPATH names it there; the library is found through _paths.py.
pydir=$("$python" "$root/scripts/python-site.py" "$prefix")
if [ ! -f "$pydir/rnnsearch/__init__.py" ] || [ ! -f "$pydir/rnnsearch/_paths.py" ]; then
    fail "make install installed no Python package in $pydir"
elif "$python" -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$pydir"; then
    py_translate "the installed Python package" "$python"
else
    py_translate "the installed Python package" PYTHONPATH="$pydir" "$python"
fi
# make install says where the package went and, its directory being on no
# sys.path here (a temporary prefix), the PYTHONPATH to set.
grep -qxF "The Python package rnnsearch is in $pydir/rnnsearch." "$tmp/install.log" ||
    fail "make install did not say where the Python package went: $(tail -n 4 "$tmp/install.log")"
if ! "$python" -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$pydir"; then
    grep -qF "export PYTHONPATH=$pydir" "$tmp/install.log" ||
        fail "make install did not say to set PYTHONPATH=$pydir: $(tail -n 4 "$tmp/install.log")"
fi
# A user-site layout: PREFIX=~/.local (HOME faked), and PREFIX=$PYTHONUSERBASE:
# importable with no variable but those.
home=$tmp/home
mkdir -p "$home"
for how in "HOME=$home $home/.local" "PYTHONUSERBASE=$tmp/userbase $tmp/userbase"; do
    var=${how% *}
    at=${how#* }
    env "$var" $make --no-print-directory -C "$root" install-lib PREFIX="$at" >"$tmp/install.log" 2>&1 ||
        give_up "$var make install-lib PREFIX=$at" "$tmp/install.log"
    ls "$at"/lib/python*/site-packages/rnnsearch/__init__.py >/dev/null 2>&1 ||
        fail "$var make install-lib PREFIX=$at: no package in the user site: $(find "$at" -name __init__.py)"
    py_translate "the package in the user site ($var)" "$var" "$python"
    # The user site is on sys.path: nothing to set, and nothing said.
    ! grep -q "PYTHONPATH" "$tmp/install.log" ||
        fail "$var make install-lib PREFIX=$at asks for a PYTHONPATH: $(tail -n 4 "$tmp/install.log")"
    env "$var" $make --no-print-directory -C "$root" uninstall-lib PREFIX="$at" >"$tmp/uninstall.log" 2>&1 ||
        give_up "$var make uninstall-lib PREFIX=$at" "$tmp/uninstall.log"
    left=$(find "$at" ! -type d)
    [ -z "$left" ] || fail "$var make uninstall-lib left: $left"
done

# `pip install ./python` offline in a fresh venv (no system site packages)
# of every Python >= 3.9 here: the package's build backend is in the tree,
# so pip needs neither setuptools nor wheel, and the wheel carries the
# build's library. RNNSEARCH_TEST_PYTHONS (a list of programs) overrides the
# search of PATH, /usr/bin and pyenv's versions.
pythons=${RNNSEARCH_TEST_PYTHONS:-$( {
    command -v python3
    ls /usr/bin/python3 /usr/bin/python3.[0-9]* /usr/local/bin/python3.[0-9]* 2>/dev/null
    ls "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/*/bin/python3 2>/dev/null
} | grep -v -- '-config$')}
# One venv per installation (version and base prefix: Debian's 3.11 and
# pyenv's 3.11 are two), however many names lead to it.
seen=
n=0
for py in $pythons; do
    v=$("$py" -c 'import sys; sys.version_info >= (3, 9) and print("%d.%d:%s" % (sys.version_info[:2] + (sys.base_prefix,)))' 2>/dev/null)
    [ -n "$v" ] || continue
    case " $seen " in *" $v "*) continue ;; esac
    if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
        skip "pip install in a venv of $py ($v): no venv or ensurepip (Debian: python3-venv)"
        continue
    fi
    seen="$seen $v"
    n=$((n + 1))
    venv=$tmp/venv-$n
    "$py" -m venv "$venv" >"$tmp/venv.log" 2>&1 || { fail "$py -m venv: $(cat "$tmp/venv.log")"; continue; }
    "$venv/bin/python" -m pip install --quiet --no-index "$root/python" >"$tmp/pip.log" 2>&1 ||
        { fail "pip install --no-index ./python in a venv of $py ($v): $(cat "$tmp/pip.log")"; continue; }
    py_translate "the package pip installed in a venv of $py ($v)" "$venv/bin/python"
done
[ -n "$seen" ] || skip "pip install ./python: no Python >= 3.9 with venv and ensurepip"

cd "$root" || exit 1
$make --no-print-directory -C "$root" uninstall PREFIX="$prefix" >"$tmp/uninstall.log" 2>&1 ||
    give_up "make uninstall PREFIX=$prefix" "$tmp/uninstall.log"
left=$(find "$prefix" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
[ -d "$prefix/share/doc/rnnsearch" ] && fail "make uninstall left share/doc/rnnsearch"

# DESTDIR: the tree of PREFIX, staged under it.
$make --no-print-directory -C "$root" install DESTDIR="$tmp/stage" PREFIX=/opt/rs >"$tmp/install.log" 2>&1 ||
    give_up "make install DESTDIR=$tmp/stage" "$tmp/install.log"
if [ ! -x "$tmp/stage/opt/rs/bin/rnnsearch" ] || [ ! -f "$tmp/stage/opt/rs/share/man/man1/rnnsearch-translate.1" ]; then
    fail "make install DESTDIR=$tmp/stage PREFIX=/opt/rs: no opt/rs/bin/rnnsearch or man page under the stage"
fi
$make --no-print-directory -C "$root" uninstall DESTDIR="$tmp/stage" PREFIX=/opt/rs >"$tmp/uninstall.log" 2>&1 ||
    give_up "make uninstall DESTDIR=$tmp/stage" "$tmp/uninstall.log"
left=$(find "$tmp/stage" ! -type d)
[ -z "$left" ] || fail "make uninstall DESTDIR=… left: $left"

if [ $failed -ne 0 ]; then
    exit 1
fi
echo "install-test: installed, trained, translated, aligned, served, man, completions, library (C, Python; pip in venvs of${seen:- no Python}), uninstalled: ok"
