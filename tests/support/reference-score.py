#!/usr/bin/env python3
"""A second, independent implementation of docs/model.md in plain Python
(float64, standard library only), for checking an export:

    tests/support/reference-score.py MODEL.safetensors SRC_IDS TGT_IDS

SRC_IDS and TGT_IDS hold one sentence per line as token ids with </s> (3)
appended, as `rnnsearch tokenize -m MODEL --ids [--side target]` prints them.
Prints log p(target | source) per line, to compare with `rnnsearch score`.
It reads only the tensors and their interchange names, nothing of rnnsearch.

It also writes the test suite's fixtures (random models from a fixed seed, so
that running it again reproduces the committed files byte for byte):

    tests/support/reference-score.py --gradient-fixture tests/fixtures/gradient
        tiny models (Vs = Vt = 9, m = 3, n = 4, a = 5, l = 3; additive and
        scaled-dot attention, and none: the fixed context of model.md's
        "Without attention"), three pairs of ids, the summed -log p and its
        gradient for every tensor by central differences in float64
    tests/support/reference-score.py --conformance-fixture tests/fixtures/conformance
        a small random model, 24 pairs of words and log p of each
"""
import json
import math
import os
import random
import struct
import sys
from operator import mul


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__")
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        assert info["dtype"] == "F32", name
        start, end = info["data_offsets"]
        flat = struct.unpack("<%df" % ((end - start) // 4), data[base + start:base + end])
        shape = info["shape"]
        if len(shape) == 1:
            tensors[name] = list(flat)
        else:
            rows, cols = shape
            tensors[name] = [list(flat[r * cols:(r + 1) * cols]) for r in range(rows)]
    return meta, tensors


def attention_kind(meta):
    """The score function a model's metadata names (model.md's is additive)."""
    model = meta.get("model", "rnnsearch-default")
    kind = "additive" if model == "rnnsearch-default" else model[len("rnnsearch-"):]
    assert kind in ("additive", "general", "dot", "scaled-dot", "none"), model
    return kind


def matvec(W, x):
    return [sum(map(mul, row, x)) for row in W]


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def gru(W, U, b, x, h, n):
    # z, r, g rows in that order; the reset gate multiplies h before U_g.
    wx = matvec(W, x)
    uz = matvec(U[:n], h)
    ur = matvec(U[n:2 * n], h)
    z = [sigmoid(wx[k] + uz[k] + b[k]) for k in range(n)]
    r = [sigmoid(wx[n + k] + ur[k] + b[n + k]) for k in range(n)]
    ug = matvec(U[2 * n:], [r[k] * h[k] for k in range(n)])
    g = [math.tanh(wx[2 * n + k] + ug[k] + b[2 * n + k]) for k in range(n)]
    return [(1 - z[k]) * h[k] + z[k] * g[k] for k in range(n)]


def logprob(T, n, src, tgt, kind="additive", margins=None):
    """log p(tgt | src), both with </s> appended. With margins (a list), the
    gap |t~[2k] - t~[2k+1]| of every maxout pair is appended to it."""
    emb_s, emb_t = T["src_emb"], T["tgt_emb"]
    S = len(src)
    fwd, h = [], [0.0] * n
    for j in range(S):
        h = gru(T["enc_fwd.W"], T["enc_fwd.U"], T["enc_fwd.b"], emb_s[src[j]], h, n)
        fwd.append(h)
    bwd, h = [None] * S, [0.0] * n
    for j in reversed(range(S)):
        h = gru(T["enc_bwd.W"], T["enc_bwd.U"], T["enc_bwd.b"], emb_s[src[j]], h, n)
        bwd[j] = h
    ann = [fwd[j] + bwd[j] for j in range(S)]
    if kind == "none":
        keys = None  # one context for every step: c = [fwd_h_S ; bwd_h_1]
    elif kind == "additive":
        keys = [[u + b for u, b in zip(matvec(T["att.U"], ann[j]), T["att.b"])] for j in range(S)]
    else:
        keys = [matvec(T["att.K"], ann[j]) for j in range(S)]
    scale = 1.0 / math.sqrt(n) if kind == "scaled-dot" else 1.0
    s = [math.tanh(v + b) for v, b in zip(matvec(T["init.W"], bwd[0]), T["init.b"])]
    total, prev = 0.0, 2
    for y in tgt:
        if kind == "none":
            c = fwd[S - 1] + bwd[0]
        else:
            if kind == "additive":
                q = matvec(T["att.W"], s)
                e = [sum(v * math.tanh(qk + kk) for v, qk, kk in zip(T["att.v"], q, keys[j]))
                     for j in range(S)]
            else:
                e = [scale * sum(map(mul, s, keys[j])) for j in range(S)]
            m = max(e)
            w = [math.exp(x - m) for x in e]
            z = sum(w)
            c = [sum(w[j] / z * ann[j][k] for j in range(S)) for k in range(2 * n)]
        e_prev = emb_t[prev]
        s = gru(T["dec.W"], T["dec.U"], T["dec.b"], e_prev + c, s, n)
        t = [a + b + cc + d for a, b, cc, d in zip(matvec(T["out.U"], s), matvec(T["out.V"], e_prev),
                                                   matvec(T["out.C"], c), T["out.b"])]
        if margins is not None:
            margins.extend(abs(t[2 * k] - t[2 * k + 1]) for k in range(len(t) // 2))
        t = [max(t[2 * k], t[2 * k + 1]) for k in range(len(t) // 2)]
        logits = [a + b for a, b in zip(matvec(T["out.W"], t), T["out.bw"])]
        m = max(logits)
        total += logits[y] - m - math.log(sum(math.exp(x - m) for x in logits))
        prev = y
    return total


# ---- fixtures ----

RESERVED = ["<pad>", "<unk>", "<s>", "</s>"]


def tensor_shapes(Vs, Vt, m, n, a, l, kind):
    """(name, shape) in the order of the parameter table (src/model/params.h)."""
    shapes = [("src_emb", [Vs, m]), ("tgt_emb", [Vt, m])]
    for enc in ("enc_fwd", "enc_bwd"):
        shapes += [(enc + ".W", [3 * n, m]), (enc + ".U", [3 * n, n]), (enc + ".b", [3 * n])]
    shapes += [("init.W", [n, n]), ("init.b", [n])]
    if kind == "additive":
        shapes += [("att.W", [a, n]), ("att.U", [a, 2 * n]), ("att.b", [a]), ("att.v", [a])]
    elif kind != "none":
        shapes += [("att.K", [n, 2 * n])]
    shapes += [("dec.W", [3 * n, m + 2 * n]), ("dec.U", [3 * n, n]), ("dec.b", [3 * n]),
               ("out.U", [2 * l, n]), ("out.V", [2 * l, m]), ("out.C", [2 * l, 2 * n]),
               ("out.b", [2 * l]), ("out.W", [Vt, l]), ("out.bw", [Vt])]
    return shapes


def to_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def random_tensors(shapes, rng, scale):
    """Uniform in [-scale, scale], rounded to float32 so that the file holds
    exactly the weights computed with."""
    T = {}
    for name, shape in shapes:
        if len(shape) == 1:
            T[name] = [to_f32(rng.uniform(-scale, scale)) for _ in range(shape[0])]
        else:
            T[name] = [[to_f32(rng.uniform(-scale, scale)) for _ in range(shape[1])]
                       for _ in range(shape[0])]
    return T


def flat(values):
    return [x for row in values for x in row] if values and isinstance(values[0], list) else values


def write_safetensors(path, T, shapes, meta):
    """The export format of docs/model.md: header length, JSON header with
    __metadata__, little-endian F32 data in table order."""
    header, data = {"__metadata__": meta}, b""
    for name, shape in shapes:
        values = flat(T[name])
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + 4 * len(values)]}
        data += struct.pack("<%df" % len(values), *values)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def model_meta(src_vocab, tgt_vocab, m, n, a, l, kind):
    return {"src_vocab": json.dumps(src_vocab), "tgt_vocab": json.dumps(tgt_vocab),
            "n": str(n), "m": str(m), "a": str(a), "l": str(l),
            "model": "rnnsearch-default" if kind == "additive" else "rnnsearch-" + kind,
            "normalization": "none", "tokenization": "whitespace"}


# Three pairs of ids without </s> (<unk> = 1 included), lengths 4/2, 1/4, 3/1.
GRADIENT_PAIRS = [([4, 5, 6, 7], [4, 5]), ([8], [6, 7, 1, 5]), ([5, 1, 4], [7])]


def summed_nll(T, n, kind, pairs, margins=None):
    return -sum(logprob(T, n, src + [3], tgt + [3], kind, margins) for src, tgt in pairs)


def gradient_fixture(out_dir):
    """Summed -log p of GRADIENT_PAIRS and its gradient by central differences
    in float64 (h = 1e-6: truncation ~1e-12, rounding ~1e-9, far below what a
    float32 implementation can reach), for additive and scaled-dot attention
    and for none (no attention tensors, one fixed context)."""
    Vs = Vt = 9
    m, n, a, l, h = 3, 4, 5, 3, 1e-6
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "pairs.txt"), "w") as f:
        for src, tgt in GRADIENT_PAIRS:
            f.write("%s\t%s\n" % (" ".join(map(str, src)), " ".join(map(str, tgt))))
    vocab = RESERVED + ["w%d" % i for i in range(4, Vs)]
    for seed, kind in ((8, "additive"), (9, "scaled-dot"), (10, "none")):
        shapes = tensor_shapes(Vs, Vt, m, n, a, l, kind)
        T = random_tensors(shapes, random.Random(seed), 1.0)
        margins = []
        loss = summed_nll(T, n, kind, GRADIENT_PAIRS, margins)
        # A step of h must not flip a maxout pair (the function has a kink there).
        if min(margins) < 1e-3:
            sys.exit("seed %d: a maxout pair is within %.2g of a tie; choose another seed"
                     % (seed, min(margins)))
        write_safetensors(os.path.join(out_dir, kind + ".safetensors"), T, shapes,
                          model_meta(vocab, vocab, m, n, a, l, kind))
        lines = ["loss %.17g" % loss]
        for name, shape in shapes:
            values = T[name]
            rows = values if isinstance(values[0], list) else [values]
            grad = []
            for row in rows:
                for k in range(len(row)):
                    saved = row[k]
                    row[k] = saved + h
                    plus = summed_nll(T, n, kind, GRADIENT_PAIRS)
                    row[k] = saved - h
                    minus = summed_nll(T, n, kind, GRADIENT_PAIRS)
                    row[k] = saved
                    grad.append((plus - minus) / (2 * h))
            lines.append("tensor %s %d" % (name, len(grad)))
            lines.extend("%.17g" % g for g in grad)
        with open(os.path.join(out_dir, kind + ".grad.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("%s: loss %.12f, %d tensors" % (kind, loss, len(shapes)))


def conformance_fixture(out_dir):
    """A random default model, pairs of words (some outside the vocabularies,
    so <unk> on either side) and log p(target | source) of each."""
    rng = random.Random(2026)
    m, n, a, l = 5, 6, 4, 3
    src_words = ["s%d" % i for i in range(4, 16)]
    tgt_words = ["t%d" % i for i in range(4, 14)]
    src_vocab, tgt_vocab = RESERVED + src_words, RESERVED + tgt_words
    shapes = tensor_shapes(len(src_vocab), len(tgt_vocab), m, n, a, l, "additive")
    T = random_tensors(shapes, rng, 0.8)
    os.makedirs(out_dir, exist_ok=True)
    write_safetensors(os.path.join(out_dir, "random.safetensors"), T, shapes,
                      model_meta(src_vocab, tgt_vocab, m, n, a, l, "additive"))
    # Out-of-vocabulary words: a source word on the target side and "zz".
    src_pool, tgt_pool = src_words + ["zz"], tgt_words + ["zz", "s4"]
    src_ids, tgt_ids = dict(zip(src_vocab, range(len(src_vocab)))), dict(zip(tgt_vocab, range(len(tgt_vocab))))
    pairs, expected = [], []
    for i in range(24):
        src = [rng.choice(src_pool) for _ in range(rng.randint(1, 11))]
        tgt = [rng.choice(tgt_pool) for _ in range(rng.randint(1, 11))]
        pairs.append("%s\t%s" % (" ".join(src), " ".join(tgt)))
        x = [src_ids.get(w, 1) for w in src] + [3]
        y = [tgt_ids.get(w, 1) for w in tgt] + [3]
        expected.append("%.12f" % logprob(T, n, x, y))
    with open(os.path.join(out_dir, "pairs.tsv"), "w") as f:
        f.write("\n".join(pairs) + "\n")
    with open(os.path.join(out_dir, "expected_logprob.txt"), "w") as f:
        f.write("\n".join(expected) + "\n")
    print("conformance: %d pairs" % len(pairs))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--gradient-fixture":
        return gradient_fixture(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--conformance-fixture":
        return conformance_fixture(sys.argv[2])
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip())
    meta, T = load(sys.argv[1])
    n, kind = int(meta["n"]), attention_kind(meta)
    with open(sys.argv[2]) as fs, open(sys.argv[3]) as ft:
        for src_line, tgt_line in zip(fs, ft):
            src = [int(x) for x in src_line.split()]
            tgt = [int(x) for x in tgt_line.split()]
            print("%.6f" % logprob(T, n, src, tgt, kind))


if __name__ == "__main__":
    main()
