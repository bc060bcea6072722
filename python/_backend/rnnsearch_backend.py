"""The build backend of the rnnsearch Python package (PEP 517, found through
pyproject.toml's backend-path), in the standard library alone, so that
`pip install ./python` builds offline with nothing but pip: no setuptools
or wheel to download (a fresh venv of Python 3.12 has neither, and pip's
build isolation would fetch them), for every Python >= 3.9.

It makes (PEP 427, PEP 660, and PEP 517's sdist):
- a wheel of rnnsearch/*.py and, when the checkout holds a built library
  (../build/librnnsearch.so.1, after `make`), that library beside them, so
  the installed package loads it with no environment variable (the wheel is
  then tagged for this platform, py3-none-linux_x86_64; without a library
  it is py3-none-any and the package looks for an installed one).
  RNNSEARCH_WHEEL_LIBRARY=FILE bundles FILE instead; set and empty, none;
- an editable wheel (`pip install -e ./python`): a .pth naming this tree,
  whose package finds the checkout's build/ by itself;
- an sdist of this directory's package files.
"""

import base64
import hashlib
import io
import os
import sysconfig
import tarfile
import zipfile

NAME = "rnnsearch"
# The library's version (RNNSEARCH_VERSION in src/api/rnnsearch.h; the tests
# check that they agree).
VERSION = "1.2.0"
SUMMARY = "Translate, align and score with rnnsearch models (ctypes over librnnsearch)"
REQUIRES_PYTHON = ">=3.9"
# NumPy is needed for alignment matrices only, and matplotlib for plot():
# translate, score and tokenize work without either, so an offline install
# in a bare venv needs nothing it cannot have.
EXTRAS = {"numpy": ["numpy"], "plot": ["numpy", "matplotlib"]}
SONAME = "librnnsearch.so.1"

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)
# Zip entries need a date; a fixed one makes the same tree the same wheel.
EPOCH = (1980, 1, 1, 0, 0, 0)


def _package_files():
    """(path in the wheel, path on disk) of the package's modules; _paths.py
    is `make install`'s, never shipped."""
    src = os.path.join(HERE, NAME)
    names = sorted(n for n in os.listdir(src) if n.endswith(".py") and n != "_paths.py")
    return [("%s/%s" % (NAME, n), os.path.join(src, n)) for n in names]


def _library():
    """The library to bundle: $RNNSEARCH_WHEEL_LIBRARY (empty: none), else the
    checkout's build/librnnsearch.so.1 when it was built; the file behind
    the links."""
    given = os.environ.get("RNNSEARCH_WHEEL_LIBRARY")
    if given is not None:
        if not given:
            return None
        if not os.path.isfile(given):
            raise FileNotFoundError("RNNSEARCH_WHEEL_LIBRARY: no file %s" % given)
        return os.path.realpath(given)
    built = os.path.join(os.path.dirname(HERE), "build", SONAME)
    return os.path.realpath(built) if os.path.isfile(built) else None


def _metadata():
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + NAME,
        "Version: " + VERSION,
        "Summary: " + SUMMARY,
        "Requires-Python: " + REQUIRES_PYTHON,
    ]
    for extra, needs in EXTRAS.items():
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s; extra == "%s"' % (n, extra) for n in needs]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        return ("\n".join(lines) + "\n\n" + f.read()).encode("utf-8")


def _wheel_file(tag, purelib):
    return ("Wheel-Version: 1.0\nGenerator: rnnsearch_backend\nRoot-Is-Purelib: %s\nTag: %s\n"
            % ("true" if purelib else "false", tag)).encode()


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(path, entries):
    """A wheel of entries [(name, bytes, mode)], dist-info and RECORD added
    (each file's hash and size, RECORD's own line empty)."""
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append("%s,%s,%d" % (name, _digest(data), len(data)))
        record.append("%s/RECORD,," % DIST_INFO)
        info = zipfile.ZipInfo(DIST_INFO + "/RECORD", EPOCH)
        info.external_attr = (0o100644) << 16
        z.writestr(info, "\n".join(record) + "\n")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _dist_info(tag, purelib):
    return [
        (DIST_INFO + "/METADATA", _metadata(), 0o644),
        (DIST_INFO + "/WHEEL", _wheel_file(tag, purelib), 0o644),
    ]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = [(name, _read(disk), 0o644) for name, disk in _package_files()]
    library = _library()
    if library:
        platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        tag = "py3-none-" + platform
        entries.append(("%s/%s" % (NAME, SONAME), _read(library), 0o755))
    else:
        tag = "py3-none-any"
    name = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    _write_wheel(os.path.join(wheel_directory, name), entries + _dist_info(tag, not library))
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding a .pth that puts this tree's python/ on sys.path: the
    package is then the checkout's files, and finds build/ by itself."""
    tag = "py3-none-any"
    name = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    pth = [("_%s_editable.pth" % NAME, (HERE + "\n").encode(), 0o644)]
    _write_wheel(os.path.join(wheel_directory, name), pth + _dist_info(tag, True))
    return name


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    target = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "METADATA"), "wb") as f:
        f.write(_metadata())
    return DIST_INFO


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
             ("README.md", os.path.join(HERE, "README.md")),
             ("_backend/rnnsearch_backend.py", os.path.abspath(__file__))] + _package_files()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for arc, disk in files + [("PKG-INFO", None)]:
            data = _metadata() if disk is None else _read(disk)
            info = tarfile.TarInfo("%s/%s" % (base, arc))
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            t.addfile(info, io.BytesIO(data))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_sdist = get_requires_for_build_wheel
get_requires_for_build_editable = get_requires_for_build_wheel
