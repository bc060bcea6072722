"""rnnsearch from Python: translate, align and score with a trained model.

A thin ctypes layer over librnnsearch (the C API of src/api/rnnsearch.h), so
every result is the one the ``rnnsearch`` program gives for the same model
and input::

    import rnnsearch
    m = rnnsearch.Model("dates")                 # path or name, as -m resolves it
    m.translate(["21 May 2001", "3/4/99"])       # ['2001-05-21', '1999-03-04']
    a = m.align("21 May 2001")                   # a.weights: float32 [T+1, S+1]; a notebook draws it
    m.score("21 May 2001", "2001-05-21")         # log p(target | source)
    m.score([("21 May 2001", "2001-05-21"), ("3/4/99", "1999-03-04")])   # in batches
    e = rnnsearch.Ensemble("dates", "dates-2")   # translate -m dates -m dates-2

The library is found as _loader.py says: $RNNSEARCH_LIBRARY; a
librnnsearch.so.1 next to this package (a wheel built from a checkout);
the one `make install` named in _paths.py; the checkout's build/; the
dynamic linker's search; the lib directory of the prefix the package is
installed under; /usr/local/lib.

Threads: one Model may be used from several threads at once (each call
decodes with its own workspaces, and the library releases the GIL while it
computes). Model.close() waits for the calls in flight to return before it
frees the model; calls that start after it raise ValueError.

What it refuses: arguments of the wrong type (TypeError); text with a NUL
character or a lone surrogate, options out of the command line's ranges,
integers that a C int cannot hold (ValueError, OverflowError); what the
library refuses, such as a text longer than 1 MiB, raises rnnsearch.Error
with its message.
"""

import collections.abc
import contextlib
import ctypes
import inspect
import numbers
import operator
import os
import threading

from ._alignment import Alignment
from ._alignment import matrix as _matrix
from ._loader import _Error, _Forced, _lib, _P, _Tokens, _Translation, library_path

__all__ = ["Model", "Ensemble", "Alignment", "Hypothesis", "Error", "version", "library_path"]

# Quality by source length (tables of `rnnsearch bleu --by-length`): no library needed.
from .bylength import Bucket, plot_by_length, read_by_length  # noqa: E402

__all__ += ["Bucket", "plot_by_length", "read_by_length"]


class Error(RuntimeError):
    """A failure reported by librnnsearch (the message is the library's)."""


def version():
    """The library's version, as `rnnsearch --version` prints it."""
    return _lib.rnnsearch_version().decode()


__version__ = version()


def _message(err):
    return err.message.decode("utf-8", "replace")


def _check(status, err):
    if status != 0:
        raise Error(_message(err))


_INT_MAX = 2**31 - 1  # counts passed as a C int


def _name(what, index):
    return what if index is None else "%s[%d]" % (what, index)


def _bytes(text, what, index=None):
    """text as the library reads it: UTF-8 up to its first NUL, so a str that
    holds one is refused rather than cut short there. what (and index, for
    an item of a list) name it in a message, formatted only then: lists may
    be long."""
    if not isinstance(text, str):
        raise TypeError("%s must be a str, not %s" % (_name(what, index), type(text).__name__))
    nul = text.find("\0")
    if nul >= 0:
        raise ValueError("%s holds a NUL character (at index %d), which cannot be passed on: "
                         "the library reads text up to the first one" % (_name(what, index), nul))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("%s is not valid Unicode text: %s at index %d cannot be UTF-8"
                         % (_name(what, index), ascii(text[e.start]), e.start)) from None


def _path(path_or_name, what="path_or_name"):
    """A path (str, bytes or os.PathLike) as the file system spells it: a
    name that is not UTF-8 (os.fsencode's surrogateescape) is found too. One
    with a NUL is refused: the library would read the name up to it, another
    file's."""
    raw = os.fsencode(os.fspath(path_or_name))
    nul = raw.find(b"\0")
    if nul >= 0:
        raise ValueError("%s holds a NUL byte (at index %d): no file is named so" % (what, nul))
    return raw


def _a_list(items, what, alone=False, of="str"):
    """Refuses what is no list at all, naming the argument and the type
    expected (iterating would say "'int' object is not iterable"). alone:
    the caller also takes one str, and the message says so."""
    if not isinstance(items, collections.abc.Iterable):
        raise TypeError("%s must be %sa list of %s, not %s"
                        % (what, "a str or " if alone else "", of, type(items).__name__))


def _texts(items, what):
    """A list of str for a C array of strings (its count a C int)."""
    if isinstance(items, (str, bytes)):
        raise TypeError("%s must be a list of str, not a single %s" % (what, type(items).__name__))
    _a_list(items, what)
    encoded = [_bytes(t, what, i) for i, t in enumerate(items)]
    if len(encoded) > _INT_MAX:
        raise OverflowError("%d %s are more than the library takes at once (%d)"
                            % (len(encoded), what, _INT_MAX))
    return encoded


# The options hypotheses() passes by name to rnnsearch_options_set: the
# library bounds them (the command line's ranges) and lays them out.
_INT_OPTIONS = ("beam", "n_best", "max_len", "max_src_len", "batch_size")
_BOOL_OPTIONS = ("alignment", "replace_unk", "int8")


def _option_value(name, value):
    if name in _BOOL_OPTIONS:
        if isinstance(value, (str, bytes)):  # "False" would be true
            raise TypeError("%s must be a bool, not %s" % (name, type(value).__name__))
        return 1.0 if value else 0.0
    if name == "length_penalty":
        if isinstance(value, (str, bytes)) or not isinstance(value, numbers.Real):
            raise TypeError("%s must be a number, not %s" % (name, type(value).__name__))
        return float(value)
    try:
        number = operator.index(value)  # an int (or NumPy integer), not a float or str
    except TypeError:
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__)) from None
    # A C double holds every integer in range exactly; larger ones are
    # refused here rather than rounded, and ctypes never truncates them.
    if not -(2**53) <= number <= 2**53:
        raise OverflowError("%s: %d is far out of range" % (name, number))
    return float(number)


def _marker(value):
    """remove_bpe as `translate --remove-bpe[=MARKER]` takes it: True the
    default marker "@@ ", and so are "@@" and "subword_nmt" (fairseq's names,
    which the program maps too: a bare "@@" would leave "hou se"); another
    str that marker ("sentencepiece" the library's own); None or False none."""
    if value is None or value is False:
        return None
    if value is True:
        return "@@ "
    if not isinstance(value, str):
        raise TypeError("remove_bpe must be a bool or a str (the marker), not %s" % type(value).__name__)
    return "@@ " if value in ("@@", "subword_nmt") else value


def _weights(weights):
    """weights as `translate --weights W1,W2,...` takes them: None, or a
    sequence of numbers (one per model), as a C float array."""
    if weights is None:
        return None
    # A dict or set has a length too, but no order of models: a dict would
    # be read as its keys.
    if (isinstance(weights, (str, bytes, collections.abc.Mapping, collections.abc.Set))
            or not hasattr(weights, "__len__")):
        raise TypeError("weights must be a sequence of numbers, one per model, not %s" % type(weights).__name__)
    for i, w in enumerate(weights):
        if isinstance(w, (str, bytes, bool)) or not isinstance(w, numbers.Real):
            raise TypeError("weights[%d] must be a number, not %s" % (i, type(w).__name__))
    return (ctypes.c_float * max(len(weights), 1))(*[float(w) for w in weights])


def _shortlist(value):
    """shortlist as `translate --shortlist FILE[,FIRST[,BEST]]` takes it: a
    path, or a (path, first[, best]) tuple with FIRST and BEST whole numbers
    from 0 (none) to 10**7 (default 100 each); as the library's file and
    sizes (0: 100, -1: none)."""
    if value is None:
        return None, None, None
    parts = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(parts) <= 3:
        raise ValueError("shortlist must be a path or (path, first[, best]), not %d items" % len(parts))
    if not isinstance(parts[0], (str, bytes, os.PathLike)):
        raise TypeError("shortlist: the file must be a str or path, not %s" % type(parts[0]).__name__)
    path = _path(parts[0], "shortlist")
    sizes = []
    for name, size in zip(("first", "best"), parts[1:]):
        if isinstance(size, bool):
            raise TypeError("shortlist %s must be an int, not bool" % name)
        try:
            number = operator.index(size)
        except TypeError:
            raise TypeError("shortlist %s must be an int, not %s" % (name, type(size).__name__)) from None
        if not 0 <= number <= 10**7:
            raise ValueError("shortlist %s: %d is not a whole number from 0 to 10000000" % (name, number))
        sizes.append(-1 if number == 0 else number)
    sizes += [None] * (2 - len(sizes))
    return path, sizes[0], sizes[1]


def _options(remove_bpe=None, weights=None, shortlist=None, **values):
    """An rnnsearch_options of the library's size and layout, the given
    values (None: the library's default) set and checked by the library,
    and what must live as long as it (the marker's bytes, the weights and
    the shortlist's path, which the options point to until
    rnnsearch_translator_new copies or reads them)."""
    size = _lib.rnnsearch_options_size()
    buf = (ctypes.c_uint64 * ((size + 7) // 8))()  # zeroed, aligned for its size_t
    err = _Error()
    _check(_lib.rnnsearch_options_init(buf, size, ctypes.byref(err)), err)
    path, values["shortlist_first"], values["shortlist_best"] = _shortlist(shortlist)
    array = _weights(weights)
    for name, value in values.items():
        if value is None:
            continue
        if _lib.rnnsearch_options_set(buf, name.encode(), _option_value(name, value), ctypes.byref(err)):
            raise ValueError(_message(err))
    marker = _marker(remove_bpe)
    keep = None if marker is None else _bytes(marker, "remove_bpe")
    if keep is not None and _lib.rnnsearch_options_set_text(buf, b"remove_bpe", keep, ctypes.byref(err)):
        raise ValueError(_message(err))
    if path is not None and _lib.rnnsearch_options_set_text(buf, b"shortlist", path, ctypes.byref(err)):
        raise ValueError(_message(err))
    if array is not None and _lib.rnnsearch_options_set_weights(buf, array, len(weights), ctypes.byref(err)):
        raise ValueError(_message(err))
    if _lib.rnnsearch_options_check(buf, ctypes.byref(err)):
        raise ValueError(_message(err))
    return buf, (keep, path, array)


def _strings(array, count):
    return [array[i].decode("utf-8") for i in range(count)]


def _side(side):
    sides = {"source": 0, "target": 1}
    if side not in sides:
        raise ValueError("side must be 'source' or 'target', not %r" % (side,))
    return sides[side]


class Hypothesis:
    """One translation of an n-best list: its text and tokens, log p (natural
    log, </s> included), the score that ranked it, whether it ended with </s>
    (finished), and its Alignment when asked for."""

    def __init__(self, text, tokens, logprob, score, finished, alignment):
        self.text = text
        self.tokens = tokens
        self.logprob = logprob
        self.score = score
        self.finished = finished
        self.alignment = alignment

    def __repr__(self):
        return "Hypothesis(text=%r, logprob=%.6f, score=%.6f)" % (self.text, self.logprob, self.score)


# A forced decoding's alignment is NULL for such a model (rnnsearch.h); the
# words are the library's RS_NO_ALIGNMENT_WHY.
_NO_ALIGNMENT = ("a model with --attention none (the fixed-length encoder-decoder) has no "
                 "alignment: its decoder reads one fixed context c = [fwd h_S ; bwd h_1] at "
                 "every step, with no weights over the source words")


def _pairs(pairs, targets):
    """Sources and targets of a list of (source, target) pairs, or of two
    lists of one length."""
    if isinstance(pairs, (str, bytes)) or isinstance(targets, (str, bytes)):
        raise TypeError("score takes a source and a target (str), a list of (source, target) pairs, "
                        "or a list of sources and a list of targets")
    if targets is not None:
        _a_list(pairs, "score(): sources")
        _a_list(targets, "score(): targets")
        sources, targets = list(pairs), list(targets)
        if len(sources) != len(targets):
            raise ValueError("%d sources and %d targets: score needs one target per source"
                             % (len(sources), len(targets)))
        return sources, targets
    _a_list(pairs, "score(): pairs", of="(source, target) pairs")
    sources, targets = [], []
    for i, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise TypeError("pairs[%d] must be a (source, target) pair, not %s" % (i, type(pair).__name__))
        sources.append(pair[0])
        targets.append(pair[1])
    return sources, targets


def _known_options(method, options, allowed):
    """Refuses a keyword that hypotheses() does not take, naming the public
    method called (Python's own message would name _Decoder.hypotheses)."""
    for name in options:
        if name not in allowed:
            raise TypeError("%s() got an unexpected keyword argument %r; its options are %s"
                            % (method, name, ", ".join(allowed)))


class _Decoder:
    """Translation, alignment and scoring over the handles _member_handles()
    gives (one model, or an ensemble's), as the program's translate, align
    and score do with one -m or several."""

    _weights = None  # an Ensemble's own, from its constructor

    def hypotheses(self, sources, beam=1, n_best=1, length_penalty=1.0, alignment=False,
                   max_len=None, max_src_len=None, batch_size=None, replace_unk=False, remove_bpe=None,
                   weights=None, int8=False, shortlist=None, **unknown):
        """For each source, its n_best hypotheses (Hypothesis), best first,
        as `rnnsearch translate --beam K --n-best N` finds them. sources is a
        list of str; the options take the command line's ranges (None: the
        library's default: max_len 2·source + 10, max_src_len 250,
        batch_size 32); replace_unk as --replace-unk; remove_bpe as
        --remove-bpe (True: the marker "@@ ", or a str: that marker).

        weights as --weights W1,W2,...: one number >= 0 per model (not all
        0), the log-probabilities averaged as Σ w_k log p_k / Σ w_k (None:
        an Ensemble's own weights, else the plain mean). int8 as --int8: the
        decoder step with int8 copies of the weights (made once per model
        and kept with it; the model's other uses stay exact). shortlist as
        --shortlist FILE[,FIRST[,BEST]]: a table made by `rnnsearch lexicon`
        for the model, given as its path or (path, first[, best]) (0: none;
        default 100 each); a missing file or a bad table raises Error naming
        the file and line."""
        _known_options("hypotheses", unknown, _HYPOTHESES_OPTIONS)
        lines = _texts(sources, "sources")
        opt, keep = _options(beam=beam, n_best=n_best, length_penalty=length_penalty, alignment=alignment,
                             max_len=max_len, max_src_len=max_src_len, batch_size=batch_size,
                             replace_unk=replace_unk, remove_bpe=remove_bpe, int8=int8, shortlist=shortlist,
                             weights=self._weights if weights is None else weights)
        err = _Error()
        n = len(lines)
        with self._member_handles() as handles:
            models = (_P * len(handles))(*[h.value for h in handles])
            tr = _P()
            _check(_lib.rnnsearch_translator_new_ensemble(models, len(handles), opt, ctypes.byref(tr),
                                                          ctypes.byref(err)), err)
            del keep  # copied or read by the translator
            try:
                out = (_Translation * max(n, 1))()
                _check(_lib.rnnsearch_translate(tr, n, (ctypes.c_char_p * max(n, 1))(*lines), out,
                                                ctypes.byref(err)), err)
            finally:
                _lib.rnnsearch_translator_free(tr)
        try:
            return [_hypotheses(t) for t in out[:n]]
        finally:
            for t in out[:n]:
                _lib.rnnsearch_translation_free(ctypes.byref(t))

    def translate(self, sources, beam=1, n_best=1, length_penalty=1.0, **options):
        """Translations of a list of sentences (greedy, or beam search with
        beam > 1), as `rnnsearch translate` prints them: a list of str, or,
        with n_best > 1, a list of lists of str (best first). A single str
        gives a str (or a list with n_best > 1). options: as hypotheses()."""
        one = isinstance(sources, str)
        _known_options("translate", options, _HYPOTHESES_OPTIONS)
        if not one:
            _a_list(sources, "translate(): sources", alone=True)
        got = self.hypotheses([sources] if one else sources, beam=beam, n_best=n_best,
                              length_penalty=length_penalty, **options)
        texts = [[h.text for h in hyps] if n_best > 1 else hyps[0].text for hyps in got]
        return texts[0] if one else texts

    def align(self, source, target=None, beam=1, length_penalty=1.0, **options):
        """The Alignment of the translation of source (greedy, or the best of
        a beam; options as hypotheses() takes them: replace_unk, remove_bpe,
        max_len, ...), as `rnnsearch align` gives it."""
        if target is not None:
            raise TypeError("an Ensemble aligns its own translations only: force-decode a given target "
                            "with one Model (the library's rnnsearch_force takes one model)")
        if not isinstance(source, str):
            raise TypeError("source must be a str, not %s" % type(source).__name__)
        options.pop("alignment", None)
        _known_options("align", options, _HYPOTHESES_OPTIONS)
        hyp = self.hypotheses([source], beam=beam, length_penalty=length_penalty, alignment=True,
                              **options)[0][0]
        if hyp.alignment is None:
            raise ValueError("the source is empty: there is nothing to align")
        return hyp.alignment

    def score(self, source, target=None):
        """log p(target | source) (natural log, </s> included), as `rnnsearch
        score` prints it: score(source, target) for one pair (a float);
        score(pairs) for a list of (source, target) pairs, or
        score(sources, targets) for two lists (a list of floats), scored in
        batches of 64 pairs of similar length as the program scores a file."""
        if isinstance(source, str):
            return self._score_one(source, target)
        sources, targets = _pairs(source, target)
        return self._score_batch(_texts(sources, "sources"), _texts(targets, "targets"))

    def _score_one(self, source, target):
        return self._score_batch([_bytes(source, "source")], [_bytes(target, "target")])[0]

    def _score_batch(self, sources, targets):
        n = len(sources)
        got = (ctypes.c_double * max(n, 1))()
        err = _Error()
        with self._member_handles() as handles:
            models = (_P * len(handles))(*[h.value for h in handles])
            _check(_lib.rnnsearch_score(models, len(handles), n, (ctypes.c_char_p * max(n, 1))(*sources),
                                        (ctypes.c_char_p * max(n, 1))(*targets), got, ctypes.byref(err)), err)
        return list(got[:n])


# The options translate() and align() pass on to hypotheses(), by name.
_HYPOTHESES_OPTIONS = tuple(
    name for name, p in inspect.signature(_Decoder.hypotheses).parameters.items()
    if name not in ("self", "sources") and p.kind != p.VAR_KEYWORD)


def _hypotheses(t):
    """The Hypothesis list of one rnnsearch_translation."""
    src = _strings(t.source_tokens, t.source_count)
    hyps = []
    for h in t.hyps[: t.count]:
        tokens = _strings(h.tokens, h.count)
        a = None
        if h.alignment:
            a = Alignment(src, tokens, _matrix(h.alignment, h.count + 1, t.source_count + 1), h.logprob)
        hyps.append(Hypothesis(h.text.decode("utf-8"), tokens, h.logprob, h.score, bool(h.finished), a))
    return hyps


class Model(_Decoder):
    """A trained model, loaded as `rnnsearch -m` finds it: a checkpoint file,
    a model directory (its best.ckpt, else last.ckpt), or a name looked up in
    $RNNSEARCH_MODELS and then ./models.

    One Model may be shared by threads. close() (or leaving a ``with``
    block) refuses calls that start after it (ValueError) and waits for the
    calls in flight to return before it frees the model, so no call ever
    runs on a freed one. A Model cannot be copied or pickled: share it, or
    load another."""

    def __init__(self, path_or_name):
        self._handle = None
        # _idle guards _handle, _closed and _calls (the calls in flight); it
        # is notified when the last one returns. _busy counts, per thread,
        # the calls and close()s under way, kept outside the lock so that a
        # signal handler can see that its thread is inside one.
        self._idle = threading.Condition(threading.Lock())
        self._calls = 0
        self._busy = {}
        self._closed = False
        handle = _P()
        err = _Error()
        _check(_lib.rnnsearch_model_load(_path(path_or_name), ctypes.byref(handle), ctypes.byref(err)), err)
        self._handle = handle
        self.checkpoint = os.fsdecode(_lib.rnnsearch_model_checkpoint(handle))

    def close(self):
        """Frees the model (also done when it is garbage-collected). Calls
        that start afterwards raise ValueError; calls in flight on other
        threads finish first: close() waits for them. Closing twice is
        harmless. From inside a call of its own thread (a signal handler),
        where waiting would never end, it raises RuntimeError instead."""
        idle = getattr(self, "_idle", None)
        if idle is None:  # __init__ failed before there was anything to free
            return
        me = threading.get_ident()
        if self._busy.get(me):
            raise RuntimeError("Model.close() inside a call of the same thread (from a signal handler?): "
                               "it would wait for itself; close the model after the call returns")
        self._enter_busy(me)
        try:
            with idle:
                if self._closed:
                    return
                self._closed = True
                while self._calls:
                    idle.wait()
                handle, self._handle = self._handle, None
            _free(handle)
        finally:
            self._leave_busy(me)

    def __del__(self):
        # Nothing is in flight here (a call holds a reference to the Model).
        handle, self._handle = getattr(self, "_handle", None), None
        _free(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Model(%r)" % (getattr(self, "checkpoint", None),)

    def __reduce__(self):
        # A copy would share the C model and free it twice.
        raise TypeError("a Model cannot be copied or pickled: share it between threads, or load another")

    def __copy__(self):
        self.__reduce__()

    def __deepcopy__(self, memo):
        self.__reduce__()

    # One dict operation each: atomic under the GIL, so a signal handler
    # sees either count.
    def _enter_busy(self, me):
        self._busy[me] = self._busy.get(me, 0) + 1

    def _leave_busy(self, me):
        left = self._busy[me] - 1
        if left:
            self._busy[me] = left
        else:
            del self._busy[me]

    @contextlib.contextmanager
    def _use(self):
        """The model's handle for one call, counted in flight so that close()
        does not free it under the call."""
        me = threading.get_ident()
        self._enter_busy(me)
        try:
            with self._idle:
                if self._closed:
                    raise ValueError("the model is closed")
                self._calls += 1
            try:
                yield self._handle
            finally:
                with self._idle:
                    self._calls -= 1
                    if self._calls == 0:
                        self._idle.notify_all()
        finally:
            self._leave_busy(me)

    def _member_handles(self):
        """The handles of this one model, counted in flight (_Decoder)."""

        @contextlib.contextmanager
        def one():
            with self._use() as handle:
                yield [handle]

        return one()

    def align(self, source, target=None, beam=1, length_penalty=1.0, **options):
        """The Alignment of the translation of source (greedy, or the best of
        a beam; options as hypotheses() takes them), as `rnnsearch align`
        gives it; with target, the alignment of that given translation
        (forced decoding, `align --pairs`), which takes no options."""
        if target is not None:
            if options or beam != 1 or length_penalty != 1.0:
                raise TypeError("align(source, target) force-decodes the given target: it takes no "
                                "translation options")
            f = self._force(source, target, matrix=True)
            return Alignment(f[0], f[1], f[3], f[2])
        return _Decoder.align(self, source, beam=beam, length_penalty=length_penalty, **options)

    def _score_one(self, source, target):
        # One pair as `score --batch-size 1`: rnnsearch_force, whose sums
        # run in the order of a batch of one.
        return self._force(source, target, matrix=False)[2]

    def _force(self, source, target, matrix):
        src, tgt = _bytes(source, "source"), _bytes(target, "target")
        f = _Forced()
        err = _Error()
        with self._use() as handle:
            _check(_lib.rnnsearch_force(handle, src, tgt, ctypes.byref(f), ctypes.byref(err)), err)
        try:
            if matrix and not f.alignment:
                raise Error(_NO_ALIGNMENT)
            return (
                _strings(f.source_tokens, f.source_count),
                _strings(f.target_tokens, f.target_count),
                f.logprob,
                _matrix(f.alignment, f.target_count + 1, f.source_count + 1) if matrix else None,
            )
        finally:
            _lib.rnnsearch_forced_free(ctypes.byref(f))

    def tokenize(self, text, side="source"):
        """The tokens the model makes of text, as `rnnsearch tokenize -m`."""
        raw, which = _bytes(text, "text"), _side(side)
        t = _Tokens()
        err = _Error()
        with self._use() as handle:
            _check(_lib.rnnsearch_tokenize(handle, which, raw, ctypes.byref(t), ctypes.byref(err)), err)
        try:
            return _strings(t.tokens, t.count)
        finally:
            _lib.rnnsearch_tokens_free(ctypes.byref(t))

    def detokenize(self, tokens, side="target"):
        """Tokens (a list of str) back to text, as `rnnsearch tokenize -m
        --detokenize`."""
        items, which = _texts(tokens, "tokens"), _side(side)
        text = _P()
        err = _Error()
        array = (ctypes.c_char_p * max(len(items), 1))(*items)
        with self._use() as handle:
            _check(_lib.rnnsearch_detokenize(handle, which, array, len(items), ctypes.byref(text), ctypes.byref(err)), err)
        try:
            return ctypes.string_at(text).decode("utf-8")
        finally:
            _lib.rnnsearch_string_free(text)


_MAX_MODELS = 16  # RNNSEARCH_MAX_MODELS, the command line's bound on -m


class Ensemble(_Decoder):
    """Several models decoding as one, as `rnnsearch translate -m A -m B`
    (and `score -m A -m B`): their log-probabilities are averaged at each
    step, and their alignments for the alignment reported. Models are given
    as Model objects (shared, not closed by the Ensemble) or as paths and
    names (loaded here, and closed by close()); they must share vocabularies
    and text settings, which the first one's tokenize and detokenize.

    weights, as `translate --weights W1,W2,...`, weigh the members (one
    number >= 0 per model, not all 0): the default of every translation,
    which a call's own weights= replaces (score stays the plain mean, as
    `rnnsearch score` is).

    translate, hypotheses, align (of its own translations) and score work as
    a Model's; a given target is force-decoded by one Model only."""

    def __init__(self, *models, weights=None):
        if len(models) == 1 and isinstance(models[0], (list, tuple)):
            models = tuple(models[0])
        if not 1 <= len(models) <= _MAX_MODELS:
            raise ValueError("an Ensemble has 1 to %d models, not %d" % (_MAX_MODELS, len(models)))
        if weights is not None:
            _weights(weights)  # the types checked now; the values by the library, below
            weights = tuple(weights)
            if len(weights) != len(models):
                raise ValueError("weights: %d weights for %d models (one per model)" % (len(weights), len(models)))
            opt, keep = _options(weights=weights)
            del opt, keep
        self._weights = weights
        self._owned = []
        members = []
        try:
            for m in models:
                if not isinstance(m, Model):
                    m = Model(m)
                    self._owned.append(m)
                members.append(m)
            self.models = members
            if len(members) > 1:
                self._check_members()
        except BaseException:
            self.close()
            raise

    def _check_members(self):
        """Refuses members of other vocabularies or text settings now, as
        the README promises, not at the first call: the library's
        translator checks them (as `translate -m A -m B` does), and this
        one is made for that and freed."""
        err = _Error()
        with self._member_handles() as handles:
            models = (_P * len(handles))(*[h.value for h in handles])
            tr = _P()
            _check(_lib.rnnsearch_translator_new_ensemble(models, len(handles), None, ctypes.byref(tr),
                                                          ctypes.byref(err)), err)
            _lib.rnnsearch_translator_free(tr)

    def _member_handles(self):
        @contextlib.contextmanager
        def every():
            with contextlib.ExitStack() as stack:
                yield [stack.enter_context(m._use()) for m in self.models]

        return every()

    def tokenize(self, text, side="source"):
        """The first model's tokens of text (an ensemble reads one pipeline)."""
        return self.models[0].tokenize(text, side=side)

    def detokenize(self, tokens, side="target"):
        return self.models[0].detokenize(tokens, side=side)

    def close(self):
        """Closes the models this Ensemble loaded (not those it was given)."""
        for m in getattr(self, "_owned", []):
            m.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Ensemble(%s)" % ", ".join(repr(getattr(m, "checkpoint", None)) for m in self.models)


def _free(handle):
    # _lib is None late in interpreter shutdown, when __del__ may still run.
    if handle is not None and _lib is not None:
        _lib.rnnsearch_model_free(handle)
