/* Learning curves in SVG (see curves.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/chart.h"
#include "common/curves.h"
#include "common/svg.h"

void rs_curves_free(rs_curves *s)
{
    for (int k = 0; k < RS_CURVES; k++)
        free(s->v[k]);
    memset(s, 0, sizeof *s);
}

static void range_of(const rs_curves *s, int col, double *lo, double *hi)
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
    return f->left + rs_axis_fraction(&f->x, x) * f->width;
}

static double py(const frame *f, const rs_axis *y, double v)
{
    return f->top + f->height - rs_axis_fraction(y, v) * f->height;
}

/* One series as a polyline (broken where values are missing) with a marker
 * and a tooltip per point, unless there are more than MAX_MARKERS points
 * (a long run's training-loss table): then the line alone. */
#define MAX_MARKERS 300
static void draw_series(FILE *out, const frame *f, const rs_curves *s, int col, const rs_axis *y,
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
        fprintf(out, "%s%.1f,%.1f", open ? " " : "", px(f, s->v[RS_CURVE_STEP][i]), py(f, y, v));
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
                    px(f, s->v[RS_CURVE_STEP][i]), py(f, y, v), colour, name,
                    s->v[RS_CURVE_STEP][i], v);
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

int rs_curves_svg(FILE *out, const rs_curves *s, const rs_curves *t, const char *title,
                  const char *scale)
{
    frame f = {.top = 50, .width = 600, .height = 320};
    const rs_curves *train = t->count ? t : s;
    double lo, hi, lo2, hi2;
    range_of(s, RS_CURVE_STEP, &lo, &hi);
    range_of(train, RS_CURVE_STEP, &lo2, &hi2);
    f.x = rs_axis_nice(lo2 < lo ? lo2 : lo, hi2 > hi ? hi2 : hi, 1);
    range_of(train, RS_CURVE_TRAIN, &lo, &hi);
    range_of(s, RS_CURVE_DEV, &lo2, &hi2);
    lo = lo2 < lo ? lo2 : lo;
    hi = hi2 > hi ? hi2 : hi;
    int log_scale = !strcmp(scale, "log") || (!strcmp(scale, "auto") && lo > 0 && hi / lo > 100.0);
    if (log_scale && !(lo > 0 && isfinite(hi)))
        log_scale = 0; /* a zero or missing loss cannot go on a log rs_axis */
    f.y = log_scale ? rs_axis_log(lo, hi)
                    : rs_axis_nice(isfinite(lo) ? lo : 0, isfinite(hi) ? hi : 1, 1);
    range_of(s, RS_CURVE_METRIC, &lo2, &hi2);
    const int metric = isfinite(lo2);
    double lo3, hi3;
    range_of(s, RS_CURVE_AER, &lo3, &hi3);
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
    if (rs_svg_chart_begin(out, width, height, title, f.left + f.width / 2))
        return -1;
    draw_axes(out, &f, log_scale, metric, aer);
    fputs("</g>\n", out);
    draw_series(out, &f, train, RS_CURVE_TRAIN, &f.y, "#1f77b4", "", "train loss");
    draw_series(out, &f, s, RS_CURVE_DEV, &f.y, "#d62728", "", "dev loss");
    if (metric)
        draw_series(out, &f, s, RS_CURVE_METRIC, &f.y2, "#2ca02c", " stroke-dasharray=\"6 4\"",
                    "dev metric");
    if (aer)
        draw_series(out, &f, s, RS_CURVE_AER, &f.y2, "#ff7f0e", " stroke-dasharray=\"6 4\"", "AER");
    draw_legend(out, &f, metric, aer);
    return rs_svg_end(out);
}
