"""The Python package against the command line: every call gives what
`rnnsearch translate`, `align --format json`, `score` and `tokenize -m`
print for the same model and input."""

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import rnnsearch
from conftest import REPO, close_to_rounding, need

SOURCES = [
    "21 May 2001",
    "3/4/99",
    "",
    "Saturday, 21 November 2026",
    "the 3rd of March 1999",
    "JULY 4, 1976",
    "zzz ünïcödé 日本 2001",
    "  11/21/26  ",
]


def test_translate_greedy_equals_the_program(model, model_dir, run):
    want = run(["translate", "-m", model_dir, "--quiet"], "\n".join(SOURCES) + "\n").split("\n")[:-1]
    assert model.translate(SOURCES) == want
    assert model.translate(SOURCES[0]) == want[0]


@pytest.mark.parametrize("beam,n_best,alpha", [(4, 3, 0.6), (3, 1, 1.0), (2, 2, 0.0)])
def test_translate_beam_n_best_equals_the_program(model, model_dir, run, beam, n_best, alpha):
    out = run(
        ["translate", "-m", model_dir, "--quiet", "--beam", str(beam), "--n-best", str(n_best),
         "--length-penalty", str(alpha)],
        "\n".join(SOURCES) + "\n",
    )
    want = [[] for _ in SOURCES]
    for line in out.splitlines():
        i, text, f0, score = line.split(" ||| ")
        want[int(i)].append((text, float(f0.split("= ")[1]), float(score)))
    got = model.hypotheses(SOURCES, beam=beam, n_best=n_best, length_penalty=alpha)
    for w, g in zip(want, got):
        assert [h.text for h in g] == [t for t, _, _ in w]
        assert [round(h.logprob, 6) for h in g] == pytest.approx([f for _, f, _ in w], abs=1e-6)
        assert [round(h.score, 6) for h in g] == pytest.approx([s for _, _, s in w], abs=1e-6)
    texts = model.translate(SOURCES, beam=beam, n_best=n_best, length_penalty=alpha)
    assert texts == ([[t for t, _, _ in w] for w in want] if n_best > 1 else [w[0][0] for w in want])


def _json_records(text):
    return [json.loads(line) for line in text.splitlines()]


def _same_alignment(a, record):
    assert a.source_tokens + ["</s>"] == record["source"]
    assert a.target_tokens + ["</s>"] == record["target"]
    assert a.weights.dtype == np.float32
    assert a.weights.shape == (len(a.target_tokens) + 1, len(a.source_tokens) + 1)
    # %.9g, as the program writes them, gives every float32 back exactly.
    np.testing.assert_array_equal(a.weights, np.array(record["alignment"], dtype=np.float32))
    np.testing.assert_allclose(a.weights.sum(axis=1), 1.0, atol=1e-5)


# Sentence by sentence: a batch of several sums in another order (BLAS), and
# the weights are compared bit for bit.
@pytest.mark.parametrize("beam", [1, 3])
def test_align_equals_align_json(model, model_dir, run, beam):
    for s in [s for s in SOURCES if s.strip()]:
        (record,) = _json_records(run(["align", "-m", model_dir, "--format", "json", "--beam", str(beam)], s + "\n"))
        _same_alignment(model.align(s, beam=beam), record)


def test_forced_align_equals_align_pairs_json(model, model_dir, run):
    pairs = [("21 May 2001", "2001-05-21"), ("3/4/99", "1999-04-03"), ("JULY 4, 1976", "nonsense words")]
    for s, t in pairs:
        (record,) = _json_records(run(["align", "-m", model_dir, "--format", "json", "--pairs"], "%s\t%s\n" % (s, t)))
        _same_alignment(model.align(s, target=t), record)


SCORED_PAIRS = [("21 May 2001", "2001-05-21"), ("3/4/99", "1999-04-03"), ("JULY 4, 1976", "1976-07-04")]


# The library scores one pair at a time, as `score --batch-size 1` does: one
# road (the same model preparation and batches), so the printed digits agree
# exactly on any OpenBLAS kernel.
def test_score_equals_the_program_pair_by_pair(model, model_dir, run):
    pairs = "".join("%s\t%s\n" % p for p in SCORED_PAIRS)
    want = run(["score", "-m", model_dir, "--batch-size", "1"], pairs).split()
    got = [model.score(s, t) for s, t in SCORED_PAIRS]
    assert ["%.6f" % g for g in got] == want
    assert model.align(*SCORED_PAIRS[0]).logprob == got[0]


# In a batch of 64 the products' sums run in another order (a kernel's
# blocking depends on the batch's shape), so the two agree to float32
# rounding (conftest.close_to_rounding).
def test_score_in_a_batch_agrees_to_float32_rounding(model, model_dir, run):
    pairs = "".join("%s\t%s\n" % p for p in SCORED_PAIRS)
    want = [float(x) for x in run(["score", "-m", model_dir], pairs).split()]
    got = [model.score(s, t) for s, t in SCORED_PAIRS]
    assert close_to_rounding(got, want)


def test_tokenize_equals_the_program(model, model_dir, run):
    for side in ("source", "target"):
        want = run(["tokenize", "-m", model_dir, "--side", side], "\n".join(SOURCES) + "\n").split("\n")[:-1]
        assert [" ".join(model.tokenize(s, side=side)) for s in SOURCES] == want
    tokens = model.tokenize("2001-05-21", side="target")
    want = run(["tokenize", "-m", model_dir, "--side", "target", "--detokenize"], " ".join(tokens) + "\n")
    assert model.detokenize(tokens) == want.rstrip("\n")


def test_two_threads_share_one_model(model):
    sources = [s for s in SOURCES if s] * 6
    want = model.translate(sources, beam=2)
    got, errors = {}, []

    def work(k):
        try:
            got[k] = [model.translate(sources, beam=2) for _ in range(3)]
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert got == {0: [want] * 3, 1: [want] * 3}


def test_a_model_by_name(model_dir, monkeypatch):
    monkeypatch.setenv("RNNSEARCH_MODELS", os.path.dirname(model_dir))
    m = rnnsearch.Model(os.path.basename(model_dir))
    assert m.checkpoint == os.path.join(model_dir, "best.ckpt")
    assert m.translate(["21 May 2001"]) == rnnsearch.Model(model_dir).translate(["21 May 2001"])


def test_errors_are_exceptions_with_the_library_message(model, tmp_path):
    with pytest.raises(rnnsearch.Error, match="no-such-model"):
        rnnsearch.Model(str(tmp_path / "no-such-model"))
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(rnnsearch.Error, match="bad.ckpt"):
        rnnsearch.Model(str(bad))
    with pytest.raises(ValueError, match="n_best: 3 is more than the beam"):
        model.translate(["x"], beam=2, n_best=3)
    with pytest.raises(rnnsearch.Error, match="empty"):
        model.score("", "2001-05-21")
    with pytest.raises(ValueError):
        model.align("   ")
    with pytest.raises(TypeError):
        model.translate([b"bytes"])
    with pytest.raises(ValueError):
        model.tokenize("x", side="middle")


def test_a_closed_model_says_so(model_dir):
    with rnnsearch.Model(model_dir) as m:
        assert m.translate("3/4/99") == "1999-03-04"
    m.close()  # twice is harmless
    with pytest.raises(ValueError, match="closed"):
        m.translate(["3/4/99"])


def test_version_is_the_program_s(run):
    assert run(["--version"]) == "rnnsearch %s\n" % rnnsearch.version()
    with open(os.path.join(REPO, "python", "_backend", "rnnsearch_backend.py")) as f:
        assert 'VERSION = "%s"' % rnnsearch.version() in f.read()


def test_plot_draws_the_matrix(model):
    need("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    a = model.align("21 May 2001")
    assert "\uffed-\uffed" in a.target_tokens
    ax = a.plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == a.source_tokens + ["</s>"]
    # Labels as `rnnsearch align -f svg` draws them: the joiner marks dropped.
    assert [t.get_text() for t in ax.get_yticklabels()] == a.target_labels
    assert "-" in a.target_labels and "\uffed-\uffed" not in a.target_labels
    np.testing.assert_array_equal(ax.images[0].get_array(), a.weights)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("source", "target")
    assert len(ax.figure.axes) == 2  # the matrix and its colour bar
    ax = a.plot(joiner=None, colorbar=False)
    assert [t.get_text() for t in ax.get_yticklabels()] == a.target_tokens + ["</s>"]
    assert len(ax.figure.axes) == 1
    ax = a.plot(joiner="\u00b7")
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        t.replace("\uffed", "\u00b7") for t in a.target_tokens
    ] + ["</s>"]


def test_from_another_directory(model_dir, tmp_path):
    code = "import rnnsearch; print(rnnsearch.Model(%r).translate(['21 May 2001'])[0])" % model_dir
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env=env, capture_output=True, check=False)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode() == rnnsearch.Model(model_dir).translate(["21 May 2001"])[0] + "\n"


def test_a_model_without_attention_has_no_alignment(program, tmp_path):
    """--attention none: it translates and scores; an alignment of it is
    refused with the library's words, not drawn from meaningless weights."""
    out = str(tmp_path / "none")
    subprocess.run([program, "train", "--train", os.path.join(REPO, "corpora", "dates", "train.tsv"),
                    "--out", out, "--attention", "none", "--max-steps", "20", "--epochs", "1",
                    "--threads", "1", "--hidden", "16", "--emb", "8", "--maxout", "8", "--quiet"],
                   check=True)
    m = rnnsearch.Model(out)
    assert isinstance(m.translate("21 May 2001"), str)
    assert m.score("21 May 2001", "2001-05-21") < 0
    for call in (lambda: m.align("21 May 2001", "2001-05-21"), lambda: m.align("21 May 2001"),
                 lambda: m.hypotheses(["21 May 2001"], alignment=True)):
        with pytest.raises(rnnsearch.Error, match="--attention none"):
            call()
