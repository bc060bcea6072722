"""Translation quality by source length, as Bahdanau et al. (2014) show it in
their Figure 2: the tables `rnnsearch bleu --by-length --format tsv` writes
(columns bucket, sentences, bleu, chrf; one row per bucket of source lengths
in words, "nan" scores for an empty bucket), read and drawn.

    import rnnsearch
    t = rnnsearch.read_by_length("RNNsearch-50.tsv")   # [Bucket(...), ...]
    rnnsearch.plot_by_length({"RNNencdec-50": "encdec.tsv",
                              "RNNsearch-50": "search.tsv"})

Reading needs nothing but the standard library; drawing needs matplotlib.
"""

import collections
import os

Bucket = collections.namedtuple("Bucket", "bucket sentences bleu chrf")
Bucket.__doc__ = ("One bucket of a by-length table: its label ('<10', '10-19', "
                  "'>=60'), its number of sentences, and BLEU and chrF of its "
                  "sentences scored as a corpus (nan when it is empty).")

_COLUMNS = ["bucket", "sentences", "bleu", "chrf"]


def read_by_length(path):
    """The buckets of one `bleu --by-length --format tsv` table, in order.

    Raises ValueError naming the file and line for a table of another shape."""
    buckets = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != _COLUMNS:
            raise ValueError("%s:1: not a by-length table (expected the columns %s)"
                             % (path, " ".join(_COLUMNS)))
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4:
                raise ValueError("%s:%d: %d columns, expected 4" % (path, number, len(fields)))
            try:
                buckets.append(Bucket(fields[0], int(fields[1]), float(fields[2]),
                                      float(fields[3])))
            except ValueError:
                raise ValueError("%s:%d: sentences must be an integer and the scores "
                                 "numbers or nan" % (path, number)) from None
    if not buckets:
        raise ValueError("%s: no buckets" % path)
    return buckets


def _tables(tables):
    """(label, buckets) pairs from a dict label -> path, or a list of paths
    (labelled by their names without .tsv) or of (label, path) pairs."""
    if isinstance(tables, dict):
        items = list(tables.items())
    else:
        items = [t if isinstance(t, tuple) else
                 (os.path.splitext(os.path.basename(t))[0], t) for t in tables]
    read = [(label, read_by_length(path)) for label, path in items]
    names = [b.bucket for b in read[0][1]]
    for label, buckets in read[1:]:
        if [b.bucket for b in buckets] != names:
            raise ValueError("%s: its buckets (%s) are not those of %s (%s)"
                             % (label, ", ".join(b.bucket for b in buckets),
                                read[0][0], ", ".join(names)))
    return read, names


def plot_by_length(tables, metric="bleu", ax=None, title=None):
    """BLEU (or chrF: metric="chrf") against source length, one line per
    table, on the matplotlib Axes `ax` (a new figure when None); a line breaks
    at an empty bucket. Returns the Axes."""
    if metric not in ("bleu", "chrf"):
        raise ValueError("metric must be 'bleu' or 'chrf'")
    read, names = _tables(tables)
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    x = list(range(len(names)))
    for label, buckets in read:
        # an empty bucket's nan breaks the line there
        ax.plot(x, [getattr(b, metric) for b in buckets], marker="o", label=label)
    ax.set_xticks(x)
    ax.set_xticklabels(names)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("BLEU" if metric == "bleu" else "chrF")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    return ax
