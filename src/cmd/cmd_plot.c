/* rnnsearch plot: the learning curves of a training run (models/NAME/train.log.tsv,
 * and train.loss.tsv beside it when training wrote one) as an SVG picture:
 * train and dev loss against steps, and the dev metric on a second axis when
 * it was measured. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cmd/commands.h"
#include "eval/bylength.h"
#include "train/rundir.h"
#include "train/trainlog.h"

#define PROG "rnnsearch plot"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " NAME|DIR|LOG.tsv [-o OUT.svg]\n"
            "       " PROG " --by-length [LABEL=]TABLE.tsv... [-o OUT.svg]\n\n"
            "Draws the learning curves of a training run from its log, DIR/train.log.tsv\n"
            "(or the .tsv file given): train loss and dev loss per target token against the\n"
            "step, and the dev metric and the dev alignment error rate (train --dev-align)\n"
            "on a right-hand axis when they were measured. A bare NAME is a model of the\n"
            "models directory, as for -m ('rnnsearch help models'). The train loss comes\n"
            "from train.loss.tsv beside the log when it is there (a row every --log-every\n"
            "steps), else from the evaluations' rows.\n\n"
            "  -o, --output FILE      the SVG file, '-' for standard output\n"
            "                         (default: train.svg next to the log, the one\n"
            "                         name plot writes in a training run's directory);\n"
            "                         replaced once complete\n"
            "  --scale S              loss axis: linear, log or auto (default: auto = log when\n"
            "                         the losses span more than two orders of magnitude)\n"
            "  --title TEXT           the picture's title (default: the argument)\n"
            "  --by-length            BLEU against source sentence length instead, one line\n"
            "                         per table that `rnnsearch bleu --by-length --format tsv`\n"
            "                         wrote (all with the same buckets), named LABEL or the\n"
            "                         file's name without .tsv (Bahdanau et al.'s Figure 2);\n"
            "                         -o defaults to standard output\n"
            "  -h, --help             this help\n");
}

/* Checks output by the rule of what plot writes (rule, initialised here): its
 * own picture may go beside a run's log (train.svg, the default); nothing else
 * goes there, nor over the files it reads. */
static int check_output(rs_output_rule *rule, const char *log, const char *output, rs_error *err)
{
    char loss[4200];
    const char *slash = strrchr(log, '/');
    snprintf(loss, sizeof loss, "%.*s" RS_LOSS_TABLE, slash ? (int)(slash - log + 1) : 0, log);
    rs_output_rule_init(rule, RS_OUTPUT_TEXT, "train.svg");
    if (rs_output_add_input(rule, log, err) || rs_output_add_input(rule, loss, err) ||
        rs_output_check(rule, output, err))
        return -1;
    return 0;
}

/* --by-length: the tables (LABEL=FILE or FILE), their figure into output. */
static int plot_by_length(int count, char **tables, const char *output, const char *title)
{
    if (count < 1 || count > 10)
        return rs_cli_usage_error(PROG, "--by-length takes 1 to 10 tables, not %d", count);
    rs_length_buckets b;
    double bleu[10][RS_LENGTH_BUCKETS_MAX];
    long long sentences[10][RS_LENGTH_BUCKETS_MAX];
    char names[10][256];
    rs_length_line lines[10];
    rs_output_rule rule;
    rs_output_rule_init(&rule, RS_OUTPUT_TEXT, NULL);
    rs_error err;
    int rc = 0;
    for (int i = 0; i < count && !rc; i++) {
        const char *eq = strchr(tables[i], '='), *path = eq ? eq + 1 : tables[i];
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        size_t len = eq ? (size_t)(eq - tables[i]) : strlen(base);
        if (!eq && rs_cli_ends_with(base, ".tsv"))
            len -= 4;
        snprintf(names[i], sizeof names[i], "%.*s", (int)len, eq ? tables[i] : base);
        rs_length_buckets bi;
        rc = rs_output_add_input(&rule, path, &err) ||
             rs_by_length_read_tsv(path, i ? &bi : &b, bleu[i], sentences[i], &err);
        if (!rc && i && (bi.count != b.count || memcmp(bi.lower, b.lower, sizeof b.lower)))
            rc = rs_fail(&err, "%s has other buckets than %s", path, tables[0]);
        lines[i] = (rs_length_line){names[i], bleu[i], sentences[i]};
    }
    rs_output out;
    if (!rc && !(rc = rs_output_open(&out, &rule, output, &err))) {
        if (rs_by_length_svg(out.f, &b, lines, count, title))
            rc = rs_output_flush(&out, &err) ? -1 : rs_fail(&err, "cannot write %s", out.name);
        if (!rc)
            rc = rs_output_commit(&out, &err);
        rs_output_abort(&out);
    }
    rs_output_rule_free(&rule);
    if (rc)
        return rs_cli_fail(PROG, "%s", err.msg);
    if (output && strcmp(output, "-"))
        fprintf(stderr, PROG ": wrote %s (%d systems, %d buckets)\n", output, count, b.count);
    return RS_EXIT_OK;
}

/* The learning curves of the log into output. */
static int plot_log(const char *log, const char *output, const char *title, const char *scale)
{
    rs_error err;
    rs_curves s;
    rs_output_rule rule;
    if (check_output(&rule, log, output, &err)) {
        rs_output_rule_free(&rule);
        return rs_cli_usage_error(PROG, "%s", err.msg);
    }
    if (rs_train_log_read(log, &s, &err)) {
        rs_output_rule_free(&rule);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    rs_curves t = {0};
    rs_output out;
    int rc = rs_train_loss_read(log, &t, &err);
    if (!rc && !(rc = rs_output_open(&out, &rule, output, &err))) {
        if (rs_curves_svg(out.f, &s, &t, title, scale))
            rc = rs_output_flush(&out, &err) ? -1 : rs_fail(&err, "cannot write %s", out.name);
        if (!rc)
            rc = rs_output_commit(&out, &err);
        rs_output_abort(&out);
    }
    rs_output_rule_free(&rule);
    const int evaluations = s.count, losses = t.count;
    rs_curves_free(&s);
    rs_curves_free(&t);
    if (rc)
        return rs_cli_fail(PROG, "%s", err.msg);
    if (strcmp(output, "-"))
        fprintf(stderr, PROG ": wrote %s (%d evaluation%s, %d training-loss row%s)\n", output,
                evaluations, RS_S(evaluations), losses, RS_S(losses));
    return RS_EXIT_OK;
}

int cmd_plot(int argc, char **argv)
{
    enum { OPT_TITLE = RS_CLI_OPT, OPT_SCALE, OPT_BY_LENGTH };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"by-length", no_argument, NULL, OPT_BY_LENGTH},
        {"scale", required_argument, NULL, OPT_SCALE},
        {"title", required_argument, NULL, OPT_TITLE},
        {0},
    };
    static const char *const scales[] = {"linear", "log", "auto"};
    const char *output = NULL, *title = NULL, *scale = "auto";
    int by_length = 0;
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "o:", opts);
    int c, which;
    while ((c = rs_cli_next(&args)) != -1) {
        switch (c) {
        case 'h': usage(stdout); return RS_EXIT_OK;
        case 'o':
            if (rs_cli_once(PROG, "-o/--output", &output, optarg))
                return RS_EXIT_USAGE;
            break;
        case OPT_TITLE: title = optarg; break;
        case OPT_BY_LENGTH: by_length = 1; break;
        case OPT_SCALE:
            if (rs_cli_choice(PROG, "--scale", optarg, scales, 3, &which))
                return RS_EXIT_USAGE;
            scale = scales[which];
            break;
        default: return RS_EXIT_USAGE;
        }
    }
    if (by_length)
        return plot_by_length(argc - optind, argv + optind, output,
                              title ? title : "BLEU by source sentence length");
    if (argc - optind != 1)
        return rs_cli_usage_error(PROG, "give one model NAME, directory or log file");
    const char *arg = argv[optind];
    char log[4200], out_path[4200];
    rs_train_log_path(arg, log, sizeof log);
    if (!output) {
        /* train.svg in the log's directory. */
        const char *slash = strrchr(log, '/');
        snprintf(out_path, sizeof out_path, "%.*strain.svg", slash ? (int)(slash - log + 1) : 0,
                 log);
        output = out_path;
    }
    if (!title)
        title = arg;

    return plot_log(log, output, title, scale);
}
