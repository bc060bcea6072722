#!/usr/bin/env python3
"""Every relative link of the documentation resolves: in README.md, docs/*.md,
notes/*.md, dev/README.md, corpora/README.md, python/README.md and
tests/fixtures/README.md, each [text](target) and ![alt](image) whose target
is not a URL names a file or folder that exists, and its #anchor, if any, is
a heading of that page (GitHub's rule: lower case, punctuation other than -
and _ dropped, spaces to -, -1, -2 ... for repeats) or an explicit
<a id="..."> / <a name="...">. Links inside code (``` blocks, `spans`) are
not links. Prints each broken link as FILE:LINE: target and exits 1; silent
and 0 when all resolve. Standard library only.
    python3 scripts/check-links.py [FILE.md ...]
"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PAGES = ["README.md", "docs/*.md", "notes/*.md", "dev/README.md", "corpora/README.md",
         "python/README.md", "tests/fixtures/README.md"]
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ANCHOR_TAG = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def slug(text):
    text = re.sub(r"`([^`]*)`", r"\1", text)                   # code spans keep their text
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)      # links keep their text
    text = re.sub(r"<[^>]+>", "", text)                         # tags go
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)                        # punctuation goes (\w: Unicode letters)
    return text.replace(" ", "-")


def lines_outside_code(path):
    """(line number, text) of the lines outside fenced code, code spans blanked."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^\s*(```+|~~~+)", line)
            if m:
                if fence is None:
                    fence = m.group(1)[:3]
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, re.sub(r"(`+)(?:(?!\1).)+?\1", "", line)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, found, fence = {}, set(), None
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^\s*(```+|~~~+)", line)
                if m:
                    fence = None if fence else m.group(1)[:3]
                    continue
                if fence:
                    continue
                for a in ANCHOR_TAG.findall(line):
                    found.add(a)
                m = HEADING.match(line)
                if m:
                    s = slug(m.group(2))
                    k = seen.get(s, 0)
                    seen[s] = k + 1
                    found.add(s if k == 0 else "%s-%d" % (s, k))
        _anchors[path] = found
    return _anchors[path]


def check(page):
    bad = []
    base = os.path.dirname(os.path.join(ROOT, page))
    for n, line in lines_outside_code(os.path.join(ROOT, page)):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
                continue                                        # a URL, mailto:
            path, _, frag = target.partition("#")
            full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, page)
            if not os.path.exists(full):
                bad.append("%s:%d: %s (no such file)" % (page, n, target))
            elif frag and full.endswith(".md") and frag not in anchors(full):
                bad.append("%s:%d: %s (no heading #%s in %s)" % (page, n, target, frag,
                                                              os.path.relpath(full, ROOT)))
    return bad


def main():
    pages = sys.argv[1:] or sorted({p for g in PAGES for p in glob.glob(g, root_dir=ROOT)})
    bad = [b for p in pages for b in check(p)]
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
