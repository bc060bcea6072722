# Sourced by gen-man.sh and gen-completions.sh: what both read off the program.
# read_commands PROG WHO sets $version (from --version) and $commands (one
# "name<TAB>summary" line per command, as `PROG --help` lists them), or says
# that WHO found none and exits 1.
read_commands() {
    version=$("$1" --version | sed -n '1s/^rnnsearch //p')
    commands=$("$1" --help | sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z0-9-]*\)  *\(.*\)$/\1	\2/p')
    if [ -z "$commands" ] || [ -z "$version" ]; then
        echo "$2: $1 --help lists no commands (or --version no version)" >&2
        exit 1
    fi
}
