#!/usr/bin/env python3
"""Writes tests/fixtures/paired/: three systems' outputs on a small test set,
its references, and the BLEU, bootstrap mean and 95% CI and p-values of
sacreBLEU's paired bootstrap (--paired-bs) and approximate randomization
(--paired-ar) tests, with sacreBLEU's defaults (1000 resamples or 10000
trials, seed 12345), for tests/eval/test_significance.c.

The numbers come from a transcription of sacrebleu/significance.py
(_paired_bs_test, _paired_ar_test, _bootstrap_resample, estimate_ci,
_compute_p_value) and of BLEU.compute_bleu with numpy, the same numpy calls
in the same order (default_rng(seed).choice, .integers(2, dtype=bool),
float32 statistics), on sentence statistics counted here with
tokenize 'none' (whitespace). Needs numpy only.

    python3 tests/support/paired-fixture.py tests/fixtures/paired
"""
import math
import os
import random
import sys
from collections import Counter

import numpy as np

ORDER = 4
SEED = 12345


def ngrams(words):
    c = Counter()
    for n in range(1, ORDER + 1):
        for i in range(len(words) - n + 1):
            c[tuple(words[i:i + n])] += 1
    return c


def sentence_stats(hyp, ref):
    """sacreBLEU's BLEU._extract_corpus_statistics row, one reference:
    [hyp_len, ref_len, correct_1..4, total_1..4]."""
    h, r = hyp.split(), ref.split()
    hc, rc = ngrams(h), ngrams(r)
    correct = [0] * ORDER
    total = [0] * ORDER
    for g, k in hc.items():
        total[len(g) - 1] += k
        correct[len(g) - 1] += min(k, rc[g])
    return [len(h), len(r)] + correct + total


def compute_bleu(correct, total, sys_len, ref_len):
    """BLEU.compute_bleu, smooth_method 'exp', no effective order."""
    precisions = [0.0] * ORDER
    smooth_mteval = 1.
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if not any(correct):
        return 0.0
    for n in range(1, len(precisions) + 1):
        if total[n - 1] == 0:
            break
        if correct[n - 1] == 0:
            smooth_mteval *= 2
            precisions[n - 1] = 100. / (smooth_mteval * total[n - 1])
        else:
            precisions[n - 1] = 100. * correct[n - 1] / total[n - 1]
    score = bp * math.exp(
        sum([math.log(p) if p > 0 else -9999999999 for p in precisions]) / ORDER)
    return score


def score_from_stats(stats):
    return compute_bleu(stats[2:2 + ORDER], stats[2 + ORDER:], int(stats[0]), int(stats[1]))


def corpus_score(stats):
    return score_from_stats([sum(col) for col in zip(*stats)])


def estimate_ci(scores):
    scores = np.sort(scores)
    n = len(scores)
    lower_idx = n // 40
    upper_idx = n - lower_idx - 1
    lower, upper = scores[lower_idx], scores[upper_idx]
    ci = 0.5 * (upper - lower)
    return (scores.mean(), ci)


def compute_p_value(stats, real_difference):
    c = np.sum(stats > real_difference).item()
    return (c + 1) / (len(stats) + 1)


def paired_bs(bl_stats, sys_stats, n_samples=1000, seed=SEED):
    rng = np.random.default_rng(seed)
    idxs = rng.choice(len(sys_stats), size=(n_samples, len(sys_stats)), replace=True)
    sys_score = corpus_score(sys_stats)
    bl_score = corpus_score(bl_stats)
    sys_stats = np.array(sys_stats, dtype='float32')
    bl_stats = np.array(bl_stats, dtype='float32')
    diff = abs(bl_score - sys_score)
    scores_bl = np.array([score_from_stats(_s.sum(0)) for _s in bl_stats[idxs]])
    scores_sys = np.array([score_from_stats(_s.sum(0)) for _s in sys_stats[idxs]])
    sys_mean, sys_ci = estimate_ci(scores_sys)
    sample_diffs = np.abs(scores_sys - scores_bl)
    stats = sample_diffs - sample_diffs.mean()
    return sys_score, sys_mean, sys_ci, compute_p_value(stats, diff)


def baseline_bs(bl_stats, n_samples=1000, seed=SEED):
    """_bootstrap_resample and estimate_ci for the baseline."""
    rng = np.random.default_rng(seed)
    idxs = rng.choice(len(bl_stats), size=(n_samples, len(bl_stats)), replace=True)
    stats_np = np.array(bl_stats, dtype='float32')
    scores = [score_from_stats(_s.sum(0)) for _s in stats_np[idxs]]
    return (corpus_score(bl_stats),) + estimate_ci(np.array(scores))


def paired_ar(bl_stats, sys_stats, n_samples=10000, seed=SEED):
    rng = np.random.default_rng(seed)
    pos_sel = rng.integers(2, size=(n_samples, len(sys_stats)), dtype=bool)
    neg_sel = ~pos_sel
    sys_score = corpus_score(sys_stats)
    diff = abs(corpus_score(bl_stats) - sys_score)
    bl = np.array(bl_stats)
    sy = np.array(sys_stats)
    shuf_a = pos_sel @ bl + neg_sel @ sy
    shuf_b = neg_sel @ bl + pos_sel @ sy
    scores_a = np.array([score_from_stats(list(x)) for x in shuf_a])
    scores_b = np.array([score_from_stats(list(x)) for x in shuf_b])
    return sys_score, compute_p_value(np.abs(scores_a - scores_b), diff)


def corpus(rnd, n):
    """A reference and three systems: the baseline, one nearer the reference
    and one that differs from the baseline by little."""
    words = "the a house cat dog is small big on mat it was raining again we saw".split()
    refs, systems = [], [[], [], []]
    for _ in range(n):
        ref = [rnd.choice(words) for _ in range(rnd.randint(3, 14))]
        refs.append(" ".join(ref))

        def noisy(p):
            out = [w if rnd.random() > p else rnd.choice(words) for w in ref]
            if rnd.random() < p:
                out = out[:-1]
            return " ".join(out)
        systems[0].append(noisy(0.45))
        systems[1].append(noisy(0.3))
        systems[2].append(noisy(0.43))
    return refs, systems


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/paired"
    os.makedirs(out, exist_ok=True)
    refs, systems = corpus(random.Random(44), 60)
    names = ["ref.txt", "base.txt", "better.txt", "close.txt"]
    for name, lines in zip(names, [refs] + systems):
        with open(os.path.join(out, name), "w") as f:
            f.write("".join(line + "\n" for line in lines))
    stats = [[sentence_stats(h, r) for h, r in zip(hyps, refs)] for hyps in systems]
    with open(os.path.join(out, "expected.txt"), "w") as f:
        f.write("# test system score mean ci p (repr of float64; nan: none)\n")
        score, mean, ci = baseline_bs(stats[0])
        f.write(f"bs base.txt {score!r} {float(mean)!r} {float(ci)!r} nan\n")
        for name, st in zip(names[2:], stats[1:]):
            score, mean, ci, p = paired_bs(stats[0], st)
            f.write(f"bs {name} {score!r} {float(mean)!r} {float(ci)!r} {p!r}\n")
        f.write(f"ar base.txt {corpus_score(stats[0])!r} nan nan nan\n")
        for name, st in zip(names[2:], stats[1:]):
            score, p = paired_ar(stats[0], st)
            f.write(f"ar {name} {score!r} nan nan {p!r}\n")


if __name__ == "__main__":
    main()
