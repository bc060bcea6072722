"""Prints the directory this Python imports pure packages from for the
installation prefix PREFIX: where `make install PREFIX=…` puts the rnnsearch
package (PYTHONDIR).

    python3 scripts/python-site.py PREFIX

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


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1]:
        sys.exit("usage: python3 scripts/python-site.py PREFIX")
    print(site_dir(sys.argv[1]))
