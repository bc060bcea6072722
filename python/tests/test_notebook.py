"""The package as a notebook user meets it, against the command line: score
of many pairs in batches (`rnnsearch score`), ensembles (`-m A -m B`),
remove_bpe and replace_unk (`translate --remove-bpe`, `--replace-unk`),
alignments that draw themselves (SVG) with the labels `align` draws; and
the package without NumPy, its build backend, and where it finds its
library."""

import base64
import hashlib
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile

import pytest

import rnnsearch
from conftest import REPO, close_to_rounding
from rnnsearch import _alignment, _loader

PAIRS = [("21 May 2001", "2001-05-21"), ("3/4/99", "1999-04-03"), ("JULY 4, 1976", "1976-07-04"),
         ("the 3rd of March 1999", "1999-03-03"), ("zzz 2001", "2001")]
SOURCES = ["21 May 2001", "3/4/99", "", "zzz ünïcödé 日本 2001", "Saturday, 21 November 2026"]


def lines(text):
    return text.split("\n")[:-1]


# A list of pairs goes through rnnsearch_score: the program's pipeline and
# batches (64 pairs, by length), so the printed digits are the program's.
def test_score_of_pairs_is_the_program_s(model, model_dir, run):
    tsv = "".join("%s\t%s\n" % p for p in PAIRS)
    want = run(["score", "-m", model_dir], tsv).split()
    got = model.score(PAIRS)
    assert isinstance(got, list) and ["%.6f" % g for g in got] == want
    assert model.score([s for s, _ in PAIRS], [t for _, t in PAIRS]) == got
    assert model.score(iter(PAIRS)) == got
    assert model.score([list(p) for p in PAIRS]) == got
    # One pair is force-decoded alone (a batch of one): float32 rounding apart.
    assert close_to_rounding(model.score(PAIRS[0][0], PAIRS[0][1]), got[0])
    assert model.score([]) == []
    # 250 pairs: other batches, so other sums of the same terms.
    assert close_to_rounding(model.score(PAIRS * 50), got * 50)


def test_score_refuses_what_is_not_pairs(model):
    for bad in (["21 May 2001"], [("a", "b", "c")], [3], ["ab"]):
        with pytest.raises(TypeError, match=r"pairs\[0\] must be a \(source, target\) pair"):
            model.score(bad)
    with pytest.raises(TypeError):
        model.score([("a", None)])
    with pytest.raises(TypeError):
        model.score(["a"], "b")
    with pytest.raises(ValueError, match="2 sources and 1 targets"):
        model.score(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="NUL"):
        model.score([("a\0b", "c")])
    with pytest.raises(rnnsearch.Error, match="pair 2: the source is empty"):
        model.score([("3/4/99", "1999"), ("  ", "1999")])  # as score(source, target) says
    with pytest.raises(rnnsearch.Error, match="pair 2: .*1048576"):
        model.score([("a", "b"), ("x" * (2**20 + 1), "y")])


def test_an_ensemble_is_the_program_s(model, model_dir, run):
    e = rnnsearch.Ensemble(model, model_dir)
    want = lines(run(["translate", "-m", model_dir, "-m", model_dir, "--beam", "3", "--quiet"],
                     "\n".join(SOURCES) + "\n"))
    assert e.translate(SOURCES, beam=3) == want
    tsv = "".join("%s\t%s\n" % p for p in PAIRS)
    assert ["%.6f" % g for g in e.score(PAIRS)] == run(["score", "-m", model_dir, "-m", model_dir], tsv).split()
    assert isinstance(e.score(*PAIRS[0]), float)
    a = e.align("21 May 2001")
    assert a.weights.shape == (len(a.target_tokens) + 1, len(a.source_tokens) + 1)
    assert e.tokenize("21 May 2001") == model.tokenize("21 May 2001")
    with pytest.raises(TypeError, match="one Model"):
        e.align("21 May 2001", target="2001-05-21")
    assert rnnsearch.Ensemble([model_dir, model_dir]).translate("3/4/99") == model.translate("3/4/99")
    with pytest.raises(ValueError, match="1 to 16 models"):
        rnnsearch.Ensemble()
    with pytest.raises(ValueError, match="1 to 16 models"):
        rnnsearch.Ensemble(*[model] * 17)
    with pytest.raises(rnnsearch.Error, match="no-such-model"):
        rnnsearch.Ensemble(model, "no-such-model")
    # A member closed under it: the ensemble says so, as the model would.
    m = rnnsearch.Model(model_dir)
    e = rnnsearch.Ensemble(model, m)
    m.close()
    with pytest.raises(ValueError, match="closed"):
        e.translate(["3/4/99"])
    with rnnsearch.Ensemble(model_dir) as own:
        assert own.translate("3/4/99") == model.translate("3/4/99")
    with pytest.raises(ValueError, match="closed"):
        own.translate("3/4/99")
    assert model.translate("3/4/99")  # given, not loaded: left open


@pytest.mark.parametrize("marker, flag", [("-", "--remove-bpe=-"), (True, "--remove-bpe"), ("0", "--remove-bpe=0"),
                                          ("@@", "--remove-bpe=@@"), ("subword_nmt", "--remove-bpe=subword_nmt")])
def test_remove_bpe_is_the_program_s(model, model_dir, run, marker, flag):
    want = lines(run(["translate", "-m", model_dir, flag, "--quiet"], "\n".join(SOURCES) + "\n"))
    assert model.translate(SOURCES, remove_bpe=marker) == want
    hyps = model.hypotheses(["21 May 2001"], remove_bpe=marker)[0]
    assert hyps[0].tokens == model.hypotheses(["21 May 2001"])[0][0].tokens  # tokens keep it


def test_remove_bpe_takes_the_program_s_names():
    # `translate --remove-bpe=@@` and `=subword_nmt` mean subword-nmt's "@@ "
    # (a bare "@@" would leave "hou se"); the package took them as markers of
    # their own, so remove_bpe="@@" gave "2047 - 11" where the program gives
    # "2047-11", and "subword_nmt" removed nothing.
    assert rnnsearch._marker("@@") == rnnsearch._marker("subword_nmt") == rnnsearch._marker(True) == "@@ "
    assert rnnsearch._marker("sentencepiece") == "sentencepiece"
    assert rnnsearch._marker("-") == "-" and rnnsearch._marker("@@@") == "@@@"


def test_remove_bpe_refuses_what_is_not_a_marker(model):
    assert model.translate("21 May 2001", remove_bpe=False) == model.translate("21 May 2001")
    with pytest.raises(ValueError, match="empty"):
        model.translate("21 May 2001", remove_bpe="")
    for bad in (1, b"@@ ", ["@@"]):
        with pytest.raises(TypeError, match="remove_bpe"):
            model.translate("21 May 2001", remove_bpe=bad)


def test_replace_unk_is_the_program_s(model, model_dir, run):
    want = lines(run(["translate", "-m", model_dir, "--replace-unk", "--quiet"], "\n".join(SOURCES) + "\n"))
    assert model.translate(SOURCES, replace_unk=True) == want
    a = model.align(SOURCES[3], replace_unk=True)
    assert a.target_tokens == model.hypotheses([SOURCES[3]], replace_unk=True)[0][0].tokens
    a = model.align("21 May 2001", beam=2, remove_bpe="-", max_len=3)
    assert len(a.target_tokens) <= 3
    with pytest.raises(TypeError, match="no translation options"):
        model.align("21 May 2001", target="2001-05-21", replace_unk=True)


def test_labels_are_the_program_s():
    j = _alignment.JOINER
    assert [_alignment.label(t) for t in [j + "-" + j, j + ",", "(" + j, "<" + j + ">", j, "May", j + j]] == [
        "-", ",", "(", "<" + j + ">", j, "May", j]


def test_an_alignment_draws_itself_as_svg(model, model_dir, run):
    a = model.align("21 May 2001")
    svg = ET.fromstring(a._repr_svg_())
    ns = "{http://www.w3.org/2000/svg}"
    (bar,) = [g for g in svg.iter(ns + "g") if g.get("class") == "colorbar"]
    bands = [r.get("fill") for r in bar.iter(ns + "rect") if r.get("fill") != "none"]
    assert len(bands) == 64 and bands[0] == "#020202" and bands[-1] == "#fdfdfd"
    assert [float(t.text) for t in bar.iter(ns + "text")] == [0, 0.25, 0.5, 0.75, 1]
    svg.remove(bar)
    texts = [t.text for t in svg.iter(ns + "text")]
    assert texts[:2] == ["source", "target"]
    assert texts[2:] == a.source_labels + a.target_labels
    assert "-" in texts and not any(_alignment.JOINER in t for t in texts)
    cells = [r for r in svg.iter(ns + "rect") if r.find(ns + "title") is not None]
    rows, cols = a.weights.shape
    assert len(cells) == rows * cols
    for r, w in zip(cells, a.weights.flatten()):
        v = int(round(255 * float(w)))
        assert r.get("fill") == "#%02x%02x%02x" % (v, v, v)
    assert cells[0].find(ns + "title").text == "%s → %s: %.4f" % (a.target_labels[0], a.source_labels[0],
                                                                   a.weights[0, 0])
    # Text that needs escaping stays well-formed.
    odd = rnnsearch.Alignment(["<a&b>"], ['"q"'], a.weights[:2, :2], 0.0)
    ET.fromstring(odd._repr_svg_())


class _Weights:
    """A [rows, cols] matrix of 0.5s with the two things _repr_svg_ asks of
    NumPy's: shape and [i, j] (this test needs neither NumPy nor a model)."""

    def __init__(self, rows, cols):
        self.shape = (rows, cols)

    def __getitem__(self, ij):
        return 0.5


def test_an_alignment_of_control_characters_is_still_an_svg():
    # The word and space tokenizers keep C0 controls and DEL inside a token
    # (`printf 'a\x01b' | rnnsearch tokenize` gives the token 'a\x01b'); XML
    # 1.0 allows none of them, so a picture holding one raw is no picture (a
    # notebook shows a parse error). The program's SVG writer (src/common/svg.c)
    # draws each as U+FFFD and writes tab, LF and CR as character references.
    src, tgt = ["a\x01b", "\x7f", "<s>&\"'"], ["c\x0bd", "\ufffe", "t\tu"]
    odd = rnnsearch.Alignment(src, tgt, _Weights(4, 4), 0.0)
    svg = ET.fromstring(odd._repr_svg_())
    svg.remove(svg.find("{http://www.w3.org/2000/svg}g"))  # the colour bar
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[2:] == ["a\ufffdb", "\ufffd", "<s>&\"'", "</s>", "c\ufffdd", "\ufffd", "t\tu", "</s>"]
    titles = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")]
    assert titles[0] == "c\ufffdd → a\ufffdb: 0.5000"


def test_without_numpy_translation_works_and_alignment_says_what_it_needs(model_dir):
    code = ("import sys; sys.modules['numpy'] = None\n"
            "import rnnsearch\n"
            "m = rnnsearch.Model(%r)\n"
            "print(m.translate('3/4/99'), round(m.score('3/4/99', '1999-03-04'), 3) < 0)\n"
            "try:\n    m.align('3/4/99')\nexcept ImportError as e:\n    print(e)\n" % model_dir)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=False, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode().split("\n")
    assert out[0] == rnnsearch.Model(model_dir).translate("3/4/99") + " True"
    assert "install NumPy" in out[1]


def _backend():
    sys.path.insert(0, os.path.join(REPO, "python", "_backend"))
    try:
        import rnnsearch_backend
    finally:
        sys.path.pop(0)
    return rnnsearch_backend


def test_the_build_backend_makes_a_wheel_pip_can_install(tmp_path, monkeypatch):
    backend = _backend()
    monkeypatch.setenv("RNNSEARCH_WHEEL_LIBRARY", rnnsearch.library_path)
    name = backend.build_wheel(str(tmp_path))
    assert name.startswith("rnnsearch-%s-py3-none-linux_" % rnnsearch.version())
    with zipfile.ZipFile(str(tmp_path / name)) as z:
        files = z.namelist()
        assert "rnnsearch/__init__.py" in files and "rnnsearch/_loader.py" in files
        assert "rnnsearch/librnnsearch.so.1" in files and "rnnsearch/_paths.py" not in files
        meta = z.read("rnnsearch-%s.dist-info/METADATA" % rnnsearch.version()).decode()
        assert "Version: %s\n" % rnnsearch.version() in meta and "Requires-Python: >=3.9" in meta
        record = z.read("rnnsearch-%s.dist-info/RECORD" % rnnsearch.version()).decode().split()
        for row in record:
            path, digest, size = row.split(",")
            if digest:
                data = z.read(path)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert (digest, int(size)) == ("sha256=" + want, len(data))
        assert len(record) == len(files)
    monkeypatch.setenv("RNNSEARCH_WHEEL_LIBRARY", "")
    pure = backend.build_wheel(str(tmp_path))
    assert pure.endswith("-py3-none-any.whl")
    assert "rnnsearch/librnnsearch.so.1" not in zipfile.ZipFile(str(tmp_path / pure)).namelist()
    os.mkdir(str(tmp_path / "e"))
    editable = backend.build_editable(str(tmp_path / "e"))
    with zipfile.ZipFile(str(tmp_path / "e" / editable)) as z:
        assert z.read("_rnnsearch_editable.pth").decode() == os.path.join(REPO, "python") + "\n"
    sdist = backend.build_sdist(str(tmp_path))
    with tarfile.open(str(tmp_path / sdist)) as t:
        names = t.getnames()
    base = "rnnsearch-%s/" % rnnsearch.version()
    assert base + "pyproject.toml" in names and base + "_backend/rnnsearch_backend.py" in names
    assert base + "rnnsearch/_alignment.py" in names and base + "PKG-INFO" in names
    assert backend.get_requires_for_build_wheel() == []


def test_the_library_of_the_prefix_the_package_is_installed_under():
    assert _loader._prefix_lib("/opt/rs/lib/python3.11/site-packages/rnnsearch") == "/opt/rs/lib"
    assert _loader._prefix_lib("/home/u/.local/lib/python3.12/site-packages/rnnsearch") == "/home/u/.local/lib"
    assert _loader._prefix_lib("/src/rnnsearch/python/rnnsearch") is None
