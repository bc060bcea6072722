/* Line charts in SVG (see chart.h). */
#include <math.h>
#include <stdio.h>

#include "common/chart.h"

rs_axis rs_axis_nice(double lo, double hi, int from_zero)
{
    if (from_zero && lo > 0)
        lo = 0;
    if (!(hi > lo))
        hi = lo + (lo != 0 ? fabs(lo) : 1.0);
    double raw = (hi - lo) / 5.0, mag = pow(10.0, floor(log10(raw))), f = raw / mag;
    double step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
    rs_axis a = {floor(lo / step + 1e-9) * step, ceil(hi / step - 1e-9) * step, step, 0};
    return a;
}

rs_axis rs_axis_log(double lo, double hi)
{
    rs_axis a = {pow(10.0, floor(log10(lo) + 1e-9)), pow(10.0, ceil(log10(hi) - 1e-9)), 0.0, 1};
    if (a.hi <= a.lo)
        a.hi = a.lo * 10.0;
    return a;
}

void rs_axis_label(char *buf, size_t size, double v, double step)
{
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) >= 1e5 && step >= 1)
        snprintf(buf, size, "%.3g", v);
    else
        snprintf(buf, size, "%.*f", decimals, fabs(v) < step * 1e-9 ? 0.0 : v);
}

const char *rs_chart_colour(int i)
{
    static const char *const tab10[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    return tab10[(i % 10 + 10) % 10];
}
