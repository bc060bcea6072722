"""The by-length tables of `rnnsearch bleu --by-length` read and drawn by the
package: the same buckets and scores the program printed, refusals naming
file and line, and one line per system in the figure."""

import math
import subprocess

import pytest

import rnnsearch
from conftest import need

SOURCES = ["a b c", "a b c d e f g h i j k l", "one two", "x " * 24 + "y"]
HYPS = ["the cat sat", "a b c d e f g h i j k l", "one two", "x " * 20]
REFS = ["the cat sat", "a b c d e f g h i j k m", "one three", "x " * 24 + "y"]


def _table(tmp_path, program, hyps, name):
    src, hyp, ref = (tmp_path / n for n in ("src.txt", name + ".hyp", "ref.txt"))
    src.write_text("\n".join(SOURCES) + "\n")
    hyp.write_text("\n".join(hyps) + "\n")
    ref.write_text("\n".join(REFS) + "\n")
    out = tmp_path / (name + ".tsv")
    out.write_bytes(subprocess.run(
        [program, "bleu", "--by-length", "--src", str(src), "--buckets", "10,20,30",
         "--format", "tsv", str(hyp), str(ref)], check=True, capture_output=True).stdout)
    return out


def test_tables_read_as_the_program_wrote_them(tmp_path, program):
    path = _table(tmp_path, program, HYPS, "sys")
    buckets = rnnsearch.read_by_length(str(path))
    assert [b.bucket for b in buckets] == ["<10", "10-19", "20-29", ">=30"]
    assert [b.sentences for b in buckets] == [2, 1, 1, 0]
    rows = path.read_text().splitlines()[1:]
    for b, row in zip(buckets, rows):
        bleu, chrf = row.split("\t")[2:]
        assert (math.isnan(b.bleu) and bleu == "nan") or b.bleu == float(bleu)
        assert (math.isnan(b.chrf) and chrf == "nan") or b.chrf == float(chrf)
    assert math.isnan(buckets[3].bleu)


def test_other_files_are_refused_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("bucket\tsentences\tbleu\tchrf\n<10\tmany\t1\t2\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2:"):
        rnnsearch.read_by_length(str(bad))
    bad.write_text("system\tbleu\n")
    with pytest.raises(ValueError, match=r"bad.tsv:1: not a by-length table"):
        rnnsearch.read_by_length(str(bad))


def test_one_line_per_system(tmp_path, program):
    need("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    a = _table(tmp_path, program, HYPS, "first")
    b = _table(tmp_path, program, REFS, "second")
    ax = rnnsearch.plot_by_length({"first": str(a), "second": str(b)}, title="by length")
    assert [line.get_label() for line in ax.get_lines()] == ["first", "second"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["<10", "10-19", "20-29", ">=30"]
    assert ax.get_ylabel() == "BLEU"
    ax.figure.savefig(str(tmp_path / "figure.png"))
    other = tmp_path / "other.tsv"
    other.write_text("bucket\tsentences\tbleu\tchrf\n<50\t1\t1\t1\n>=50\t0\tnan\tnan\n")
    with pytest.raises(ValueError, match="are not those of"):
        rnnsearch.plot_by_length([str(a), str(other)])
