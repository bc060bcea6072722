/* rnnsearch aer: alignment error rate, precision and recall of Pharaoh
 * alignments against gold sure and possible links (eval/aer.h). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "eval/aer.h"
#include "text/corpus.h"

#define PROG "rnnsearch aer"

static const rs_cli_option option_table[] = {
    {"help", 'h', RS_CLI_HELP, .help = "this text"},
    {0},
};

static const rs_cli_command command = {
    "aer",
    PROG,
    "usage: " PROG " GOLD HYP\n\n"
    "Scores the alignments HYP (one Pharaoh line per sentence, e.g. from\n"
    "`rnnsearch align --pairs --format pharaoh`) against GOLD, line by line:\n"
    "  AER = 1 - (|A&S| + |A&P|) / (|A| + |S|)   (Och & Ney 2003)\n"
    "  precision = |A&P| / |A|,  recall = |A&S| / |S|\n"
    "with A the hypothesis links, S the gold sure links and P the sure and\n"
    "possible ones, counted over the whole file. Links are 0-based source-target\n"
    "indices: 'i-j' sure, 'i?j' possible (in HYP both are links alike). Prints\n"
    "  AER 12.34  precision 90.00  recall 85.00  (sentences N, links A, sure S)\n"
    "in percent. When every gold link is sure, recall is the share of gold links\n"
    "found (the alignment agreement with the gold alignment).\n\n",
    NULL,
    18,
    1,
    option_table};

/* Parses line `line` (0-based) of path into g; errors name the file and line. */
static int parse_line(const char *path, const rs_lines *lines, int line, rs_gold_links *g)
{
    rs_error err;
    if (rs_gold_links_parse(lines->lines[line], g, &err)) {
        rs_cli_fail(PROG, "%s:%d: %s", path, line + 1, err.msg);
        return -1;
    }
    return 0;
}

int cmd_aer(int argc, char **argv)
{
    char none; /* no option has a field */
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, &none, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    if (argc - optind != 2)
        return rs_cli_usage_error(PROG, "give the gold file and the hypothesis file (GOLD HYP)");
    const char *gold_path = argv[optind], *hyp_path = argv[optind + 1];
    rs_lines gold = {0}, hyp = {0};
    rs_error err;
    if (rs_lines_read(gold_path, &gold, &err) || rs_lines_read(hyp_path, &hyp, &err)) {
        rs_lines_free(&gold);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    int status = RS_EXIT_FAIL;
    if (gold.count != hyp.count) {
        rs_cli_fail(PROG, "%s has %d line%s but %s has %d: one line of links per sentence in both",
                    gold_path, gold.count, RS_S(gold.count), hyp_path, hyp.count);
        goto done;
    }
    rs_aer_counts counts = {0};
    for (int i = 0; i < gold.count; i++) {
        rs_gold_links g, h;
        if (parse_line(gold_path, &gold, i, &g))
            goto done;
        if (parse_line(hyp_path, &hyp, i, &h)) {
            rs_gold_links_free(&g);
            goto done;
        }
        int rc = rs_aer_add(&counts, h.links, h.count, &g, &err);
        rs_gold_links_free(&g);
        rs_gold_links_free(&h);
        if (rc) {
            rs_cli_fail(PROG, "%s", err.msg);
            goto done;
        }
    }
    if (counts.sure == 0) {
        rs_cli_fail(PROG, "%s has no sure links: nothing to measure recall and AER on", gold_path);
        goto done;
    }
    rs_aer_result r;
    rs_aer_compute(&counts, &r);
    printf("AER %.2f  precision %.2f  recall %.2f  (sentences %d, links %ld, sure %ld, "
           "possible %ld)\n",
           100 * r.aer, counts.hyp ? 100 * r.precision : 0.0, 100 * r.recall, counts.sentences,
           counts.hyp, counts.sure, counts.possible);
    status = RS_EXIT_OK;
done:
    rs_lines_free(&gold);
    rs_lines_free(&hyp);
    return status;
}
