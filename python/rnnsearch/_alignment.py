"""Alignment matrices: the data (tokens exactly, weights as a NumPy array)
and how people see them (a notebook's SVG, matplotlib's plot), with the
word tokenizer's joiner marks dropped from the labels as `rnnsearch align`
draws them (docs/alignment.md, "Word tokens in pictures")."""

import re
from xml.sax.saxutils import escape

JOINER = "\uffed"  # U+FFED, the word tokenizer's joiner mark (src/text/text.h)


def label(token):
    """A token as the program's pictures (text, svg, html) label it: one
    joiner mark dropped at each end ("￭-￭" is "-", "￭," is ","); a literal
    joiner (the token "<￭>") and a lone mark stay as they are."""
    if token == "<" + JOINER + ">":
        return token
    if len(token) > 1 and token.startswith(JOINER):
        token = token[1:]
    if len(token) > 1 and token.endswith(JOINER):
        token = token[:-1]
    return token


def matrix(pointer, rows, cols):
    """A float32 [rows, cols] copy of a C float array (NumPy needed here only:
    translate, score and tokenize work without it)."""
    try:
        import numpy as np
    except ImportError:
        raise ImportError("rnnsearch: alignment matrices are NumPy arrays: install NumPy "
                          "(pip install numpy; Debian: apt-get install python3-numpy)") from None
    return np.ctypeslib.as_array(pointer, shape=(rows, cols)).astype(np.float32, copy=True)


# Characters XML 1.0 does not allow (C0 controls but tab, LF and CR; U+FFFE,
# U+FFFF), and DEL, which tokens may hold: drawn as U+FFFD, as the program's
# SVG writer (src/common/svg.c) draws them, so that the picture still parses.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
_REFS = {"\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}


def _xml(text):
    """text as XML character data: & < > escaped, tab, LF and CR as character
    references, the characters XML cannot hold as U+FFFD."""
    return escape(_NOT_XML.sub("\ufffd", text), _REFS)


# The SVG's geometry, in pixels: a cell, a character of a label (an
# estimate for a sans-serif face at FONT), the gap between labels and cells.
CELL, FONT, CHAR, GAP = 22, 12, 7.5, 6


def _grey(w):
    """Weight 1 white, 0 black, as in the paper's figure 3."""
    v = int(round(255 * min(max(float(w), 0.0), 1.0)))
    return "#%02x%02x%02x" % (v, v, v)


BAR_WIDTH, BAR_BANDS = 12, 64


def _colour_bar(x, top, height):
    """The scale of the cells' greys, as the program's pictures draw it
    (src/common/svg.c): BAR_BANDS bands from weight 0 (black, at the bottom)
    to 1 (white, at the top), ticks at 0, 0.25, 0.5, 0.75 and 1, in a group
    of its own (class "colorbar")."""
    out = ['<g class="colorbar">']
    for k in range(BAR_BANDS):
        w = (k + 0.5) / BAR_BANDS
        y0 = top + height - (k + 1) * height / BAR_BANDS
        out.append('<rect x="%d" y="%.2f" width="%d" height="%.2f" fill="%s"/>'
                   % (x, y0, BAR_WIDTH, height / BAR_BANDS + 0.5, _grey(w)))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>'
               % (x, top, BAR_WIDTH, height))
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + height - tick * height
        out.append('<text x="%d" y="%.1f">%g</text>' % (x + BAR_WIDTH + GAP, y + FONT / 3, tick))
    out.append("</g>")
    return out


class Alignment:
    """An alignment matrix: ``weights[i, j]`` is the attention weight α_ij of
    target token i on source token j (Bahdanau et al. 2014, §3.1), a NumPy
    float32 array of shape [len(target_tokens) + 1, len(source_tokens) + 1]
    whose last row and column are </s>; every row sums to 1.

    source_tokens and target_tokens are the tokens exactly (joiner marks
    included); source_labels and target_labels are what pictures show (marks
    dropped, </s> appended). In a notebook, an Alignment shows itself as an
    SVG picture (_repr_svg_); plot() draws it with matplotlib."""

    def __init__(self, source_tokens, target_tokens, weights, logprob):
        self.source_tokens = source_tokens
        self.target_tokens = target_tokens
        self.weights = weights
        self.logprob = logprob

    @property
    def source_labels(self):
        return [label(t) for t in self.source_tokens] + ["</s>"]

    @property
    def target_labels(self):
        return [label(t) for t in self.target_tokens] + ["</s>"]

    def __repr__(self):
        return "Alignment(source_tokens=%r, target_tokens=%r, weights=<%dx%d>)" % (
            self.source_tokens,
            self.target_tokens,
            self.weights.shape[0],
            self.weights.shape[1],
        )

    def _repr_svg_(self):
        """The matrix as an SVG picture (no dependency): source labels along
        the top, target labels down the left, white for weight 1, each cell's
        weight in its tooltip; axis titles "source" and "target"; the colour
        bar of the greys on the right (0 black to 1 white)."""
        src, tgt = self.source_labels, self.target_labels
        rows, cols = self.weights.shape
        top = int(GAP + FONT + GAP + CHAR * max(len(s) for s in src))  # title, then rotated labels
        left = int(GAP + FONT + GAP + CHAR * max(len(t) for t in tgt))
        bar_x = left + cols * CELL + 2 * GAP  # the colour bar, right of the matrix
        width, height = bar_x + BAR_WIDTH + GAP + int(4 * CHAR) + GAP, top + rows * CELL + GAP
        out = [
            '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="sans-serif" font-size="%d">' % (width, height, width, height, FONT),
            '<text x="%d" y="%d" text-anchor="middle">source</text>' % (left + cols * CELL // 2, GAP + FONT),
            '<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle">target</text>'
            % (GAP + FONT, top + rows * CELL // 2),
        ]
        for j, s in enumerate(src):
            x, y = left + j * CELL + CELL // 2 + FONT // 3, top - GAP
            out.append('<text transform="translate(%d,%d) rotate(-90)">%s</text>' % (x, y, _xml(s)))
        for i, t in enumerate(tgt):
            out.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                       % (left - GAP, top + i * CELL + CELL // 2 + FONT // 3, _xml(t)))
            for j, s in enumerate(src):
                w = float(self.weights[i, j])
                out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s → %s: %.4f'
                           "</title></rect>" % (left + j * CELL, top + i * CELL, CELL, CELL, _grey(w),
                                                _xml(t), _xml(s), w))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>'
                   % (left, top, cols * CELL, rows * CELL))
        out.extend(_colour_bar(bar_x, top, rows * CELL))
        out.append("</svg>")
        return "\n".join(out)

    def plot(self, ax=None, cmap="gray", joiner="", colorbar=True):
        """A heatmap with matplotlib (imported here, so only plotting needs
        it): source tokens along the top, target tokens down the side, white
        for weight 1 as in the paper's figure 3, axis titles "source" and
        "target", and a colour bar of the weights (colorbar=False: none).
        Labels are the program's (joiner="": marks dropped at the ends of a
        token, source_labels and target_labels); another string replaces
        every mark with it, None keeps the tokens exactly (common fonts lack
        U+FFED). Returns the Axes."""
        import matplotlib.pyplot as plt

        def labels(tokens, shown):
            if joiner == "":
                return shown
            return [t if joiner is None else t.replace(JOINER, joiner) for t in tokens] + ["</s>"]

        rows, cols = self.weights.shape
        if ax is None:
            _, ax = plt.subplots(figsize=(1.5 + 0.5 * cols, 1 + 0.5 * rows))
        image = ax.imshow(self.weights, cmap=cmap, vmin=0.0, vmax=1.0)
        ax.set_xticks(range(cols))
        ax.set_xticklabels(labels(self.source_tokens, self.source_labels), rotation=90)
        ax.set_yticks(range(rows))
        ax.set_yticklabels(labels(self.target_tokens, self.target_labels))
        ax.xaxis.tick_top()
        ax.xaxis.set_label_position("top")
        ax.set_xlabel("source")
        ax.set_ylabel("target")
        if colorbar:
            ax.figure.colorbar(image, ax=ax, label="attention weight")
        return ax
