#!/usr/bin/env python3
"""Generate the rnnsearch "reorder" toy corpus.

Source: English-like SVO sentences from a small grammar.
Target: an invented language with a one-to-one lexicon and different word
order, so that attention alignments are not diagonal:

  source  S  -> NP_subj V [NP_obj] [ADV] [PP]
          NP -> DET ADJ* N                 (0-2 adjectives; 0-1 inside PP)
          PP -> P NP
  target  S  -> NP_subj [PP] [NP_obj] [ADV] V          (verb last, SOV)
          NP -> N ADJ* DET                 (adjectives mirrored: "big red
                                            dog" -> dog' red' big')
          PP -> NP P                       (postpositions)

Example:
  the big red dog chases a cat quickly in the garden
  vardo rasa gorun ka zunda ka ve mauki nu zivo kurrat

Every source word has exactly one target word and vice versa, there are no
punctuation marks and no target words without a source word, so tokens are
whitespace-separated words and the gold word alignment is a permutation.
It is written in Pharaoh format "i-j" (0-based source index i, 0-based target
index j), one line per sentence pair, sorted by j.

Files: OUT/{train,dev,test}.tsv (source<TAB>target) and
       OUT/{train,dev,test}.align (line n aligns line n of the .tsv).
No source sentence occurs twice, in a split or across splits.

The script uses only the standard library and is deterministic for a given
--seed.  It checks its output before writing it; --check re-checks files.

Usage:  python3 corpora/gen-reorder.py [--seed N] [--out DIR]
                                       [--train N] [--dev N] [--test N]
        python3 corpora/gen-reorder.py --check [--out DIR]
"""

import argparse
import os
import random
import sys

DEFAULT_SEED = 20260522
MIN_LEN, MAX_LEN = 3, 12

# word class -> list of (source word, target word)
LEXICON = {
    "DET": [("the", "ka"), ("a", "nu"), ("this", "sei"), ("that", "tor"),
            ("my", "mimi")],
    "ADJ": [("big", "gorun"), ("small", "pilik"), ("red", "rasa"),
            ("brown", "dumbe"), ("young", "yelo"), ("happy", "felu"),
            ("tall", "tanga"), ("lazy", "lomi"), ("quiet", "sushu"),
            ("clever", "kirvi")],
    "NA": [("dog", "vardo"), ("cat", "mauki"), ("bird", "tsipo"),
           ("horse", "ferro"), ("fox", "ruvik"), ("farmer", "gondal"),
           ("teacher", "lehro"), ("child", "kindu"), ("girl", "tyla"),
           ("boy", "bako"), ("king", "raxo"), ("baker", "panek")],
    "NP": [("garden", "zunda"), ("house", "domet"), ("forest", "silvo"),
           ("river", "flumi"), ("market", "torgu"), ("bridge", "pontek"),
           ("field", "agra")],
    "VT": [("sees", "vidat"), ("likes", "amat"), ("follows", "sekat"),
           ("chases", "kurrat"), ("finds", "trovat"), ("helps", "ajutat"),
           ("watches", "mirat")],
    "VI": [("sleeps", "dormat"), ("runs", "jogat"), ("sings", "kantat"),
           ("waits", "stepat")],
    "ADV": [("quickly", "zivo"), ("slowly", "lento"), ("today", "hodi"),
            ("often", "kerem"), ("quietly", "mulko")],
    "P": [("in", "ve"), ("near", "bliz"), ("behind", "zadu"),
          ("under", "podo"), ("beside", "yanu")],
}
S2T = {s: t for pairs in LEXICON.values() for s, t in pairs}
T2S = {t: s for s, t in S2T.items()}


def words(cls):
    return [s for s, _ in LEXICON[cls]]


class Sentence:
    """Source words plus, for each target position, its source position."""

    def __init__(self):
        self.src = []

    def add(self, word):
        self.src.append(word)
        return len(self.src) - 1


def gen_np(rng, sent, nouns, max_adj):
    """Emit DET ADJ* N into sent; return source positions in target order."""
    r = rng.random()
    n_adj = 0 if r < 0.5 else (1 if r < 0.85 else 2)
    n_adj = min(n_adj, max_adj)
    det = sent.add(rng.choice(words("DET")))
    adjs = [sent.add(a) for a in rng.sample(words("ADJ"), n_adj)]
    noun = sent.add(rng.choice(nouns))
    return [noun] + adjs[::-1] + [det]


def gen_sentence(rng):
    sent = Sentence()
    subj = gen_np(rng, sent, words("NA"), 2)
    transitive = rng.random() < 0.75
    verb = sent.add(rng.choice(words("VT" if transitive else "VI")))
    obj = gen_np(rng, sent, words("NA") + words("NP"), 2) if transitive else []
    adv = [sent.add(rng.choice(words("ADV")))] if rng.random() < 0.4 else []
    pp = []
    if rng.random() < 0.4:
        p = sent.add(rng.choice(words("P")))
        pp = gen_np(rng, sent, words("NP"), 1) + [p]
    order = subj + pp + obj + adv + [verb]
    tgt = [S2T[sent.src[i]] for i in order]
    align = [(i, j) for j, i in enumerate(order)]
    return sent.src, tgt, align


def fmt_align(align):
    return " ".join("%d-%d" % (i, j) for i, j in sorted(align, key=lambda a: a[1]))


def parse_align(line):
    out = []
    for tok in line.split():
        i, j = tok.split("-")
        out.append((int(i), int(j)))
    return out


def check(splits):
    """splits: name -> list of (source str, target str, alignment str)."""
    seen_src, seen_tgt = {}, {}
    for name, rows in splits.items():
        for n, (src, tgt, al) in enumerate(rows, 1):
            where = "%s line %d" % (name, n)
            s, t = src.split(" "), tgt.split(" ")
            if src != " ".join(s) or "" in s or "" in t:
                raise ValueError("%s: bad spacing" % where)
            if not (MIN_LEN <= len(s) <= MAX_LEN) or len(s) != len(t):
                raise ValueError("%s: bad length" % where)
            if any(w not in S2T for w in s) or any(w not in T2S for w in t):
                raise ValueError("%s: unknown word" % where)
            if src in seen_src:
                raise ValueError("%s: source also in %s" % (where, seen_src[src]))
            if tgt in seen_tgt:
                raise ValueError("%s: target also in %s" % (where, seen_tgt[tgt]))
            seen_src[src] = seen_tgt[tgt] = where
            a = parse_align(al)
            if al != fmt_align(a):
                raise ValueError("%s: alignment not sorted by j" % where)
            if sorted(i for i, _ in a) != list(range(len(s))) or \
               [j for _, j in a] != list(range(len(t))):
                raise ValueError("%s: alignment is not a permutation" % where)
            if any(S2T[s[i]] != t[j] for i, j in a):
                raise ValueError("%s: alignment disagrees with lexicon" % where)


def read_split(out, name):
    with open(os.path.join(out, name + ".tsv"), encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t") for line in f]
    with open(os.path.join(out, name + ".align"), encoding="utf-8") as f:
        aligns = [line.rstrip("\n") for line in f]
    if len(pairs) != len(aligns):
        raise ValueError("%s: %d pairs but %d alignment lines"
                         % (name, len(pairs), len(aligns)))
    return [(p[0], p[1], a) for p, a in zip(pairs, aligns)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "reorder"))
    ap.add_argument("--train", type=int, default=10000)
    ap.add_argument("--dev", type=int, default=500)
    ap.add_argument("--test", type=int, default=500)
    ap.add_argument("--check", action="store_true",
                    help="only verify existing files in --out")
    args = ap.parse_args()
    names = ["train", "dev", "test"]
    assert len(S2T) == len(T2S) and not set(S2T) & set(T2S)

    if args.check:
        splits = {n: read_split(args.out, n) for n in names}
        check(splits)
        for n in names:
            print("%s: %d pairs ok" % (n, len(splits[n])))
        return 0

    rng = random.Random(args.seed)
    sizes = {"train": args.train, "dev": args.dev, "test": args.test}
    total = sum(sizes.values())
    rows, seen = [], set()
    while len(rows) < total:
        src, tgt, align = gen_sentence(rng)
        if len(src) > MAX_LEN:
            continue
        s = " ".join(src)
        if s not in seen:
            seen.add(s)
            rows.append((s, " ".join(tgt), fmt_align(align)))
    splits, at = {}, 0
    for n in names:
        splits[n] = rows[at:at + sizes[n]]
        at += sizes[n]
    check(splits)

    os.makedirs(args.out, exist_ok=True)
    for n in names:
        with open(os.path.join(args.out, n + ".tsv"), "w", encoding="utf-8",
                  newline="\n") as f:
            f.writelines("%s\t%s\n" % (s, t) for s, t, _ in splits[n])
        with open(os.path.join(args.out, n + ".align"), "w", encoding="utf-8",
                  newline="\n") as f:
            f.writelines("%s\n" % a for _, _, a in splits[n])
        print("%s: %d pairs" % (n, len(splits[n])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
