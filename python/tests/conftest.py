"""Fixtures of the Python package's tests: the program they compare with and
the model they use. `make check-python` sets RNNSEARCH, RNNSEARCH_LIBRARY and
RNNSEARCH_TEST_MODEL; run alone, they default to the build in this tree."""

import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _no_skips():
    return os.environ.get("RNNSEARCH_NO_SKIPS") == "1"


def need(module):
    """Imports an optional module; skips without it, or fails under CI
    (RNNSEARCH_NO_SKIPS=1), where every dependency is installed."""
    try:
        return __import__(module)
    except ImportError:
        if _no_skips():
            pytest.fail("%s is missing (RNNSEARCH_NO_SKIPS=1)" % module)
        pytest.skip("%s is missing" % module)


@pytest.fixture(scope="session")
def program():
    path = os.environ.get("RNNSEARCH", os.path.join(REPO, "rnnsearch"))
    if not os.access(path, os.X_OK):
        pytest.fail("no program %s: build it with make, or set RNNSEARCH" % path)
    return path


@pytest.fixture(scope="session")
def model_dir():
    path = os.environ.get("RNNSEARCH_TEST_MODEL", os.path.join(REPO, "build", "check", "dates"))
    if not os.path.exists(os.path.join(path, "best.ckpt")):
        pytest.fail("no model in %s: `make check-python` trains it" % path)
    return path


@pytest.fixture(scope="session")
def model(model_dir):
    import rnnsearch

    return rnnsearch.Model(model_dir)


@pytest.fixture(scope="session")
def run(program):
    """run(args, input) -> the program's standard output (failing on a non-zero exit)."""

    def run_program(args, stdin=""):
        p = subprocess.run([program] + args, input=stdin.encode(), capture_output=True, check=False)
        assert p.returncode == 0, p.stderr.decode()
        return p.stdout.decode()

    return run_program


# Two roads to the same numbers (docs/guarantees.md, "Bits and rounding"; the
# C suite's tests/support/roads.h): bits are compared only for one road run twice,
# and the library and the program are one road (the same model preparation
# and batches), so their printed digits are compared exactly. Two roads that
# are equal in exact arithmetic (a pair scored alone and in a batch of 64:
# other BLAS calls, so another order of sums on some kernels) agree to
# float32 rounding: within ROADS_REL of the largest magnitude compared. The
# differences measured on every kernel family and under shared/blas-variant
# stay below 1e-6 of it; a wrong token, a lost term or another model is off
# by 1e-4 or more.
ROADS_REL = 2e-5


def close_to_rounding(got, want):
    """got and want (numbers, or equally long sequences of them) agree to
    float32 rounding: |got[i] - want[i]| <= ROADS_REL * max |entry|."""
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    if len(got) != len(want):
        return False
    scale = max([abs(x) for x in got + want] or [0.0])
    return all(abs(a - b) <= ROADS_REL * scale for a, b in zip(got, want))
