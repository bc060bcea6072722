/* rnnsearch plot: the learning curves of a training run (models/NAME/train.log.tsv,
 * and train.loss.tsv beside it when training wrote one) as an SVG picture:
 * train and dev loss against steps, and the dev metric on a second axis when
 * it was measured. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "train/output.h"
#include "cmd/commands.h"
#include "eval/bylength.h"
#include "train/rundir.h"
#include "train/trainlog.h"

#define PROG "rnnsearch plot"

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

/* --scale's values; the request holds the index. */
static const char *const scales[] = {"linear", "log", "auto", NULL};

typedef struct {
    const char *output, *title;
    int scale, by_length;
} plot_request;

#define RQ plot_request
static const rs_cli_option option_table[] = {
    {"output", 'o', RS_CLI_STRING, RS_AT(RQ, output), .value = "FILE",
     .help = "the SVG file, '-' for standard output\n"
             "(default: train.svg next to the log, the one\n"
             "name plot writes in a training run's directory);\n"
             "replaced once complete"},
    {"scale", .kind = RS_CLI_CHOICE, RS_AT(RQ, scale), .value = "S", .names = scales,
     .help = "loss axis: linear, log or auto (default: auto = log when\n"
             "the losses span more than two orders of magnitude)"},
    {"title", .kind = RS_CLI_STRING, RS_AT(RQ, title), .value = "TEXT",
     .help = "the picture's title (default: the argument)"},
    {"by-length", .kind = RS_CLI_FLAG, RS_AT(RQ, by_length),
     .help = "BLEU against source sentence length instead, one line\n"
             "per table that `rnnsearch bleu --by-length --format tsv`\n"
             "wrote (all with the same buckets), named LABEL or the\n"
             "file's name without .tsv (Bahdanau et al.'s Figure 2);\n"
             "-o defaults to standard output"},
    RS_CLI_HELP_ROW,
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "plot",
    PROG,
    "usage: " PROG " NAME|DIR|LOG.tsv [-o OUT.svg]\n"
    "       " PROG " --by-length [LABEL=]TABLE.tsv... [-o OUT.svg]\n\n"
    "Draws the learning curves of a training run from its log, DIR/train.log.tsv\n"
    "(or the .tsv file given): train loss and dev loss per target token against the\n"
    "step, and the dev metric and the dev alignment error rate (train --dev-align)\n"
    "on a right-hand axis when they were measured. A bare NAME is a model of the\n"
    "models directory, as for -m ('rnnsearch help models'). The train loss comes\n"
    "from train.loss.tsv beside the log when it is there (a row every --log-every\n"
    "steps), else from the evaluations' rows.\n\n",
    NULL,
    25,
    sizeof(plot_request),
    option_table};

int cmd_plot(int argc, char **argv)
{
    plot_request rq = {.scale = 2}; /* auto */
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, &rq, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    const char *output = rq.output, *title = rq.title, *scale = scales[rq.scale];
    const int by_length = rq.by_length;
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
