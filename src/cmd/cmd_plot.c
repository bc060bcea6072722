/* rnnsearch plot: the learning curves of a training run (models/NAME/train.log.tsv,
 * and train.loss.tsv beside it when training wrote one) as an SVG picture:
 * train and dev loss against steps, and the dev metric on a second axis when
 * it was measured. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/fileio.h"
#include "cli/output.h"
#include "cmd/commands.h"
#include "text/corpus.h"
#include "common/chart.h"
#include "eval/bylength.h"
#include "common/svg.h"
#include "model/locate.h"
#include "train/rundir.h"

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

/* The columns of the log that are drawn. */
enum { COL_STEP, COL_TRAIN, COL_DEV, COL_METRIC, COL_AER, NCOLS };
static const char *const col_names[NCOLS] = {"step", "train_loss", "dev_loss", "dev_metric", "aer"};

typedef struct {
    int count, capacity;
    double *v[NCOLS]; /* [count] each; NAN where absent */
} series;

static void series_free(series *s)
{
    for (int k = 0; k < NCOLS; k++)
        free(s->v[k]);
    memset(s, 0, sizeof *s);
}

/* Reads the TSV log: a header naming the columns (in any order) and one row
 * per evaluation. Unparsable numbers ("nan") are NAN; dev_metric < 0 means
 * not measured. */
static int read_log(const char *path, series *s, rs_error *err)
{
    rs_lines lines;
    memset(s, 0, sizeof *s);
    if (rs_lines_read(path, &lines, err))
        return -1;
    int where[NCOLS];
    if (lines.count == 0) {
        rs_lines_free(&lines);
        return rs_fail(err, "%s: empty file", path);
    }
    /* Header: the index of each wanted column. */
    for (int k = 0; k < NCOLS; k++)
        where[k] = -1;
    {
        int idx = 0;
        const char *p = lines.lines[0];
        while (1) {
            size_t n = strcspn(p, "\t");
            for (int k = 0; k < NCOLS; k++)
                if (strlen(col_names[k]) == n && !strncmp(p, col_names[k], n))
                    where[k] = idx;
            idx++;
            if (!p[n])
                break;
            p += n + 1;
        }
    }
    if (where[COL_STEP] < 0 || where[COL_TRAIN] < 0) {
        rs_lines_free(&lines);
        return rs_fail(err, "%s:1: not a training log (no 'step' and 'train_loss' columns)", path);
    }
    s->capacity = lines.count;
    for (int k = 0; k < NCOLS; k++)
        if (!(s->v[k] = rs_calloc((size_t)lines.count, sizeof(double), err))) {
            series_free(s);
            rs_lines_free(&lines);
            return -1;
        }
    for (int r = 1; r < lines.count; r++) {
        if (!lines.lines[r][0])
            continue;
        double row[NCOLS];
        for (int k = 0; k < NCOLS; k++)
            row[k] = NAN;
        int idx = 0;
        const char *p = lines.lines[r];
        while (1) {
            size_t n = strcspn(p, "\t");
            for (int k = 0; k < NCOLS; k++)
                if (where[k] == idx) {
                    char *end;
                    double v = strtod(p, &end);
                    row[k] = end == p + n && n > 0 && isfinite(v) ? v : NAN;
                }
            idx++;
            if (!p[n])
                break;
            p += n + 1;
        }
        if (isnan(row[COL_STEP])) {
            series_free(s);
            rs_lines_free(&lines);
            return rs_fail(err, "%s:%d: no step number", path, r + 1);
        }
        if (row[COL_METRIC] < 0)
            row[COL_METRIC] = NAN;
        for (int k = 0; k < NCOLS; k++)
            s->v[k][s->count] = row[k];
        s->count++;
    }
    rs_lines_free(&lines);
    if (s->count == 0) {
        series_free(s);
        return rs_fail(err, "%s: no rows yet (the log gets one per evaluation)", path);
    }
    return 0;
}

/* train.loss.tsv beside the log, when it is there and is not the log itself
 * (t stays empty otherwise). */
static int read_loss_table(const char *log, series *t, rs_error *err)
{
    const char *slash = strrchr(log, '/');
    char path[4200];
    snprintf(path, sizeof path, "%.*s" RS_LOSS_TABLE, slash ? (int)(slash - log + 1) : 0, log);
    memset(t, 0, sizeof *t);
    if (!strcmp(path, log) || access(path, F_OK))
        return 0;
    return read_log(path, t, err);
}

static void range_of(const series *s, int col, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; i < s->count; i++) {
        double v = s->v[col][i];
        if (!isnan(v)) {
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
    }
}

typedef struct {
    double left, top, width, height;
    double name_gap, name_gap2; /* from the plot's edge to the left and right axis names */
    rs_axis x, y, y2;
} frame;

/* Margins sized to the tick labels (12 px): a tick of 5, a gap of 3, the
 * widest label, a gap of 8, the rotated axis name (about 14 high), 8 more to
 * the picture's edge. So no label is cut, however long ("0.0001"). */
static double margin_for(const rs_axis *a, double *name_gap)
{
    const double label = rs_axis_label_width(a, 12.0);
    *name_gap = 8 + label + 8 + 7;
    return *name_gap + 7 + 8;
}

static double px(const frame *f, double x)
{
    return f->left + (x - f->x.lo) / (f->x.hi - f->x.lo) * f->width;
}

static double py(const frame *f, const rs_axis *y, double v)
{
    double t = y->log ? log10(v / y->lo) / log10(y->hi / y->lo) : (v - y->lo) / (y->hi - y->lo);
    return f->top + f->height - t * f->height;
}

/* One series as a polyline (broken where values are missing) with a marker
 * and a tooltip per point, unless there are more than MAX_MARKERS points
 * (a long run's training-loss table): then the line alone. */
#define MAX_MARKERS 300
static void draw_series(FILE *out, const frame *f, const series *s, int col, const rs_axis *y,
                        const char *colour, const char *dash, const char *name)
{
    int open = 0;
    for (int i = 0; i < s->count; i++) {
        double v = s->v[col][i];
        if (isnan(v) || (y->log && v <= 0)) {
            if (open)
                fputs("\"/>\n", out);
            open = 0;
            continue;
        }
        if (!open)
            fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                    colour, dash);
        fprintf(out, "%s%.1f,%.1f", open ? " " : "", px(f, s->v[COL_STEP][i]), py(f, y, v));
        open = 1;
    }
    if (open)
        fputs("\"/>\n", out);
    for (int i = 0; i < s->count && s->count <= MAX_MARKERS; i++) {
        double v = s->v[col][i];
        if (!isnan(v) && !(y->log && v <= 0))
            fprintf(out,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s at step %.0f: "
                    "%.4f</title></circle>\n",
                    px(f, s->v[COL_STEP][i]), py(f, y, v), colour, name, s->v[COL_STEP][i], v);
    }
}

/* Tick marks and labels of a y axis (left, or right), gridlines for the left. */
static void ticks_y(FILE *out, const frame *f, const rs_axis *y, int right)
{
    double value[64];
    char label[64][RS_TICK_LABEL];
    const int count = rs_axis_ticks(y, value, label, 64);
    for (int k = 0; k < count; k++) {
        double yy = py(f, y, value[k]), x = right ? f->left + f->width : f->left;
        if (!right)
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                    f->left, yy, f->left + f->width, yy);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n", x,
                yy, right ? x + 5 : x - 5, yy);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" text-anchor=\"%s\">%s</text>\n",
                right ? x + 8 : x - 8, yy, right ? "start" : "end", label[k]);
    }
}

/* The frame: the ticks of both y axes and of the step axis, the box, and the
 * axes' names. */
static void draw_axes(FILE *out, const frame *f, int log_scale, int metric, int aer)
{
    const int right = metric || aer;
    ticks_y(out, f, &f->y, 0);
    if (right)
        ticks_y(out, f, &f->y2, 1);
    double value[64];
    char label[64][RS_TICK_LABEL];
    const int count = rs_axis_ticks(&f->x, value, label, 64);
    for (int k = 0; k < count; k++) {
        double xx = px(f, value[k]), y = f->top + f->height;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                xx, y, xx, y + 5);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", xx, y + 19,
                label[k]);
    }
    fprintf(
        out,
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
        f->left, f->top, f->width, f->height);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">step</text>\n",
            f->left + f->width / 2, f->top + f->height + 42);
    fprintf(out,
            "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">loss "
            "(nats per target token%s)</text>\n",
            f->left - f->name_gap, f->top + f->height / 2, log_scale ? ", log scale" : "");
    if (right)
        fprintf(
            out,
            "<text transform=\"translate(%.1f %.1f) rotate(90)\" text-anchor=\"middle\">%s</text>\n",
            f->left + f->width + f->name_gap2, f->top + f->height / 2,
            metric && aer ? "dev metric, AER (%)"
            : aer         ? "alignment error rate (%)"
                          : "dev metric");
}

/* The legend: one row under the plot. */
static void draw_legend(FILE *out, const frame *f, int metric, int aer)
{
    const char *names[4] = {"train loss", "dev loss"}, *colours[4] = {"#1f77b4", "#d62728"};
    int entries = 2;
    if (metric)
        names[entries] = "dev metric (right)", colours[entries++] = "#2ca02c";
    if (aer)
        names[entries] = "dev AER % (right)", colours[entries++] = "#ff7f0e";
    const double ly = f->top + f->height + 64;
    double lx = f->left;
    fprintf(out, "<g font-family=\"" RS_SVG_FONTS "\" font-size=\"12\" fill=\"#222\">\n");
    for (int k = 0; k < entries; k++) {
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n",
                lx, ly, lx + 24, ly, colours[k], k >= 2 ? " stroke-dasharray=\"6 4\"" : "");
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\">%s</text>\n", lx + 30, ly,
                names[k]);
        lx += 30 + rs_text_width(names[k], 12) + 24;
    }
    fputs("</g>\n", out);
}

/* The evaluations s and, when it has rows, the training-loss table t, whose
 * train loss is then drawn instead of s's. */
static int plot(FILE *out, const series *s, const series *t, const char *title, const char *scale)
{
    frame f = {.top = 50, .width = 600, .height = 320};
    const series *train = t->count ? t : s;
    double lo, hi, lo2, hi2;
    range_of(s, COL_STEP, &lo, &hi);
    range_of(train, COL_STEP, &lo2, &hi2);
    f.x = rs_axis_nice(lo2 < lo ? lo2 : lo, hi2 > hi ? hi2 : hi, 1);
    range_of(train, COL_TRAIN, &lo, &hi);
    range_of(s, COL_DEV, &lo2, &hi2);
    lo = lo2 < lo ? lo2 : lo;
    hi = hi2 > hi ? hi2 : hi;
    int log_scale = !strcmp(scale, "log") || (!strcmp(scale, "auto") && lo > 0 && hi / lo > 100.0);
    if (log_scale && !(lo > 0 && isfinite(hi)))
        log_scale = 0; /* a zero or missing loss cannot go on a log rs_axis */
    f.y = log_scale ? rs_axis_log(lo, hi)
                    : rs_axis_nice(isfinite(lo) ? lo : 0, isfinite(hi) ? hi : 1, 1);
    range_of(s, COL_METRIC, &lo2, &hi2);
    const int metric = isfinite(lo2);
    double lo3, hi3;
    range_of(s, COL_AER, &lo3, &hi3);
    const int aer = isfinite(lo3); /* percent, on the right rs_axis with the dev metric */
    if (aer) {
        lo2 = metric && lo2 < 0 ? lo2 : 0;
        hi2 = metric && hi2 > 100 ? hi2 : 100;
    }
    const int right = metric || aer;
    if (right)
        f.y2 = rs_axis_nice(lo2, hi2 <= 1.0 ? 1.0 : hi2, 1);
    f.left = margin_for(&f.y, &f.name_gap);
    /* The step axis' last label is centred on the plot's right edge. */
    char last[RS_TICK_LABEL];
    rs_axis_label(last, sizeof last, f.x.hi, f.x.step);
    const double half = rs_text_width(last, 12.0) / 2 + 8;
    const double right_margin = right ? margin_for(&f.y2, &f.name_gap2) : half > 30 ? half : 30;
    const double width = f.left + f.width + right_margin, height = f.top + f.height + 80;
    if (rs_svg_begin(out, width, height, title))
        return -1;
    fprintf(out, "<g font-family=\"" RS_SVG_FONTS "\" font-size=\"12\" fill=\"#222\">\n");
    fprintf(out, "<text x=\"%.1f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">",
            f.left + f.width / 2);
    rs_xml_escape(out, title);
    fputs("</text>\n", out);
    draw_axes(out, &f, log_scale, metric, aer);
    fputs("</g>\n", out);
    draw_series(out, &f, train, COL_TRAIN, &f.y, "#1f77b4", "", "train loss");
    draw_series(out, &f, s, COL_DEV, &f.y, "#d62728", "", "dev loss");
    if (metric)
        draw_series(out, &f, s, COL_METRIC, &f.y2, "#2ca02c", " stroke-dasharray=\"6 4\"",
                    "dev metric");
    if (aer)
        draw_series(out, &f, s, COL_AER, &f.y2, "#ff7f0e", " stroke-dasharray=\"6 4\"", "AER");
    draw_legend(out, &f, metric, aer);
    return rs_svg_end(out);
}

/* The log the argument names: DIR/train.log.tsv, a model NAME's, or the file
 * itself. */
static void find_log(const char *arg, char *log, size_t size)
{
    struct stat st;
    if (rs_is_directory(arg))
        snprintf(log, size, "%s/" RS_TRAIN_LOG, arg);
    else if (!strchr(arg, '/') && stat(arg, &st)) {
        /* A bare NAME: where -m looks, $RNNSEARCH_MODELS/NAME then ./models/NAME
         * (a missing log is reported at the first place). */
        snprintf(log, size, "%s/%s/" RS_TRAIN_LOG, rs_models_dir(), arg);
        if (stat(log, &st) && strcmp(rs_models_dir(), "models")) {
            char local[4200];
            snprintf(local, sizeof local, "models/%s/" RS_TRAIN_LOG, arg);
            if (!stat(local, &st))
                snprintf(log, size, "%s", local);
        }
    } else
        snprintf(log, size, "%s", arg);
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
    series s;
    rs_output_rule rule;
    if (check_output(&rule, log, output, &err)) {
        rs_output_rule_free(&rule);
        return rs_cli_usage_error(PROG, "%s", err.msg);
    }
    if (read_log(log, &s, &err)) {
        rs_output_rule_free(&rule);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    series t = {0};
    rs_output out;
    int rc = read_loss_table(log, &t, &err);
    if (!rc && !(rc = rs_output_open(&out, &rule, output, &err))) {
        if (plot(out.f, &s, &t, title, scale))
            rc = rs_output_flush(&out, &err) ? -1 : rs_fail(&err, "cannot write %s", out.name);
        if (!rc)
            rc = rs_output_commit(&out, &err);
        rs_output_abort(&out);
    }
    rs_output_rule_free(&rule);
    const int evaluations = s.count, losses = t.count;
    series_free(&s);
    series_free(&t);
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
    find_log(arg, log, sizeof log);
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
