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
