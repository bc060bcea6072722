"""The translation options librnnsearch 1.2 added, against the command line:
an ensemble's weights (`translate --weights`), int8 decoding (`--int8`)
and the lexical shortlist (`--shortlist FILE[,FIRST[,BEST]]`), and each bad
value refused with a message."""

import pytest

import rnnsearch

SOURCES = ["21 May 2001", "3/4/99", "", "JULY 4, 1976", "Saturday, 21 November 2026"]


def lines(text):
    return text.split("\n")[:-1]


def program(run, args):
    return lines(run(["translate"] + args + ["--quiet"], "\n".join(SOURCES) + "\n"))


def test_weights_are_the_program_s(model, model_dir, run):
    want = program(run, ["-m", model_dir, "-m", model_dir, "--weights", "3,1", "--beam", "3"])
    assert rnnsearch.Ensemble(model, model_dir, weights=[3, 1]).translate(SOURCES, beam=3) == want
    e = rnnsearch.Ensemble(model, model_dir)
    assert e.translate(SOURCES, beam=3, weights=(3.0, 1.0)) == want
    # Equal weights are the plain mean, bit for bit.
    plain = e.hypotheses(SOURCES, beam=3)
    equal = e.hypotheses(SOURCES, beam=3, weights=[0.5, 0.5])
    assert [h[0].logprob for h in equal] == [h[0].logprob for h in plain]
    assert model.translate(SOURCES, weights=[2]) == model.translate(SOURCES)


def test_bad_weights_are_refused(model, model_dir):
    e = rnnsearch.Ensemble(model, model_dir)
    with pytest.raises(ValueError, match="ensemble weight 2 is -1"):
        e.translate("3/4/99", weights=[1, -1])
    with pytest.raises(ValueError, match="all zero"):
        e.translate("3/4/99", weights=[0, 0])
    with pytest.raises(ValueError, match="ensemble weight 1 is nan"):
        e.translate("3/4/99", weights=[float("nan"), 1])
    with pytest.raises(rnnsearch.Error, match="weights: 1 weight for 2 models"):
        e.translate("3/4/99", weights=[1])
    with pytest.raises(ValueError, match="2 weights for 1 models"):
        rnnsearch.Ensemble(model, weights=[1, 1])
    with pytest.raises(ValueError, match="all zero"):
        rnnsearch.Ensemble(model, model_dir, weights=[0, 0])
    # A dict or set has a length but no order of models (a dict read as its keys).
    for bad in ("1,1", [1, "1"], 1, [True, 1], {0: 1, 1: 2}, {1, 2}):
        with pytest.raises(TypeError, match="weights"):
            e.translate("3/4/99", weights=bad)


def test_int8_is_the_program_s(model, model_dir, run):
    exact = model.hypotheses(SOURCES)
    assert model.translate(SOURCES, int8=True) == program(run, ["-m", model_dir, "--int8"])
    assert model.translate(SOURCES, int8=True, beam=3) == program(run, ["-m", model_dir, "--int8", "--beam", "3"])
    e = rnnsearch.Ensemble(model, model_dir)
    assert e.translate(SOURCES, int8=True) == program(run, ["-m", model_dir, "-m", model_dir, "--int8"])
    # The model's float weights stay: its other translations are exact.
    assert [h[0].logprob for h in model.hypotheses(SOURCES)] == [h[0].logprob for h in exact]
    with pytest.raises(TypeError, match="int8"):
        model.translate("3/4/99", int8="yes")


def test_shortlist_is_the_program_s(model, model_dir, run, tmp_path):
    table = tmp_path / "lex.tsv"
    corpus = tmp_path / "pairs.tsv"
    corpus.write_text("21 May 2001\t2001-05-21\n3/4/99\t1999-04-03\nJULY 4, 1976\t1976-07-04\n")
    run(["lexicon", "-m", model_dir, str(corpus), "-o", str(table)])
    exact = model.translate(SOURCES)
    # Every word listed (the first 1000 are more than the vocabulary): exact.
    assert model.translate(SOURCES, shortlist=(table, 1000)) == exact
    for spec, flag in ((str(table), str(table)), ((table, 10, 2), "%s,10,2" % table),
                       ((str(table), 0, 1), "%s,0,1" % table)):
        assert model.translate(SOURCES, shortlist=spec) == program(run, ["-m", model_dir, "--shortlist", flag])


def test_bad_shortlists_are_refused(model, tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("<unk>\t<unk>\t0.5\n<unk>\t<unk>\t7\n")  # 7 is no probability
    with pytest.raises(rnnsearch.Error, match="bad.tsv:2:"):
        model.translate("3/4/99", shortlist=bad)
    with pytest.raises(rnnsearch.Error, match="missing.tsv"):
        model.translate("3/4/99", shortlist=str(tmp_path / "missing.tsv"))
    with pytest.raises(ValueError, match="empty"):
        model.translate("3/4/99", shortlist="")
    # A NUL ends the name the library reads: "lex.tsv\0junk" would be lex.tsv.
    good = tmp_path / "lex.tsv"
    good.write_text("<unk>\t<unk>\t0.5\n")
    for spec in (str(good) + "\0junk", (str(good) + "\0junk", 10), bytes(good) + b"\0x"):
        with pytest.raises(ValueError, match="shortlist holds a NUL byte"):
            model.translate("3/4/99", shortlist=spec)
    with pytest.raises(ValueError, match="first: -1"):
        model.translate("3/4/99", shortlist=(bad, -1))
    with pytest.raises(ValueError, match="not 4 items"):
        model.translate("3/4/99", shortlist=(bad, 1, 2, 3))
    for spec in (1, (bad, "10"), (bad, 1.5), (bad, True)):
        with pytest.raises(TypeError, match="shortlist"):
            model.translate("3/4/99", shortlist=spec)
