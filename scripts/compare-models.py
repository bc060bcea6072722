#!/usr/bin/env python3
"""Two training runs reached the same model, as tests/train/test_mpi.c requires of
ranks against one process: the same per-step losses in their train.log.tsv
(train and dev loss within 2e-5: the log prints 6 decimals), and float32
tensors of their safetensors exports (`rnnsearch export`) at most 2e-3 apart,
1e-3 apart in relative L2 norm over all of them; other tensors (vocabularies)
byte for byte. Standard library only.

Usage: compare-models.py A/train.log.tsv B/train.log.tsv A.safetensors B.safetensors
Exit 0 when they agree, 1 (saying where) when not."""
import array
import json
import math
import struct
import sys

LOSS_TOL, PARAM_TOL, PARAM_REL_TOL = 2e-5, 2e-3, 1e-3


def read_log(path):
    with open(path) as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    return [(int(r[0]), float(r[2] or "nan"), float(r[3] or "nan")) for r in rows if r[0]]


def close(a, b):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= LOSS_TOL


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    body = blob[8 + n :]
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        lo, hi = t["data_offsets"]
        tensors[name] = (t["dtype"], body[lo:hi])
    return tensors


def main(log_a, log_b, st_a, st_b):
    a, b = read_log(log_a), read_log(log_b)
    if len(a) != len(b):
        return f"{log_b}: {len(b)} log lines against {len(a)}"
    for (sa, ta, da), (sb, tb, db) in zip(a, b):
        if sa != sb or not close(ta, tb) or not close(da, db):
            return f"step {sb}: train loss {tb} against {ta}, dev loss {db} against {da} (step {sa})"
    ta, tb = read_safetensors(st_a), read_safetensors(st_b)
    if sorted(ta) != sorted(tb):
        return "the two models have different tensors"
    worst = diff2 = norm2 = 0.0
    for name, (dtype, data) in ta.items():
        dtype_b, data_b = tb[name]
        if dtype != dtype_b or len(data) != len(data_b):
            return f"{name}: {dtype_b} of {len(data_b)} bytes against {dtype} of {len(data)}"
        if dtype != "F32":
            if data != data_b:
                return f"{name} differs"
            continue
        x, y = array.array("f"), array.array("f")
        x.frombytes(data)
        y.frombytes(data_b)
        if sys.byteorder != "little":
            x.byteswap()
            y.byteswap()
        for u, v in zip(x, y):
            d = u - v
            worst = max(worst, abs(d))
            diff2 += d * d
            norm2 += u * u
    rel = math.sqrt(diff2 / norm2) if norm2 > 0 else 0.0
    print(f"same losses at {len(a)} steps; parameters {worst:.2g} apart at most, {rel:.2g} in relative L2 norm")
    if worst > PARAM_TOL or rel > PARAM_REL_TOL:
        return f"parameters {worst:g} apart, {rel:g} relative (allowed {PARAM_TOL}, {PARAM_REL_TOL})"
    return None


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    problem = main(*sys.argv[1:])
    if problem:
        print(f"compare-models: {problem}", file=sys.stderr)
        sys.exit(1)
