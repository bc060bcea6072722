/* Line charts in SVG (see chart.h). */
#include <math.h>
#include <stdio.h>

#include "common/chart.h"
#include "common/svg.h"

/* Values past ±AXIS_MAX (or, on a log axis, under AXIS_MIN) are charted
 * at it, so that an axis's span, its ticks and every position on it are
 * numbers: steps of ±1e308 made a span of infinity, and x1="-nan". */
#define AXIS_MAX 1e300
#define AXIS_MIN 1e-300

static double within(double v, double lo, double hi)
{
    return v > hi ? hi : v < lo ? lo : v;
}

rs_axis rs_axis_nice(double lo, double hi, int from_zero)
{
    lo = within(lo, -AXIS_MAX, AXIS_MAX);
    hi = within(hi, -AXIS_MAX, AXIS_MAX);
    if (from_zero && lo > 0)
        lo = 0;
    /* An empty range (or one too narrow for a tenth of it to be a normal
     * number, whose logarithm is then -inf) */
    if (!(hi - lo > AXIS_MIN))
        hi = lo + (fabs(lo) > AXIS_MIN ? fabs(lo) : 1.0);
    double raw = (hi - lo) / 5.0, mag = pow(10.0, floor(log10(raw))), f = raw / mag;
    double step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
    rs_axis a = {floor(lo / step + 1e-9) * step, ceil(hi / step - 1e-9) * step, step, 0};
    return a;
}

rs_axis rs_axis_log(double lo, double hi)
{
    lo = within(lo, AXIS_MIN, AXIS_MAX);
    hi = within(hi, AXIS_MIN, AXIS_MAX);
    rs_axis a = {pow(10.0, floor(log10(lo) + 1e-9)), pow(10.0, ceil(log10(hi) - 1e-9)), 0.0, 1};
    if (a.hi <= a.lo)
        a.hi = a.lo * 10.0;
    return a;
}

double rs_axis_fraction(const rs_axis *a, double v)
{
    if (a->log) {
        v = within(v, AXIS_MIN, AXIS_MAX);
        return log10(v / a->lo) / log10(a->hi / a->lo);
    }
    v = within(v, -AXIS_MAX, AXIS_MAX);
    return (v - a->lo) / (a->hi - a->lo);
}

void rs_axis_label(char *buf, size_t size, double v, double step)
{
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) >= 1e5 && step >= 1)
        snprintf(buf, size, "%.3g", v);
    else
        snprintf(buf, size, "%.*f", decimals, fabs(v) < step * 1e-9 ? 0.0 : v);
}

int rs_axis_ticks(const rs_axis *a, double *value, char (*label)[RS_TICK_LABEL], int max)
{
    int n = 0;
    if (!a->log) {
        const int count = (int)lrint((a->hi - a->lo) / a->step) + 1;
        for (int k = 0; k < count && n < max; k++, n++) {
            value[n] = a->lo + k * a->step;
            rs_axis_label(label[n], RS_TICK_LABEL, value[n], a->step);
        }
        return n;
    }
    static const double mult[] = {1, 2, 5};
    const int lo = (int)lrint(log10(a->lo)), hi = (int)lrint(log10(a->hi));
    const int per_decade = hi - lo <= 2 ? 3 : 1;
    for (int e = lo; e <= hi; e++)
        for (int m = 0; m < per_decade && n < max && (e < hi || m == 0); m++, n++) {
            value[n] = mult[m] * pow(10.0, e);
            snprintf(label[n], RS_TICK_LABEL, "%.*f", e < 0 ? -e : 0, value[n]);
        }
    return n;
}

double rs_axis_label_width(const rs_axis *a, double font_size)
{
    double value[64], widest = 0.0;
    char label[64][RS_TICK_LABEL];
    const int n = rs_axis_ticks(a, value, label, 64);
    for (int k = 0; k < n; k++)
        if (rs_text_width(label[k], font_size) > widest)
            widest = rs_text_width(label[k], font_size);
    return widest;
}

const char *rs_chart_colour(int i)
{
    static const char *const tab10[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    return tab10[(i % 10 + 10) % 10];
}
