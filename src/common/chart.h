/* Line charts in SVG, shared by the training curves (`plot`) and the
 * quality-by-length figure (eval/bylength.h): axes with round ticks (1, 2 or
 * 5 times a power of ten), their labels, and a legend row. Coordinates are
 * pixels; a frame is the plotting area. */
#ifndef RS_CHART_H
#define RS_CHART_H

#include <stddef.h>
#include <stdio.h>

/* An axis from lo to hi; linear ones tick every step. */
typedef struct {
    double lo, hi, step; /* log axes: lo and hi are powers of ten, step unused */
    int log;
} rs_axis;

/* lo..hi widened to round ticks, about five of them (from 0 when from_zero
 * and lo > 0); an empty or inverted range becomes a unit one. lo and hi are
 * taken within ±1e300 (rs_axis_fraction). */
rs_axis rs_axis_nice(double lo, double hi, int from_zero);

/* From the decade below lo to the decade above hi (lo > 0; both taken
 * within 1e-300 … 1e300). */
rs_axis rs_axis_log(double lo, double hi);

/* Where v lies on the axis: 0 at lo, 1 at hi (linearly, or by its
 * logarithm). A number for every finite v: values past ±1e300 (on a log
 * axis, under 1e-300) lie where 1e300 (1e-300) does, as the axes are made
 * within those. */
double rs_axis_fraction(const rs_axis *a, double v);

/* A tick's label: as many decimals as the step needs, no "-0". */
void rs_axis_label(char *buf, size_t size, double v, double step);

/* The longest tick label, with its NUL. */
#define RS_TICK_LABEL 32

/* The ticks of an axis, at most max of them: their values and labels, low to
 * high. Linear axes: every step. Log axes: each power of ten, and 2 and 5
 * times it when the axis spans at most two decades; labelled in plain
 * decimals ("0.0001", "0.002", "50"), never with an exponent. Returns the
 * count. */
int rs_axis_ticks(const rs_axis *a, double *value, char (*label)[RS_TICK_LABEL], int max);

/* The width in px of the widest tick label at font_size (common/svg.h's
 * estimate): what a margin beside the axis must hold. */
double rs_axis_label_width(const rs_axis *a, double font_size);

/* Ten distinguishable colours (matplotlib's "tab10"), by index modulo 10. */
const char *rs_chart_colour(int i);

#endif
