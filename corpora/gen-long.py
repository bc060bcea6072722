#!/usr/bin/env python3
"""Generate the rnnsearch "long" corpus: sentences of 5 to 80 words whose
translation needs every source word, for the fixed-vector bottleneck
experiment (dev/bottleneck.sh, docs/why-attention.md).

Source: a sequence of words drawn from a vocabulary of 40 nouns, 20
adjectives and 20 verbs (plus the function words "and", "then"), grouped
into clauses of 3 to 8 words so that it has some structure to learn.
Target: an invented language with a one-to-one lexicon, written clause by
clause with each clause's words in reverse order:

  source  the red fox sees a dog and then the child sings
  target  ve rasa ruvik vidu nu vardo ek tam ka kindu kanta  (clauses reversed)

Every source word has exactly one target word, so a translation must carry
every word of the source, in order clause by clause: a model that squeezes
the source into one fixed-length vector has to hold all of it at once, while
an attentive decoder reads each word when it needs it. The gold alignment is
a permutation, written in Pharaoh format "i-j" (0-based source index i,
0-based target index j), sorted by j.

Lengths: train and dev sentences are uniform in [--min-len, --max-train-len]
words (so that a model cut at 30 or 50 words for training, as Bahdanau et
al.'s RNNxxx-30/-50, still sees every length up to its cut); test sentences
are uniform in [--min-len, --max-len], so every bucket of the by-length
table holds about as many sentences.

Files: OUT/{train,dev,test}.tsv (source<TAB>target) and
       OUT/{train,dev,test}.align (line n aligns line n of the .tsv).
No source sentence occurs twice, in a split or across splits.

The script uses only the standard library and is deterministic for a given
--seed. It checks its output before writing it; --check re-checks files.

Usage:  python3 corpora/gen-long.py --out DIR [--seed N] [--train N]
            [--dev N] [--test N] [--min-len N] [--max-len N]
            [--max-train-len N]
        python3 corpora/gen-long.py --check --out DIR
"""

import argparse
import os
import random
import sys

DEFAULT_SEED = 20261125

NOUNS = [("fox", "ruvik"), ("dog", "vardo"), ("cat", "mauki"), ("bird", "tsipo"),
         ("horse", "ferro"), ("farmer", "gondal"), ("teacher", "lehro"),
         ("child", "kindu"), ("girl", "tyla"), ("boy", "bako"), ("king", "raxo"),
         ("baker", "panek"), ("garden", "zunda"), ("house", "domet"),
         ("forest", "silvo"), ("river", "flumi"), ("market", "torgu"),
         ("bridge", "pontek"), ("field", "agra"), ("apple", "malo"),
         ("bread", "pano"), ("stone", "lito"), ("road", "vaya"), ("boat", "navo"),
         ("hill", "kolmi"), ("song", "kanzo"), ("letter", "skribo"),
         ("window", "fenso"), ("door", "portu"), ("table", "tablo"),
         ("chair", "sedo"), ("lamp", "lumo"), ("book", "libro"), ("wall", "muro"),
         ("tree", "arbo"), ("flower", "floro"), ("cloud", "nubo"),
         ("star", "stelo"), ("moon", "luno"), ("sun", "solo")]
ADJECTIVES = [("red", "rasa"), ("big", "gorun"), ("small", "pilik"),
              ("brown", "dumbe"), ("young", "yelo"), ("old", "vesko"),
              ("happy", "felu"), ("tall", "tanga"), ("lazy", "lomi"),
              ("quiet", "sushu"), ("clever", "kirvi"), ("green", "verda"),
              ("blue", "blua"), ("cold", "frida"), ("warm", "varma"),
              ("dark", "nokta"), ("bright", "klara"), ("slow", "lanta"),
              ("fast", "rapi"), ("strange", "strana")]
VERBS = [("sees", "vidu"), ("finds", "trovu"), ("likes", "ami"),
         ("carries", "portas"), ("follows", "sekvu"), ("paints", "pentru"),
         ("builds", "konstru"), ("reads", "legu"), ("sings", "kanta"),
         ("opens", "apertu"), ("closes", "klosu"), ("watches", "gardu"),
         ("hears", "audu"), ("draws", "desnu"), ("moves", "movu"),
         ("cleans", "purgu"), ("holds", "tenu"), ("calls", "vokus"),
         ("meets", "renku"), ("leaves", "lasu")]
DETS = [("the", "ka"), ("a", "nu"), ("this", "sei"), ("that", "tor")]
JOINERS = [("and", "ek"), ("then", "tam")]

LEXICON = dict(NOUNS + ADJECTIVES + VERBS + DETS + JOINERS)
assert len(set(LEXICON.values())) == len(LEXICON), "the lexicon is not one-to-one"


def noun_phrase(rng):
    """DET ADJ? N: 2 or 3 words."""
    words = [rng.choice(DETS)[0]]
    if rng.random() < 0.5:
        words.append(rng.choice(ADJECTIVES)[0])
    words.append(rng.choice(NOUNS)[0])
    return words


def clause(rng, room):
    """NP V [NP]: 3 to 7 words, at most `room`; None when it cannot fit."""
    subject = noun_phrase(rng)
    words = subject + [rng.choice(VERBS)[0]]
    if len(words) > room:
        return None
    obj = noun_phrase(rng)
    if len(words) + len(obj) <= room and rng.random() < 0.7:
        words += obj
    return words


def sentence(rng, length):
    """Clauses joined by "and"/"then" until `length` words are reached
    exactly (the last clause is cut or padded with adjectives to fit).
    Returns the list of clauses (lists of words), joiners as 1-word clauses."""
    clauses, used = [], 0
    while used < length:
        room = length - used
        if clauses:
            if room < 2:  # a joiner needs a word after it: pad the last clause
                clauses[-1].insert(-1, rng.choice(ADJECTIVES)[0])
                used += 1
                continue
            clauses.append([rng.choice(JOINERS)[0]])
            used += 1
            room -= 1
        c = clause(rng, room)
        if c is None:  # too little room for a clause: nouns and adjectives
            c = [rng.choice(ADJECTIVES + NOUNS)[0] for _ in range(room)]
        clauses.append(c)
        used += len(c)
    return clauses


def translate(clauses):
    """Each clause's words mapped and reversed; the gold alignment."""
    target, align, i = [], [], 0
    for c in clauses:
        n = len(c)
        for k in range(n - 1, -1, -1):
            align.append((i + k, len(target)))
            target.append(LEXICON[c[k]])
        i += n
    return target, align


def fmt_align(align):
    return " ".join("%d-%d" % (i, j) for i, j in sorted(align, key=lambda p: p[1]))


def check(splits, min_len, max_len):
    seen = set()
    for name, rows in splits.items():
        for n, (src, tgt, align) in enumerate(rows, 1):
            where = "%s line %d" % (name, n)
            s, t = src.split(), tgt.split()
            if not (min_len <= len(s) <= max_len):
                sys.exit("%s: %d source words, outside [%d, %d]" % (where, len(s), min_len, max_len))
            if len(s) != len(t):
                sys.exit("%s: %d source words but %d target words" % (where, len(s), len(t)))
            links = [tuple(map(int, p.split("-"))) for p in align.split()]
            if sorted(i for i, _ in links) != list(range(len(s))) or \
                    sorted(j for _, j in links) != list(range(len(t))):
                sys.exit("%s: the alignment is not a permutation" % where)
            for i, j in links:
                if LEXICON[s[i]] != t[j]:
                    sys.exit("%s: link %d-%d joins %s and %s" % (where, i, j, s[i], t[j]))
            if src in seen:
                sys.exit("%s: source sentence seen before" % where)
            seen.add(src)


def generate(args):
    rng = random.Random(args.seed)
    seen = set()
    splits = {}
    for name, count, top in (("train", args.train, args.max_train_len),
                             ("dev", args.dev, args.max_train_len),
                             ("test", args.test, args.max_len)):
        rows = []
        while len(rows) < count:
            clauses = sentence(rng, rng.randint(args.min_len, top))
            src = " ".join(w for c in clauses for w in c)
            if src in seen:
                continue
            seen.add(src)
            tgt, align = translate(clauses)
            rows.append((src, " ".join(tgt), fmt_align(align)))
        splits[name] = rows
    return splits


def read_split(out, name):
    with open(os.path.join(out, name + ".tsv"), encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t") for line in f]
    with open(os.path.join(out, name + ".align"), encoding="utf-8") as f:
        aligns = [line.rstrip("\n") for line in f]
    if len(pairs) != len(aligns):
        sys.exit("%s: %d pairs but %d alignments" % (name, len(pairs), len(aligns)))
    return [(s, t, a) for (s, t), a in zip(pairs, aligns)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", required=True)
    ap.add_argument("--train", type=int, default=20000)
    ap.add_argument("--dev", type=int, default=500)
    ap.add_argument("--test", type=int, default=1400)
    ap.add_argument("--min-len", type=int, default=5)
    ap.add_argument("--max-len", type=int, default=80)
    ap.add_argument("--max-train-len", type=int, default=80)
    ap.add_argument("--check", action="store_true", help="re-check the files in --out")
    args = ap.parse_args()
    if not (3 <= args.min_len <= args.max_train_len <= args.max_len):
        sys.exit("gen-long.py: need 3 <= --min-len <= --max-train-len <= --max-len")
    if args.check:
        splits = {n: read_split(args.out, n) for n in ("train", "dev", "test")}
        check(splits, args.min_len, args.max_len)
        print("gen-long.py: %s checks out" % args.out)
        return
    splits = generate(args)
    check(splits, args.min_len, args.max_len)
    os.makedirs(args.out, exist_ok=True)
    for name, rows in splits.items():
        with open(os.path.join(args.out, name + ".tsv"), "w", encoding="utf-8") as f:
            f.writelines("%s\t%s\n" % (s, t) for s, t, _ in rows)
        with open(os.path.join(args.out, name + ".align"), "w", encoding="utf-8") as f:
            f.writelines(a + "\n" for _, _, a in rows)
    print("gen-long.py: wrote %s (%s)" % (args.out, ", ".join(
        "%s %d" % (n, len(r)) for n, r in splits.items())))


if __name__ == "__main__":
    main()
