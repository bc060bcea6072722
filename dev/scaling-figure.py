#!/usr/bin/env python3
"""Draws the scaling curve that scripts/scaling-curve.sh measured: target
tokens per second of the whole job against the number of hosts, one line per
model size and link, with the one-host rate as every line's first point, and
beside it the share of a step spent in the gradient all-reduce.

    python3 dev/scaling-figure.py build/scaling/scaling.tsv docs/scaling-curve.svg [--rate-only]

--rate-only: the links were shaped by rate alone (no tc netem in the kernel,
as scaling-curve.sh then says): the lines are labelled by rate, not delay.

Needs matplotlib (Debian: python3-matplotlib)."""

import csv
import sys


def main():
    rate_only = "--rate-only" in sys.argv[3:]
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and not rate_only):
        sys.exit("usage: scaling-figure.py SCALING.tsv OUT.svg [--rate-only]")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(sys.argv[1], encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        sys.exit("%s: no rows" % sys.argv[1])
    fig, (rate, share) = plt.subplots(1, 2, figsize=(10, 4))
    configs = sorted({r["config"] for r in rows}, key=lambda c: "SML".find(c))
    links = [l for l in dict.fromkeys(r["link"] for r in rows) if l != "none"]
    styles = ["-", "--", ":"]
    for ci, cfg in enumerate(configs):
        one = [r for r in rows if r["config"] == cfg and r["hosts"] == "1"]
        for li, link in enumerate(links):
            pts = [(1, float(one[0]["tokens_per_s"]), 0.0)] if one else []
            pts += [(int(r["hosts"]), float(r["tokens_per_s"]), float(r["allreduce_percent"]))
                    for r in rows if r["config"] == cfg and r["link"] == link]
            pts.sort()
            shown = link.split(":")[0] if rate_only else link.replace(":", " / ")
            label = "%s, %s" % (cfg, shown)
            color = "C%d" % ci
            rate.plot([p[0] for p in pts], [p[1] for p in pts], styles[li % 3], marker="o",
                      color=color, label=label)
            share.plot([p[0] for p in pts if p[0] > 1], [p[2] for p in pts if p[0] > 1],
                       styles[li % 3], marker="o", color=color, label=label)
    hosts = sorted({int(r["hosts"]) for r in rows})
    for ax in (rate, share):
        ax.set_xticks(hosts)
        ax.set_xlabel("hosts (one rank of one thread each)")
        ax.grid(True, alpha=0.3)
    rate.set_ylabel("target tokens/s of the job")
    rate.set_ylim(bottom=0)
    share.set_ylabel("all-reduce, % of a step")
    share.set_ylim(0, 100)
    share.legend(fontsize=8)
    rate.set_title("throughput")
    share.set_title("time in the gradient all-reduce")
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
