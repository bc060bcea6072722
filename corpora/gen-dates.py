#!/usr/bin/env python3
"""Generate the rnnsearch "dates" toy corpus.

Each line is  SOURCE<TAB>TARGET  where SOURCE is a calendar date written in
one of several English surface forms and TARGET is the same date in ISO 8601
form YYYY-MM-DD, e.g.

    Saturday, 21 November 2026	2026-11-21
    11/21/26	2026-11-21

Every surface form is unambiguous, so the mapping from source to target is a
function:
  * slashes with the year last are always US order:   M/D/YYYY, M/D/YY
  * slashes with the year first are always Y/M/D:     YYYY/MM/DD
  * dots are always European order:                   D.M.YYYY, DD.MM.YY
  * a hyphen form always uses a month name:           21-Nov-2026
There is no D/M/Y slash form.

Dates range over 1950-01-01 .. 2049-12-31.  A two-digit year YY means
19YY when YY >= 50 and 20YY when YY <= 49.

Weekday names, when present, are the true weekday of the date.

The script uses only the standard library and is deterministic for a given
--seed.  It checks its own output (every source is parsed back by an
independent parser and must give the target; no source string occurs twice,
in particular not in two splits) before writing anything.

Gold alignments (dev.align, test.align; line n aligns line n of the .tsv) are
Pharaoh links "i-j" (sure) and "i?j" (possible), 0-based, between the tokens of
rnnsearch's word tokenizer (runs of letters and digits; every other
character its own token): the target 2026-11-21 is the five tokens
"2026 - 11 - 21". The year, month and day tokens are linked (sure) to the
source tokens the independent parser below reads them from; a hyphen is
possibly linked to the source tokens of the two fields it separates and to
the source's own separators (/ . -); a month's abbreviation dot is possibly
linked to the month. Weekdays, "the", "of" and commas are linked to nothing.

Usage:  python3 corpora/gen-dates.py [--seed N] [--out DIR]
                                     [--train N] [--dev N] [--test N]
        python3 corpora/gen-dates.py --check [--out DIR]
"""

import argparse
import datetime
import os
import random
import re
import sys

DEFAULT_SEED = 20260521
FIRST = datetime.date(1950, 1, 1)
LAST = datetime.date(2049, 12, 31)

MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]
MONS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
        "Oct", "Nov", "Dec"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
            "Saturday", "Sunday"]
WDYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def ordinal(n):
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return "%d%s" % (n, suffix)


def two_digit_year(yy):
    """The documented rule: 50..99 -> 1950..1999, 00..49 -> 2000..2049."""
    return 1900 + yy if yy >= 50 else 2000 + yy


# ---------------------------------------------------------------- forms
# Each form is (name, has_words, function(date, rng) -> str).  Forms that
# contain words are later put in Title case (as written), lower case or
# upper case.  Numeric forms sometimes zero-pad day and month.

def pad(rng):
    return "%02d" if rng.random() < 0.5 else "%d"


def f_weekday_d_month_y(d, rng):
    return "%s, %d %s %d" % (WEEKDAYS[d.weekday()], d.day, MONTHS[d.month - 1], d.year)


def f_weekday_month_d_y(d, rng):
    return "%s, %s %d, %d" % (WEEKDAYS[d.weekday()], MONTHS[d.month - 1], d.day, d.year)


def f_d_month_y(d, rng):
    return "%d %s %d" % (d.day, MONTHS[d.month - 1], d.year)


def f_month_d_y(d, rng):
    return "%s %d, %d" % (MONTHS[d.month - 1], d.day, d.year)


def f_mon_d_y(d, rng):
    return "%s %d, %d" % (MONS[d.month - 1], d.day, d.year)


def f_d_mon_dot_y(d, rng):
    return "%d %s. %d" % (d.day, MONS[d.month - 1], d.year)


def f_d_mon_y(d, rng):
    return "%d %s %d" % (d.day, MONS[d.month - 1], d.year)


def f_wdy_d_mon_y(d, rng):
    return "%s %d %s %d" % (WDYS[d.weekday()], d.day, MONS[d.month - 1], d.year)


def f_the_ord_of_month_y(d, rng):
    return "the %s of %s %d" % (ordinal(d.day), MONTHS[d.month - 1], d.year)


def f_ord_month_y(d, rng):
    return "%s %s %d" % (ordinal(d.day), MONTHS[d.month - 1], d.year)


def f_d_hyphen_mon_y(d, rng):
    return "%d-%s-%d" % (d.day, MONS[d.month - 1], d.year)


def f_us_slash_yyyy(d, rng):
    p = pad(rng)
    return (p + "/" + p + "/%d") % (d.month, d.day, d.year)


def f_us_slash_yy(d, rng):
    p = pad(rng)
    return (p + "/" + p + "/%02d") % (d.month, d.day, d.year % 100)


def f_eu_dot_yyyy(d, rng):
    p = pad(rng)
    return (p + "." + p + ".%d") % (d.day, d.month, d.year)


def f_eu_dot_yy(d, rng):
    return "%02d.%02d.%02d" % (d.day, d.month, d.year % 100)


def f_ymd_slash(d, rng):
    return "%d/%02d/%02d" % (d.year, d.month, d.day)


FORMS = [
    ("weekday_d_month_y", True, f_weekday_d_month_y),   # Saturday, 21 November 2026
    ("weekday_month_d_y", True, f_weekday_month_d_y),   # Saturday, November 21, 2026
    ("d_month_y", True, f_d_month_y),                   # 21 November 2026
    ("month_d_y", True, f_month_d_y),                   # November 21, 2026
    ("mon_d_y", True, f_mon_d_y),                       # Nov 21, 2026
    ("d_mon_dot_y", True, f_d_mon_dot_y),               # 21 Nov. 2026
    ("d_mon_y", True, f_d_mon_y),                       # 21 Nov 2026
    ("wdy_d_mon_y", True, f_wdy_d_mon_y),               # Sat 21 Nov 2026
    ("the_ord_of_month_y", True, f_the_ord_of_month_y), # the 21st of November 2026
    ("ord_month_y", True, f_ord_month_y),               # 21st November 2026
    ("d_hyphen_mon_y", True, f_d_hyphen_mon_y),         # 21-Nov-2026
    ("us_slash_yyyy", False, f_us_slash_yyyy),          # 11/21/2026
    ("us_slash_yy", False, f_us_slash_yy),              # 11/21/26
    ("eu_dot_yyyy", False, f_eu_dot_yyyy),              # 21.11.2026
    ("eu_dot_yy", False, f_eu_dot_yy),                  # 21.11.26
    ("ymd_slash", False, f_ymd_slash),                  # 2026/11/21
]


def recase(s, rng):
    r = rng.random()
    if r < 0.6:
        return s                    # as written: Title case, "the"/"of" lower
    if r < 0.8:
        return s.lower()
    return s.upper()


def random_date(rng):
    span = (LAST - FIRST).days
    return FIRST + datetime.timedelta(days=rng.randint(0, span))


def make_pair(rng):
    d = random_date(rng)
    _, has_words, fn = rng.choice(FORMS)
    src = fn(d, rng)
    if has_words:
        src = recase(src, rng)
    return src, d.isoformat()


# ---------------------------------------------------------------- checking
# An independent parser: it knows nothing of FORMS, only the documented
# conventions, and must recover the target from every source.

MONTH_INDEX = {}
for _i, (_full, _abbr) in enumerate(zip(MONTHS, MONS)):
    MONTH_INDEX[_full.lower()] = _i + 1
    MONTH_INDEX[_abbr.lower()] = _i + 1
WEEKDAY_INDEX = {}
for _i, (_full, _abbr) in enumerate(zip(WEEKDAYS, WDYS)):
    WEEKDAY_INDEX[_full.lower()] = _i
    WEEKDAY_INDEX[_abbr.lower()] = _i

MON_RE = r"([a-z]+)\.?"
DAY_RE = r"(\d{1,2})(?:st|nd|rd|th)?"
PATTERNS = [
    # (regex, group names in order)
    (r"(?:([a-z]+),? )?" + DAY_RE + " " + MON_RE + r" (\d{4})", "w d m y"),
    (r"(?:([a-z]+),? )?" + MON_RE + " " + DAY_RE + r",? (\d{4})", "w m d y"),
    (r"the " + DAY_RE + " of " + MON_RE + r" (\d{4})", "d m y"),
    (r"(\d{1,2})-" + MON_RE + r"-(\d{4})", "d m y"),
    (r"(\d{1,2})/(\d{1,2})/(\d{4})", "m d y"),
    (r"(\d{1,2})/(\d{1,2})/(\d{2})", "m d yy"),
    (r"(\d{1,2})\.(\d{1,2})\.(\d{4})", "d m y"),
    (r"(\d{1,2})\.(\d{1,2})\.(\d{2})", "d m yy"),
    (r"(\d{4})/(\d{2})/(\d{2})", "y m d"),
]


def parse(src):
    s = src.lower()
    found = []
    for rx, names in PATTERNS:
        m = re.fullmatch(rx, s)
        if not m:
            continue
        v = dict(zip(names.split(), m.groups()))
        if v.get("w") is not None and v["w"] not in WEEKDAY_INDEX:
            continue
        month = v["m"]
        month = MONTH_INDEX.get(month) if not month.isdigit() else int(month)
        if month is None:
            continue
        year = int(v["y"]) if "y" in v else two_digit_year(int(v["yy"]))
        try:
            d = datetime.date(year, month, int(v["d"]))
        except ValueError:
            continue
        if v.get("w") is not None and WEEKDAY_INDEX[v["w"]] != d.weekday():
            raise ValueError("wrong weekday in %r" % src)
        found.append(d)
    if len(set(found)) != 1:
        raise ValueError("%r parses as %r" % (src, found))
    return found[0]


# ---------------------------------------------------------------- alignments

TOKEN_RE = re.compile(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]")


def tokens(text):
    """rnnsearch's word tokenizer on these corpora: (start, end) of each token."""
    return [m.span() for m in TOKEN_RE.finditer(text)]


def gold_links(src, tgt):
    """Pharaoh links between the tokens of src and of tgt (YYYY - MM - DD)."""
    s = src.lower()
    for rx, names in PATTERNS:
        m = re.fullmatch(rx, s)
        if m and parse(src).isoformat() == tgt:
            break
    else:
        raise ValueError("no pattern reads %r" % src)
    toks = tokens(src)
    fields = {}
    for k, name in enumerate(names.split()):
        if name == "w" or m.group(k + 1) is None:
            continue
        a, b = m.span(k + 1)
        fields[name[0]] = [i for i, (x, y) in enumerate(toks) if x < b and a < y]
    seps = [i for i, (x, y) in enumerate(toks) if src[x:y] in "/.-" and
            not (i > 0 and i - 1 in fields["m"] and src[x:y] == ".")]
    month_dot = [i for i, (x, y) in enumerate(toks)
                 if src[x:y] == "." and i > 0 and i - 1 in fields["m"] and not src[toks[i - 1][0]].isdigit()]
    sure = {(i, 0) for i in fields["y"]} | {(i, 2) for i in fields["m"]} | {(i, 4) for i in fields["d"]}
    possible = ({(i, 1) for i in fields["y"] + fields["m"] + seps} |
                {(i, 3) for i in fields["m"] + fields["d"] + seps} |
                {(i, 2) for i in month_dot}) - sure
    links = sorted(sure | possible, key=lambda l: (l[1], l[0]))
    return " ".join("%d%s%d" % (i, "-" if (i, j) in sure else "?", j) for i, j in links)


ALIGNED = ["dev", "test"]


def check(splits):
    seen = {}
    for name, pairs in splits.items():
        for src, tgt in pairs:
            if "\t" in src or "\n" in src:
                raise ValueError("bad character in %r" % src)
            if src in seen:
                raise ValueError("%r occurs in %s and %s" % (src, seen[src], name))
            seen[src] = name
            d = parse(src)
            if d.isoformat() != tgt or not (FIRST <= d <= LAST):
                raise ValueError("%r -> %s, expected %s" % (src, d, tgt))


# ---------------------------------------------------------------- main

def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t")) for line in f]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "dates"))
    ap.add_argument("--train", type=int, default=20000)
    ap.add_argument("--dev", type=int, default=1000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--check", action="store_true",
                    help="only verify existing files in --out")
    args = ap.parse_args()
    names = ["train", "dev", "test"]

    if args.check:
        splits = {n: read_tsv(os.path.join(args.out, n + ".tsv")) for n in names}
        check(splits)
        for n in names:
            print("%s: %d pairs ok" % (n, len(splits[n])))
        for n in ALIGNED:
            with open(os.path.join(args.out, n + ".align"), encoding="utf-8") as f:
                lines = [line.rstrip("\n") for line in f]
            want = [gold_links(src, tgt) for src, tgt in splits[n]]
            if lines != want:
                bad = next(k for k in range(len(want)) if k >= len(lines) or lines[k] != want[k])
                raise ValueError("%s.align:%d differs from the generator's links" % (n, bad + 1))
            print("%s.align: %d lines ok" % (n, len(lines)))
        return 0

    rng = random.Random(args.seed)
    sizes = {"train": args.train, "dev": args.dev, "test": args.test}
    total = sum(sizes.values())
    pairs, seen = [], set()
    while len(pairs) < total:
        src, tgt = make_pair(rng)
        if src not in seen:
            seen.add(src)
            pairs.append((src, tgt))
    # pairs are already in random order; slice them into the splits.
    splits, at = {}, 0
    for n in names:
        splits[n] = pairs[at:at + sizes[n]]
        at += sizes[n]
    check(splits)

    os.makedirs(args.out, exist_ok=True)
    for n in names:
        with open(os.path.join(args.out, n + ".tsv"), "w", encoding="utf-8",
                  newline="\n") as f:
            for src, tgt in splits[n]:
                f.write("%s\t%s\n" % (src, tgt))
        print("%s: %d pairs" % (n, len(splits[n])))
    for n in ALIGNED:
        with open(os.path.join(args.out, n + ".align"), "w", encoding="utf-8",
                  newline="\n") as f:
            for src, tgt in splits[n]:
                f.write(gold_links(src, tgt) + "\n")
        print("%s.align: %d lines" % (n, len(splits[n])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
