# Completes a command line in an interactive zsh (on a pseudo-terminal, as a
# user's TAB does) and checks what it offers; run by tests/install-test.sh.
# usage: zsh -f tests/cmd/zsh-complete.zsh FPATH-DIR 'WORDS' WANT...
# Succeeds when what "rnnsearch WORDS<TAB>" shows within 10 s (a listing, or
# the word completed) has every WANT, none of which is typed in WORDS; else
# prints what it showed and fails.
zmodload zsh/zpty || exit 2
dir=$1 words=$2
shift 2
zpty z zsh -f -i || exit 2
# no_list_ambiguous: the first TAB lists the choices (not only their common prefix).
zpty -w z "fpath=(${(q)dir} \$fpath); autoload -U compinit; compinit -u -D; zstyle ':completion:*' list-prompt ''; unsetopt beep; setopt no_list_ambiguous"
zpty -w -n z "rnnsearch $words"$'\t'
out=
ok=0
deadline=$(( SECONDS + 10 ))
while (( SECONDS < deadline )); do
    if zpty -r -t z chunk; then out+=$chunk; else sleep 0.1; fi
    ok=1
    for w in "$@"; do [[ $out == *"rnnsearch "*$w* ]] || ok=0; done
    (( ok )) && break
done
zpty -d z
if (( ! ok )); then
    print -r -- "zsh: completing [rnnsearch $words] showed: ${${out//$'\r'/}[-400,-1]}"
    exit 1
fi
