/* Learning curves in SVG (`rnnsearch plot`): train and dev loss against the
 * step, and the dev metric and the dev alignment error rate (percent) on a
 * right-hand axis when they were measured; on the axes of chart.h. The
 * numbers come from a training run's logs (train/trainlog.h). */
#ifndef RS_CURVES_H
#define RS_CURVES_H

#include <stdio.h>

/* The columns drawn. */
enum { RS_CURVE_STEP, RS_CURVE_TRAIN, RS_CURVE_DEV, RS_CURVE_METRIC, RS_CURVE_AER, RS_CURVES };

typedef struct {
    int count, capacity;
    double *v[RS_CURVES]; /* [count] each; NAN where absent */
} rs_curves;

void rs_curves_free(rs_curves *s);

/* The picture of the evaluations s and, when it has rows, of the
 * training-loss table t, whose train loss is then drawn instead of s's.
 * scale: "linear", "log" or "auto" (log when the losses span more than two
 * orders of magnitude). Returns 0, or -1 when the stream has an error. */
int rs_curves_svg(FILE *out, const rs_curves *s, const rs_curves *t, const char *title,
                  const char *scale);

#endif
