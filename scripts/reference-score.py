#!/usr/bin/env python3
"""A second, independent implementation of docs/model.md in plain Python
(float64, standard library only), for checking an export:

    scripts/reference-score.py MODEL.safetensors SRC_IDS TGT_IDS

SRC_IDS and TGT_IDS hold one sentence per line as token ids with </s> (3)
appended, as `rnnsearch tokenize -m MODEL --ids [--side target]` prints them.
Prints log p(target | source) per line, to compare with `rnnsearch score`.
It reads only the tensors and their interchange names, nothing of rnnsearch.
"""
import json
import math
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


def logprob(T, n, src, tgt):
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
    keys = [[u + b for u, b in zip(matvec(T["att.U"], ann[j]), T["att.b"])] for j in range(S)]
    s = [math.tanh(v + b) for v, b in zip(matvec(T["init.W"], bwd[0]), T["init.b"])]
    total, prev = 0.0, 2
    for y in tgt:
        q = matvec(T["att.W"], s)
        e = [sum(v * math.tanh(qk + kk) for v, qk, kk in zip(T["att.v"], q, keys[j])) for j in range(S)]
        m = max(e)
        w = [math.exp(x - m) for x in e]
        z = sum(w)
        c = [sum(w[j] / z * ann[j][k] for j in range(S)) for k in range(2 * n)]
        e_prev = emb_t[prev]
        s = gru(T["dec.W"], T["dec.U"], T["dec.b"], e_prev + c, s, n)
        t = [a + b + cc + d for a, b, cc, d in zip(matvec(T["out.U"], s), matvec(T["out.V"], e_prev),
                                                   matvec(T["out.C"], c), T["out.b"])]
        t = [max(t[2 * k], t[2 * k + 1]) for k in range(len(t) // 2)]
        logits = [a + b for a, b in zip(matvec(T["out.W"], t), T["out.bw"])]
        m = max(logits)
        total += logits[y] - m - math.log(sum(math.exp(x - m) for x in logits))
        prev = y
    return total


def main():
    meta, T = load(sys.argv[1])
    n = int(meta["n"])
    with open(sys.argv[2]) as fs, open(sys.argv[3]) as ft:
        for src_line, tgt_line in zip(fs, ft):
            src = [int(x) for x in src_line.split()]
            tgt = [int(x) for x in tgt_line.split()]
            print("%.6f" % logprob(T, n, src, tgt))


if __name__ == "__main__":
    main()
