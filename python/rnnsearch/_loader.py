"""Finding and loading librnnsearch, and the C declarations of its API
(src/api/rnnsearch.h) for ctypes.

The library is looked for, in this order (the first that loads wins):

1. the file $RNNSEARCH_LIBRARY names (and only it, when set);
2. librnnsearch.so.1 next to this file (a wheel built from a checkout
   carries the build's library there);
3. the file `make install` wrote into _paths.py (LIBRARY: PREFIX/lib's);
4. build/librnnsearch.so.1 of the checkout this package sits in (python/
   run from the tree, or an editable install);
5. the dynamic linker's search for the soname (LD_LIBRARY_PATH, ldconfig's
   cache, /lib, /usr/lib), then ctypes.util.find_library;
6. the lib directory of the prefix the package is installed under (P/lib
   for P/lib/python3.X/site-packages/rnnsearch), so that a moved or staged
   install still finds its own library;
7. /usr/local/lib.
"""

import ctypes
import ctypes.util
import os

_SONAME = "librnnsearch.so.1"
_MAJOR = 1
# 1.1: rnnsearch_score, rnnsearch_translator_new_ensemble, rnnsearch_options_set_text;
# 1.2: the options' weights, int8 and shortlist (rnnsearch_options_set_weights)
_MINOR = 2


def _prefix_lib(here):
    """P/lib for a package at P/lib/pythonX.Y/site-packages/rnnsearch (or
    lib64, or dist-packages): the last 'lib' or 'lib64' above it."""
    parts = here.split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] in ("lib", "lib64"):
            return os.sep.join(parts[: i + 1])
    return None


def _candidates():
    env = os.environ.get("RNNSEARCH_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, _SONAME)
    try:
        from . import _paths  # written by `make install`

        yield getattr(_paths, "LIBRARY", os.path.join(_paths.LIBDIR, _SONAME))
    except ImportError:
        pass
    checkout = os.path.join(os.path.dirname(os.path.dirname(here)), "build", _SONAME)
    if os.path.exists(checkout):
        yield checkout
    yield _SONAME
    found = ctypes.util.find_library("rnnsearch")
    if found and found != _SONAME:
        yield found
    lib = _prefix_lib(here)
    if lib:
        yield os.path.join(lib, _SONAME)
    yield os.path.join("/usr/local/lib", _SONAME)


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (no such file)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "rnnsearch: cannot load the library librnnsearch (build it with `make`, install it "
        "with `make install`, or name it in RNNSEARCH_LIBRARY); tried: " + "; ".join(tried)
    )


_lib, library_path = _load()


def _check_version():
    """The layouts below are those of librnnsearch.so.1, and the package calls
    functions 1.1 and 1.2 added: a library of another major version (RNNSEARCH_LIBRARY
    naming an old build, say) would be called with the wrong structures, and
    an older 1.x library lacks functions, so either is refused by name."""
    _lib.rnnsearch_version.restype = ctypes.c_char_p
    _lib.rnnsearch_version.argtypes = []
    found = _lib.rnnsearch_version().decode("ascii", "replace")
    numbers = (found.split(".") + ["", ""])[:2]
    if numbers[0] != str(_MAJOR) or not numbers[1].isdigit() or int(numbers[1]) < _MINOR:
        raise ImportError("rnnsearch: %s is librnnsearch %s; this package needs version %d.%d or a later "
                          "%d.x (%s)" % (library_path, found, _MAJOR, _MINOR, _MAJOR, _SONAME))


_check_version()


class _Error(ctypes.Structure):
    _fields_ = [("message", ctypes.c_char * 1024)]


class _Tokens(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int), ("tokens", ctypes.POINTER(ctypes.c_char_p))]


class _Hypothesis(ctypes.Structure):
    _fields_ = [
        ("text", ctypes.c_char_p),
        ("count", ctypes.c_int),
        ("tokens", ctypes.POINTER(ctypes.c_char_p)),
        ("logprob", ctypes.c_double),
        ("score", ctypes.c_double),
        ("finished", ctypes.c_int),
        ("alignment", ctypes.POINTER(ctypes.c_float)),
    ]


class _Translation(ctypes.Structure):
    _fields_ = [
        ("source_count", ctypes.c_int),
        ("source_tokens", ctypes.POINTER(ctypes.c_char_p)),
        ("truncated", ctypes.c_int),
        ("count", ctypes.c_int),
        ("hyps", ctypes.POINTER(_Hypothesis)),
    ]


class _Forced(ctypes.Structure):
    _fields_ = [
        ("source_count", ctypes.c_int),
        ("target_count", ctypes.c_int),
        ("source_tokens", ctypes.POINTER(ctypes.c_char_p)),
        ("target_tokens", ctypes.POINTER(ctypes.c_char_p)),
        ("truncated", ctypes.c_int),
        ("logprob", ctypes.c_double),
        ("token_logprobs", ctypes.POINTER(ctypes.c_float)),
        ("alignment", ctypes.POINTER(ctypes.c_float)),
    ]


_P = ctypes.c_void_p
_E = ctypes.POINTER(_Error)
_S = ctypes.POINTER(ctypes.c_char_p)
for _name, _res, _args in [
    ("rnnsearch_version", ctypes.c_char_p, []),
    ("rnnsearch_model_load", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P), _E]),
    ("rnnsearch_model_free", None, [_P]),
    ("rnnsearch_model_checkpoint", ctypes.c_char_p, [_P]),
    ("rnnsearch_tokens_free", None, [ctypes.POINTER(_Tokens)]),
    ("rnnsearch_tokenize", ctypes.c_int, [_P, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_Tokens), _E]),
    ("rnnsearch_detokenize", ctypes.c_int, [_P, ctypes.c_int, _S, ctypes.c_int, ctypes.POINTER(_P), _E]),
    ("rnnsearch_string_free", None, [_P]),
    # The options are the library's to lay out: the package allocates
    # rnnsearch_options_size() bytes and sets fields by name.
    ("rnnsearch_options_size", ctypes.c_size_t, []),
    ("rnnsearch_options_init", ctypes.c_int, [_P, ctypes.c_size_t, _E]),
    ("rnnsearch_options_set", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_double, _E]),
    ("rnnsearch_options_set_text", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p, _E]),
    ("rnnsearch_options_set_weights", ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_float), ctypes.c_int, _E]),
    ("rnnsearch_options_check", ctypes.c_int, [_P, _E]),
    ("rnnsearch_translation_free", None, [ctypes.POINTER(_Translation)]),
    ("rnnsearch_translator_new_ensemble", ctypes.c_int, [ctypes.POINTER(_P), ctypes.c_int, _P, ctypes.POINTER(_P), _E]),
    ("rnnsearch_translator_free", None, [_P]),
    ("rnnsearch_translate", ctypes.c_int, [_P, ctypes.c_int, _S, ctypes.POINTER(_Translation), _E]),
    ("rnnsearch_forced_free", None, [ctypes.POINTER(_Forced)]),
    ("rnnsearch_force", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_Forced), _E]),
    (
        "rnnsearch_score",
        ctypes.c_int,
        [ctypes.POINTER(_P), ctypes.c_int, ctypes.c_int, _S, _S, ctypes.POINTER(ctypes.c_double), _E],
    ),
]:
    _f = getattr(_lib, _name)
    _f.restype = _res
    _f.argtypes = _args
