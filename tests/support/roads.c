#include "roads.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void roads_expect_product(const char *what, const float *y0, const float *y1, const float *x,
                          const float *W, int w_stride, const float *y_before, int rows, int out,
                          int K)
{
    const double u = ldexp(1.0, -24), gamma = K * u / (1.0 - K * u);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double magnitude = 0.0;
            for (int k = 0; k < K; k++)
                magnitude += fabs((double)x[(size_t)r * K + k] * W[(size_t)o * w_stride + k]);
            const size_t i = (size_t)r * out + o;
            /* β·y adds one rounding of the sum's size at each road. */
            const double added = y_before ? 2.0 * u * (magnitude + fabs(y_before[i])) : 0.0;
            const double bound = 2.0 * gamma * magnitude + added;
            const double diff = fabs((double)y0[i] - y1[i]);
            if (getenv("RNNSEARCH_ROADS_REPORT") && diff > 0.5 * bound)
                fprintf(stderr, "roads: %s: [%d,%d] at %.2g of its bound\n", what, r, o,
                        diff / bound);
            ck_assert_msg(diff <= bound, "%s: [%d,%d] differs by %.3g, beyond rounding's %.3g",
                          what, r, o, diff, bound);
        }
}

void roads_expect_close(const char *what, const float *a, const float *b, size_t count)
{
    double scale = 0.0, worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < count; i++)
        scale = fmax(scale, fmax(fabs(a[i]), fabs(b[i])));
    for (size_t i = 0; i < count && !isnan(worst); i++) {
        const double diff = fabs((double)a[i] - b[i]);
        if (!(diff <= worst)) { /* a NaN is the worst, and stays so */
            worst = diff;
            at = i;
        }
    }
    if (getenv("RNNSEARCH_ROADS_REPORT"))
        fprintf(stderr, "roads: %s: %.3g of the largest magnitude\n", what,
                scale > 0.0 ? worst / scale : worst);
    ck_assert_msg(worst <= ROADS_REL * scale,
                  "%s: entry %zu differs by %.3g (%.9g and %.9g), beyond %.0e of the largest "
                  "magnitude %.3g",
                  what, at, worst, count ? a[at] : 0.0, count ? b[at] : 0.0, ROADS_REL, scale);
}

void roads_expect_close_value(const char *what, double a, double b)
{
    const double diff = fabs(a - b), scale = fmax(fabs(a), fabs(b));
    if (getenv("RNNSEARCH_ROADS_REPORT"))
        fprintf(stderr, "roads: %s: %.3g of its magnitude\n", what,
                scale > 0.0 ? diff / scale : diff);
    ck_assert_msg(diff <= ROADS_REL * scale,
                  "%s: %.17g and %.17g differ by %.3g, beyond %.0e of it", what, a, b, diff,
                  ROADS_REL);
}
