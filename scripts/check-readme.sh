#!/bin/sh
# Runs the README's quick start as a newcomer would: in a fresh clone of this
# checkout's HEAD (committed files only) in a temporary directory, the
# commands of the ```sh blocks under "## Quick start", then of every ```sh
# block that follows a line `<!-- check-readme -->` in the README and then in
# docs/ (commands.md first; examples of the reference that build on the quick
# start), in order, as written. Fails at
# the first command that fails (sh -e; -x shows which). About two minutes on
# two cores, the build included.
#   scripts/check-readme.sh [--keep]   (--keep: leave the clone, say where)
set -eu
cd "$(dirname "$0")/.."
keep=0
[ "${1:-}" = "--keep" ] && keep=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnnsearch-readme.XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$tmp"' EXIT
git clone -q . "$tmp/clone"
# The README first (its quick start, then its marked blocks), then the marked
# blocks of the pages in docs/, commands.md first: they build on the quick start.
pages="README.md docs/commands.md $(cd "$tmp/clone" && ls docs/*.md | grep -v '^docs/commands.md$')"
for page in $pages; do
    awk '/^## / { inside = (FILENAME ~ /README.md$/ && $0 == "## Quick start") }
         /^<!-- check-readme -->$/ { marked = 1; next }
         (inside || marked) && /^```sh$/ { code = 1; next }
         code && /^```$/ { code = 0; marked = 0 }
         code
         !code && /[^[:space:]]/ { marked = 0 }' "$tmp/clone/$page"
done > "$tmp/quickstart.sh"
if ! grep -q '[^[:space:]]' "$tmp/quickstart.sh"; then
    echo "check-readme: README.md has no sh commands under '## Quick start'" >&2
    exit 1
fi
echo "check-readme: $(grep -c '[^[:space:]]' "$tmp/quickstart.sh") commands in $tmp/clone"
start=$(date +%s)
(cd "$tmp/clone" && sh -ex "$tmp/quickstart.sh")
echo "check-readme: the quick start ran as written in $(($(date +%s) - start)) s"
[ "$keep" = 1 ] && echo "check-readme: the clone is kept in $tmp/clone"
exit 0
