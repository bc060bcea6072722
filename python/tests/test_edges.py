"""The package at its edges, as a careless user or an attacker meets it:
closing a Model that other threads use, arguments of the wrong type or out
of range, NUL characters, empty and oversized inputs, copies. Each is
refused with an exception that says what was wrong, never a crash. The
thread tests run in a child process (a crash there is an exit status, not a
dead test run), each bounded by a timeout."""

import copy
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rnnsearch


def _child(code, model_dir, timeout=120):
    """Runs code in a fresh interpreter (MODEL: the model directory); returns
    its standard output, failing on a non-zero exit (139: a segfault)."""
    # The package under test, wherever it was imported from.
    package = os.path.dirname(os.path.dirname(os.path.abspath(rnnsearch.__file__)))
    env = dict(os.environ, PYTHONPATH=package, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", "MODEL = %r\n" % model_dir + textwrap.dedent(code)],
                       env=env, capture_output=True, timeout=timeout, check=False)
    assert p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr.decode()[-3000:])
    return p.stdout.decode()


def test_close_waits_for_a_translation_in_flight(model_dir):
    # Before: close() freed the model under the other thread's call (exit 139).
    out = _child("""
        import threading, time, rnnsearch
        sources = ["21 May 2001", "3/4/99", "JULY 4, 1976"] * 300
        want = rnnsearch.Model(MODEL).translate(sources, beam=2)
        finished_first = 0
        for round in range(6):
            m = rnnsearch.Model(MODEL)
            started, got, errors = threading.Event(), [], []
            def work():
                started.set()
                try:
                    got.append(m.translate(sources, beam=2))
                    got.append(time.monotonic())
                except Exception as e:
                    errors.append(e)
            t = threading.Thread(target=work)
            t.start()
            assert started.wait(30)
            time.sleep(0.02 * round)
            m.close()
            closed_at = time.monotonic()
            t.join(60)
            assert not t.is_alive()
            if got:  # the call was in flight: it ran to its end, then close() returned
                assert got[0] == want
                assert got[1] <= closed_at + 1.0
                finished_first += 1
            else:  # it had not begun: refused, not run on a freed model
                assert len(errors) == 1 and isinstance(errors[0], ValueError), errors
                assert "closed" in str(errors[0])
            try:
                m.translate(["3/4/99"])
                raise AssertionError("a closed model translated")
            except ValueError as e:
                assert "closed" in str(e)
        assert finished_first > 0  # at least one close() met a call in flight
        print("ok", finished_first)
    """, model_dir)
    assert out.startswith("ok")


def test_threads_calling_every_method_while_one_closes(model_dir):
    out = _child("""
        import threading, time, rnnsearch
        m = rnnsearch.Model(MODEL)
        calls = [
            lambda: m.translate(["21 May 2001", "3/4/99"] * 200, beam=3),  # long: in flight at close()
            lambda: m.translate(["21 May 2001", "3/4/99"], beam=2),
            lambda: m.hypotheses(["3/4/99"], beam=2, n_best=2, alignment=True),
            lambda: m.align("21 May 2001"),
            lambda: m.score("21 May 2001", "2001-05-21"),
            lambda: m.tokenize("21 May 2001"),
            lambda: m.detokenize(["2001", "\\uffed-\\uffed", "05"]),
        ]
        done, other = [0] * len(calls), []
        def work(k):
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    calls[k]()
                    done[k] += 1
                except ValueError as e:
                    if "closed" in str(e):
                        return
                    other.append(e)
                    return
                except Exception as e:
                    other.append(e)
                    return
            other.append("still running after 60 s")
        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(calls))]
        for t in threads:
            t.start()
        time.sleep(0.5)
        m.close()
        for t in threads:
            t.join(90)
        assert not any(t.is_alive() for t in threads)
        assert not other, other
        assert all(done), done
        print("ok", done)
    """, model_dir)
    assert out.startswith("ok")


def test_close_from_a_signal_handler_never_hangs(model_dir):
    # A handler runs on a thread that may be inside a call: waiting for that
    # call would never end, so close() refuses there (RuntimeError) and
    # works between calls. Fired every 2 ms at both, it must end.
    out = _child("""
        import signal, rnnsearch
        m = rnnsearch.Model(MODEL)
        refused, closed = [], []
        def handler(*a):
            try:
                m.close()
                closed.append(1)
            except RuntimeError as e:
                assert "inside a call of the same thread" in str(e)
                refused.append(1)
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
        ended = False
        for _ in range(20000):
            try:
                m.tokenize("21 May 2001")
                m.translate(["21 May 2001"] * 20)
            except RuntimeError:
                pass  # the handler's refusal, raised where the call was
            except ValueError as e:
                assert "closed" in str(e)
                ended = True
                break
        signal.setitimer(signal.ITIMER_REAL, 0)
        assert ended and closed  # closed once (later close()s are no-ops), refused meanwhile
        assert m._handle is None
        print("ok", len(refused), len(closed))
    """, model_dir, timeout=60)
    assert out.startswith("ok")


def test_every_call_on_a_closed_model_says_so(model_dir):
    m = rnnsearch.Model(model_dir)
    m.close()
    m.close()
    for call in (lambda: m.translate(["3/4/99"]), lambda: m.hypotheses(["3/4/99"]),
                 lambda: m.align("3/4/99"), lambda: m.align("3/4/99", target="1999-03-04"),
                 lambda: m.score("3/4/99", "1999-03-04"), lambda: m.tokenize("3/4/99"),
                 lambda: m.detokenize(["1999"])):
        with pytest.raises(ValueError, match="the model is closed"):
            call()
    assert "best.ckpt" in repr(m)


def test_a_model_cannot_be_copied(model):
    # A copy would hold the same C model and free it a second time.
    for make in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied"):
            make(model)
    assert model.translate("3/4/99") == model.translate(["3/4/99"])[0]


@pytest.mark.parametrize("option,value,message", [
    ("beam", 2**31 - 1, "beam: 2147483647 is not an integer from 1 to 1000"),
    ("beam", 2**32 + 1, "beam: 4294967297 is not an integer from 1 to 1000"),  # was 1
    ("beam", 2**27 + 1, "beam: 134217729"),
    ("beam", 0, "beam: 0 is not"),
    ("beam", -1, "beam: -1 is not"),
    ("beam", 1001, "beam: 1001 is not"),
    ("n_best", 0, "n_best: 0 is not"),
    ("batch_size", 0, "batch_size: 0 is not"),
    ("batch_size", 100001, "batch_size: 100001 is not"),
    ("batch_size", -(2**32) + 5, "batch_size: -4294967291 is not"),  # was 5
    ("max_len", -1, "max_len: -1 is not"),
    ("max_src_len", 100001, "max_src_len: 100001 is not"),
    ("length_penalty", float("nan"), "length_penalty: nan is not a number"),
    ("length_penalty", float("inf"), "length_penalty: inf is not a number"),
    ("length_penalty", 1e9, "length_penalty: 1000000000 is not a number from -100 to 100"),
    # Just past the bound, the message shows the value given, not 100.
    ("length_penalty", 100.0000001, "length_penalty: 100.0000001 is not a number from -100 to 100"),
])
def test_options_out_of_range_are_refused_by_the_library(model, option, value, message):
    with pytest.raises(ValueError, match=message):
        model.hypotheses(["3/4/99"], **{option: value})


def test_options_beyond_any_range_and_of_the_wrong_type(model):
    for value in (2**53 + 1, 2**64, 10**400, -(10**400)):
        with pytest.raises(OverflowError, match="beam"):
            model.translate(["3/4/99"], beam=value)
    for option, value in [("beam", 2.0), ("beam", "3"), ("n_best", object()), ("max_len", 1.5),
                          ("length_penalty", "1"), ("length_penalty", b"1"), ("batch_size", [1]),
                          ("alignment", "False"), ("replace_unk", b"")]:
        with pytest.raises(TypeError, match=option):
            model.hypotheses(["3/4/99"], **{option: value})
    with pytest.raises(ValueError, match="n_best: 3 is more than the beam"):
        model.translate(["3/4/99"], beam=2, n_best=3)
    # What is in range works, NumPy integers and the largest beam included
    # (its workspaces are sized for batch_size · beam rows: one sentence).
    got = model.hypotheses(["3/4/99"], beam=np.int64(1000), n_best=np.int32(3), length_penalty=np.float32(0.5),
                           batch_size=1)
    assert len(got[0]) == 3
    assert isinstance(model.translate("3/4/99", beam=1000, batch_size=1), str)
    assert model.translate(["3/4/99"], max_len=None, max_src_len=None, batch_size=None) == \
        model.translate(["3/4/99"])


def test_nul_characters_are_refused_not_cut(model, model_dir, tmp_path):
    # Before: 'a\x00b c' translated as "a", and the path below loaded best.ckpt.
    with pytest.raises(ValueError, match=r"sources\[0\] holds a NUL character \(at index 1\)"):
        model.translate(["a\x00b c"])
    with pytest.raises(ValueError, match=r"sources\[1\] holds a NUL"):
        model.translate(["3/4/99", "21 May 2001\x00junk"])
    with pytest.raises(ValueError, match="NUL"):
        model.translate("3/4/99\x00")
    with pytest.raises(ValueError, match="path_or_name holds a NUL byte"):
        rnnsearch.Model(os.path.join(model_dir, "best.ckpt\x00junk"))
    with pytest.raises(ValueError, match="NUL"):
        rnnsearch.Model(os.fsencode(model_dir) + b"\x00junk")
    for call in (lambda: model.score("3/4/99\x00", "1999"), lambda: model.score("3/4/99", "1999\x00"),
                 lambda: model.align("3/4\x0099"), lambda: model.align("3/4/99", target="\x00"),
                 lambda: model.tokenize("\x00"), lambda: model.detokenize(["1999", "\x00"])):
        with pytest.raises(ValueError, match="NUL"):
            call()


def test_text_that_is_not_unicode_or_too_long(model):
    with pytest.raises(ValueError, match=r"sources\[0\] is not valid Unicode text: '\\ud800' at index 2"):
        model.translate(["ab\ud800"])
    with pytest.raises(ValueError, match="not valid Unicode"):
        model.detokenize(["\udcff"])
    # The program's bound on a line, 1 MiB, holds for the library's texts too.
    line = "3/4/99 " * (2**20 // 7 + 1)
    with pytest.raises(rnnsearch.Error, match="sentence 2: longer than 1048576 bytes"):
        model.translate(["3/4/99", line])
    with pytest.raises(rnnsearch.Error, match="longer than 1048576 bytes"):
        model.tokenize(line)
    with pytest.raises(rnnsearch.Error, match="the target: longer than"):
        model.score("3/4/99", line)
    with pytest.raises(rnnsearch.Error, match="more than 1048576 bytes"):
        model.detokenize(line.split())
    # Just under the bound: cut at max_src_len tokens, as the program cuts it.
    (hyp,) = model.hypotheses([line[: 2**20 - 7]])[0]
    assert isinstance(hyp.text, str)


def test_arguments_of_the_wrong_type(model):
    for bad in (None, 3, [None], [b"3/4/99"], [3], b"3/4/99"):
        with pytest.raises(TypeError):
            model.translate(bad)
    with pytest.raises(TypeError, match="sources must be a list of str, not a single str"):
        model.hypotheses("3/4/99")  # would have translated each character
    with pytest.raises(TypeError, match="tokens must be a list of str, not a single str"):
        model.detokenize("2001 05 21")
    for call in (lambda: model.tokenize(None), lambda: model.tokenize(b"x"), lambda: model.score("x", None),
                 lambda: model.align(["3/4/99"]), lambda: model.align(None)):
        with pytest.raises(TypeError):
            call()
    for side in ("middle", "", None, 0, ["source"]):
        with pytest.raises((ValueError, TypeError)):
            model.tokenize("x", side=side)
    for bad in (None, 3, ["dates"]):
        with pytest.raises(TypeError):
            rnnsearch.Model(bad)


def test_empty_and_many(model):
    assert model.translate([]) == []
    assert model.hypotheses([]) == []
    assert model.translate(iter(["3/4/99"])) == model.translate(["3/4/99"])
    assert model.translate([""]) == [""]
    assert model.translate("") == ""
    assert model.tokenize("") == []
    assert model.detokenize([]) == ""
    with pytest.raises(rnnsearch.Error, match="empty"):
        model.score("", "1999")
    with pytest.raises(ValueError, match="empty"):
        model.align("")
    with pytest.raises(rnnsearch.Error, match="no model given"):
        rnnsearch.Model("")
    one = model.translate(["3/4/99", "21 May 2001"])
    assert model.translate(["3/4/99", "21 May 2001"] * 1000) == one * 1000


def test_paths_as_the_file_system_spells_them(model_dir, tmp_path):
    import pathlib

    # A checkpoint whose name is not UTF-8 loads through os.fsencode, and
    # Model.checkpoint gives the name back as os.fsdecode spells it.
    odd = os.path.join(os.fsencode(str(tmp_path)), b"m\xff.ckpt")
    shutil.copyfile(os.path.join(model_dir, "best.ckpt"), odd)
    m = rnnsearch.Model(os.fsdecode(odd))
    assert m.checkpoint == os.fsdecode(odd)
    assert rnnsearch.Model(odd).checkpoint == m.checkpoint
    assert rnnsearch.Model(pathlib.Path(model_dir)).checkpoint == os.path.join(model_dir, "best.ckpt")
    with pytest.raises(rnnsearch.Error, match="no-such"):
        rnnsearch.Model(pathlib.Path(tmp_path, "no-such"))
    with pytest.raises(rnnsearch.Error):
        rnnsearch.Model("x" * 100000)


def test_the_options_layout_is_the_library_s():
    # The package keeps no copy of rnnsearch_options: it allocates the
    # library's size and sets fields by name.
    assert not hasattr(rnnsearch, "_Options")
    assert rnnsearch._lib.rnnsearch_options_size() >= 40
    assert rnnsearch.version().split(".")[0] == "1"


@pytest.mark.parametrize("old", ["0.1.0", "1.0.0", "1.1.0"])
def test_a_library_of_another_major_version_is_refused(tmp_path, old):
    # Its structures differ (0.1), or it lacks functions the package calls
    # (1.0: rnnsearch_score, ensembles; 1.1: rnnsearch_options_set_weights):
    # calling it would misread them. A
    # stand-in that reports the version is enough to be refused by name.
    cc = shutil.which("cc")
    if cc is None:
        if os.environ.get("RNNSEARCH_NO_SKIPS") == "1":
            pytest.fail("no cc (RNNSEARCH_NO_SKIPS=1)")
        pytest.skip("no cc to build a stand-in library")
    src = tmp_path / "old.c"
    src.write_text('const char *rnnsearch_version(void) { return "%s"; }\n' % old)
    lib = tmp_path / "librnnsearch.so.0"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    package = os.path.dirname(os.path.dirname(os.path.abspath(rnnsearch.__file__)))
    env = dict(os.environ, PYTHONPATH=package, RNNSEARCH_LIBRARY=str(lib))
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([sys.executable, "-c", "import rnnsearch"], env=env, capture_output=True, timeout=60,
                       check=False)
    assert p.returncode == 1
    want = "librnnsearch %s; this package needs version 1.2 or a later 1.x" % old
    assert want in p.stderr.decode(), p.stderr.decode()


def test_wrong_arguments_name_the_public_call(model):
    # Not "'int' object is not iterable": the argument and what it takes.
    with pytest.raises(TypeError, match=r"translate\(\): sources must be a str or a list of str, not int"):
        model.translate(5)
    with pytest.raises(TypeError, match="sources must be a list of str, not int"):
        model.hypotheses(5)
    with pytest.raises(TypeError, match=r"score\(\): sources must be a list of str, not NoneType"):
        model.score(None, ["1999"])
    with pytest.raises(TypeError, match=r"score\(\): pairs must be a list of \(source, target\) pairs, not int"):
        model.score(5)
    # An unknown keyword names the method called, not the internal _Decoder.
    for call, name in ((lambda: model.translate(["3/4/99"], beem=3), "translate"),
                       (lambda: model.align("3/4/99", beem=3), "align")):
        with pytest.raises(TypeError) as raised:
            call()
        message = str(raised.value)
        assert message.startswith("%s() got an unexpected keyword argument 'beem'" % name), message
        assert "_Decoder" not in message and "max_len" in message, message
    with pytest.raises(TypeError, match=r"^hypotheses\(\) got an unexpected keyword argument 'beem'"):
        model.hypotheses(["3/4/99"], beem=3)


def test_an_ensemble_of_other_vocabularies_is_refused_when_made(model, model_dir, program, tmp_path):
    from conftest import REPO

    other = str(tmp_path / "reorder")
    p = subprocess.run([program, "train", "--train", os.path.join(REPO, "corpora", "reorder", "train.tsv"),
                        "--out", other, "--epochs", "1", "--max-steps", "1", "--emb", "8", "--hidden", "8",
                        "--att", "8", "--maxout", "4", "--threads", "1", "--quiet"],
                       capture_output=True, check=False)
    assert p.returncode == 0, p.stderr.decode()
    # At construction, before any call (python/README.md), given or loaded.
    with pytest.raises(rnnsearch.Error, match="an ensemble needs one target vocabulary"):
        rnnsearch.Ensemble(model, other)
    with pytest.raises(rnnsearch.Error, match="an ensemble needs one target vocabulary"):
        rnnsearch.Ensemble(model_dir, rnnsearch.Model(other))
    assert model.translate("3/4/99")  # a given member is left open
    assert rnnsearch.Ensemble(model, model_dir).translate("3/4/99") == model.translate("3/4/99")
