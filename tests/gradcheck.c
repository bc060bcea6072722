#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"

void gradcheck_expect(const char *what, gradcheck_result r, double tol)
{
    if (r.worst > tol || r.non_finite)
        fprintf(stderr, "%s: worst error %.3g at %zu (analytic %.6g, numeric %.6g)\n", what,
                r.worst, r.worst_index, r.analytic, r.numeric);
    ck_assert_msg(!r.non_finite, "%s: non-finite value", what);
    ck_assert_msg(r.checked > 0, "%s: nothing checked", what);
    ck_assert_msg(r.worst <= tol, "%s: worst relative error %.3g > %.3g", what, r.worst, tol);
}

double gradcheck_weighted_sum(const float *x, const float *w, size_t count)
{
    double s = 0.0;
    for (size_t i = 0; i < count; i++)
        s += (double)x[i] * w[i];
    return s;
}

void fill_uniform(float *x, size_t count, float scale, unsigned seed)
{
    unsigned long long state = seed * 2654435761ULL + 1;
    for (size_t i = 0; i < count; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(state >> 11) / 9007199254740992.0;
        x[i] = (float)((2.0 * u - 1.0) * scale);
    }
}

unsigned long long gradcheck_hash(const unsigned char *bytes, size_t count)
{
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < count; i++) {
        h ^= bytes[i];
        h *= 1099511628211ULL;
    }
    return h;
}

gradcheck_result gradcheck(gradcheck_loss loss, void *ctx, float *param, const float *grad,
                           size_t size, int samples, float h, double floor)
{
    return gradcheck_kinked(loss, NULL, ctx, param, grad, size, samples, h, floor);
}

/* The spacing of float32 values at |x|. */
static double float_ulp(double x)
{
    float f = (float)fabs(x);
    return (double)nextafterf(f, INFINITY) - (double)f;
}

gradcheck_result gradcheck_kinked(gradcheck_loss loss, gradcheck_signature signature, void *ctx,
                                  float *param, const float *grad, size_t size, int samples,
                                  float h, double floor)
{
    gradcheck_result res = {0};
    unsigned long long state = 12345;
    size_t count = size <= (size_t)samples ? size : (size_t)samples;
    for (size_t s = 0; s < count; s++) {
        size_t i = s;
        if (size > (size_t)samples) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            i = (size_t)((state >> 33) % size);
        }
        float saved = param[i];
        unsigned long long base = 0, sig_plus = 0, sig_minus = 0;
        if (signature) {
            loss(ctx);
            base = signature(ctx);
        }
        param[i] = saved + h;
        double plus = loss(ctx);
        if (signature)
            sig_plus = signature(ctx);
        param[i] = saved - h;
        double minus = loss(ctx);
        if (signature)
            sig_minus = signature(ctx);
        param[i] = saved;
        if (signature && (sig_plus != base || sig_minus != base)) {
            res.skipped++;
            continue;
        }
        /* Divide by the step actually taken in float. */
        double step = (double)(saved + h) - (double)(saved - h);
        double numeric = (plus - minus) / step;
        double analytic = grad[i];
        if (!isfinite(numeric) || !isfinite(analytic))
            res.non_finite = 1;
        double scale = fmax(fmax(fabs(analytic), fabs(numeric)), floor);
        double resolution = (float_ulp(plus) + float_ulp(minus)) / step;
        double err = fmax(0.0, fabs(analytic - numeric) - resolution) / scale;
        if (err > res.worst || res.checked == 0) {
            res.worst = err;
            res.worst_index = i;
            res.analytic = analytic;
            res.numeric = numeric;
        }
        res.checked++;
    }
    return res;
}

/* One central difference along dir with step eps: sets *numeric to
 * (L(θ + εd) − L(θ − εd)) / 2 and *analytic to Σ g_i (θ_i⁺ − θ_i⁻) / 2, the
 * first-order change over the steps actually taken in float. Returns 1 when
 * the signature at either end differs from base (a kink was crossed). */
static int central_difference(gradcheck_loss loss, gradcheck_signature signature, void *ctx,
                              float *param, const float *saved, const float *dir, const float *grad,
                              size_t size, float eps, unsigned long long base, double *numeric,
                              double *analytic)
{
    double dot = 0.0;
    for (size_t i = 0; i < size; i++) {
        float plus = saved[i] + eps * dir[i], minus = saved[i] - eps * dir[i];
        dot += (double)grad[i] * ((double)plus - (double)minus);
        param[i] = plus;
    }
    double loss_plus = loss(ctx);
    int crossed = signature && signature(ctx) != base;
    for (size_t i = 0; i < size; i++)
        param[i] = saved[i] - eps * dir[i];
    double loss_minus = loss(ctx);
    crossed = crossed || (signature && signature(ctx) != base);
    memcpy(param, saved, size * sizeof(float));
    *numeric = (loss_plus - loss_minus) / 2.0;
    *analytic = dot / 2.0;
    return crossed;
}

gradcheck_dir_result gradcheck_direction(gradcheck_loss loss, gradcheck_signature signature,
                                         void *ctx, float *param, const float *grad, size_t size,
                                         unsigned seed, float eps, double floor)
{
    gradcheck_dir_result res = {0};
    float *saved = malloc(size * sizeof(float)), *dir = malloc(size * sizeof(float));
    ck_assert(saved != NULL && dir != NULL);
    memcpy(saved, param, size * sizeof(float));
    fill_uniform(dir, size, 1.0f, seed);
    unsigned long long base = 0;
    if (signature) {
        loss(ctx);
        base = signature(ctx);
    }
    /* A step that changes the loss by about GRADCHECK_DIR_CHANGE: far above
     * its rounding, and no larger than needed (the ε⁴ term grows with it). */
    double slope = 0.0;
    for (size_t i = 0; i < size; i++)
        slope += (double)grad[i] * dir[i];
    if (fabs(slope) * eps > GRADCHECK_DIR_CHANGE)
        eps = (float)(GRADCHECK_DIR_CHANGE / fabs(slope));
    res.kinked = 1;
    for (int attempt = 0; attempt < GRADCHECK_DIR_HALVINGS && res.kinked; attempt++, eps *= 0.5f) {
        double n1, a1, n2, a2;
        if (central_difference(loss, signature, ctx, param, saved, dir, grad, size, eps, base, &n1,
                               &a1) ||
            central_difference(loss, signature, ctx, param, saved, dir, grad, size, 2 * eps, base,
                               &n2, &a2))
            continue;
        /* N(ε)/ε = D + cε² + O(ε⁴): (4 N(ε)/ε − N(2ε)/2ε) / 3 removes the ε² term. */
        res.numeric = (4.0 * n1 - n2 / 2.0) / (3.0 * eps);
        res.analytic = (4.0 * a1 - a2 / 2.0) / (3.0 * eps);
        res.eps = eps;
        res.kinked = 0;
    }
    loss(ctx); /* leave the context as the caller had it, at θ */
    free(saved);
    free(dir);
    res.non_finite = !isfinite(res.analytic) || !isfinite(res.numeric);
    double scale = fmax(fmax(fabs(res.analytic), fabs(res.numeric)), floor);
    res.error = fabs(res.analytic - res.numeric) / scale;
    return res;
}
