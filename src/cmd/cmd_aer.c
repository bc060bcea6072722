/* rnnsearch aer: alignment error rate, precision and recall of Pharaoh
 * alignments against gold sure and possible links (eval/aer.h). */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "eval/aer.h"

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
    rs_aer_counts counts;
    rs_error err;
    if (rs_aer_files(argv[optind], argv[optind + 1], &counts, &err))
        return rs_cli_fail(PROG, "%s", err.msg);
    rs_aer_result r;
    rs_aer_compute(&counts, &r);
    printf("AER %.2f  precision %.2f  recall %.2f  (sentences %d, links %ld, sure %ld, "
           "possible %ld)\n",
           100 * r.aer, counts.hyp ? 100 * r.precision : 0.0, 100 * r.recall, counts.sentences,
           counts.hyp, counts.sure, counts.possible);
    return RS_EXIT_OK;
}
