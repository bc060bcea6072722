"""Prints the directory this Python imports pure packages from for the
installation prefix PREFIX: where `make install PREFIX=…` puts the rnnsearch
package (PYTHONDIR).

    python3 scripts/python-site.py PREFIX
    python3 scripts/python-site.py --note DIR

--note: what `make install` says when it is done: where the package went
and, when DIR is not on this Python's sys.path (a prefix of its own, a
staged DESTDIR tree), the PYTHONPATH to set for `import rnnsearch`.

In this order:
1. PREFIX is the user base (~/.local, or $PYTHONUSERBASE): the user site,
   ~/.local/lib/python3.X/site-packages, on sys.path once it exists;
2. a site directory of this Python lies in PREFIX/lib: that one (Debian's
   python3 reads /usr/local/lib/python3.X/dist-packages for /usr/local, and
   /usr/lib/python3/dist-packages for /usr);
3. otherwise what sysconfig says of PREFIX (P/lib/python3.X/site-packages),
   which is on no sys.path: PYTHONPATH then names it. Debian's default
   scheme, posix_local, is for its own /usr only (it adds local/ to the
   base), so posix_prefix is asked there.
"""

import os
import site
import sys
import sysconfig


def _inside(path, prefix):
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(prefix))
    return None if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def site_dir(prefix):
    prefix = os.path.abspath(prefix)
    base = site.getuserbase()
    if os.path.realpath(base) == os.path.realpath(prefix):
        return os.path.join(prefix, os.path.relpath(site.getusersitepackages(), base))
    dirs = site.getsitepackages() if hasattr(site, "getsitepackages") else []
    for d in dirs + [p for p in sys.path if os.path.isabs(p)]:
        rel = _inside(d, prefix)
        if rel and rel.split(os.sep)[0] in ("lib", "lib64") and os.path.basename(d) in (
                "site-packages", "dist-packages"):
            return os.path.join(prefix, rel)
    get_default = getattr(sysconfig, "get_default_scheme", None) or getattr(sysconfig, "_get_default_scheme")
    scheme = get_default()
    if scheme == "posix_local":
        scheme = "posix_prefix"
    return sysconfig.get_path("purelib", scheme, vars={"base": prefix, "platbase": prefix})


def on_path(directory):
    """Whether this Python imports from directory as it starts (sys.path, the
    user site included once it exists; PYTHONPATH left out, as it is the
    user's to set)."""
    want = os.path.realpath(directory)
    paths = [p for p in sys.path if p]
    if os.environ.get("PYTHONPATH"):
        for p in os.environ["PYTHONPATH"].split(os.pathsep):
            if p in paths:
                paths.remove(p)
    # The user site is on sys.path only once it exists: make install makes it.
    if site.ENABLE_USER_SITE and site.getusersitepackages():
        paths.append(site.getusersitepackages())
    return any(os.path.realpath(p) == want for p in paths)


def note(directory):
    lines = ["The Python package rnnsearch is in %s/rnnsearch." % directory]
    if not on_path(directory):
        lines.append("%s is not on %s's sys.path: to import it, set" % (directory, sys.executable))
        lines.append("    export PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH}" % directory)
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--note" and sys.argv[2]:
        print(note(sys.argv[2]))
    elif len(sys.argv) != 2 or not sys.argv[1] or sys.argv[1].startswith("--"):
        sys.exit("usage: python3 scripts/python-site.py PREFIX | --note DIR")
    else:
        print(site_dir(sys.argv[1]))
