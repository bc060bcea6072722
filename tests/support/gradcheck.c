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

/* Sets param to saved + t·dir (in float) and returns the loss there; *sig
 * gets its signature (0 without one). */
static double loss_at(gradcheck_loss loss, gradcheck_signature signature, void *ctx, float *param,
                      const float *saved, const float *dir, size_t size, float t,
                      unsigned long long *sig)
{
    for (size_t i = 0; i < size; i++)
        param[i] = saved[i] + t * dir[i];
    double value = loss(ctx);
    *sig = signature ? signature(ctx) : 0;
    return value;
}

enum { FIT_TERMS = GRADCHECK_DIR_DEGREE + 1, FIT_POINTS = 2 * GRADCHECK_DIR_POINTS + 1 };

/* Inverts the symmetric positive definite a[n][n] in place (Gauss–Jordan
 * with partial pivoting, in double). Returns -1 when it is singular. */
static int invert(double a[FIT_TERMS][FIT_TERMS])
{
    double inv[FIT_TERMS][FIT_TERMS] = {{0}};
    for (int i = 0; i < FIT_TERMS; i++)
        inv[i][i] = 1.0;
    for (int c = 0; c < FIT_TERMS; c++) {
        int pivot = c;
        for (int r = c + 1; r < FIT_TERMS; r++)
            if (fabs(a[r][c]) > fabs(a[pivot][c]))
                pivot = r;
        if (a[pivot][c] == 0.0)
            return -1;
        for (int k = 0; k < FIT_TERMS; k++) {
            double t = a[c][k];
            a[c][k] = a[pivot][k], a[pivot][k] = t;
            t = inv[c][k];
            inv[c][k] = inv[pivot][k], inv[pivot][k] = t;
        }
        const double p = a[c][c];
        for (int k = 0; k < FIT_TERMS; k++)
            a[c][k] /= p, inv[c][k] /= p;
        for (int r = 0; r < FIT_TERMS; r++) {
            if (r == c)
                continue;
            const double f = a[r][c];
            for (int k = 0; k < FIT_TERMS; k++)
                a[r][k] -= f * a[c][k], inv[r][k] -= f * inv[c][k];
        }
    }
    memcpy(a, inv, sizeof inv);
    return 0;
}

/* Least squares of y[k] at u_k = k / POINTS (k = −POINTS … POINTS) by
 * Σ_j β_j u^j, j ≤ DEGREE: *slope = β_1, *se its standard error
 * σ̂ √((XᵀX)⁻¹)₁₁ with σ̂² = RSS / (points − terms), σ̂ at least sigma_floor. */
static int fit_slope(const double *y, double sigma_floor, double *slope, double *se)
{
    double x[FIT_POINTS][FIT_TERMS], xtx[FIT_TERMS][FIT_TERMS] = {{0}}, xty[FIT_TERMS] = {0};
    for (int k = 0; k < FIT_POINTS; k++) {
        const double u = (double)(k - GRADCHECK_DIR_POINTS) / GRADCHECK_DIR_POINTS;
        double power = 1.0;
        for (int j = 0; j < FIT_TERMS; j++, power *= u)
            x[k][j] = power;
        for (int i = 0; i < FIT_TERMS; i++) {
            xty[i] += x[k][i] * y[k];
            for (int j = 0; j < FIT_TERMS; j++)
                xtx[i][j] += x[k][i] * x[k][j];
        }
    }
    if (invert(xtx))
        return -1;
    double beta[FIT_TERMS] = {0};
    for (int i = 0; i < FIT_TERMS; i++)
        for (int j = 0; j < FIT_TERMS; j++)
            beta[i] += xtx[i][j] * xty[j];
    double rss = 0.0;
    for (int k = 0; k < FIT_POINTS; k++) {
        double fitted = 0.0;
        for (int j = 0; j < FIT_TERMS; j++)
            fitted += beta[j] * x[k][j];
        rss += (y[k] - fitted) * (y[k] - fitted);
    }
    const double sigma = fmax(sqrt(rss / (FIT_POINTS - FIT_TERMS)), sigma_floor);
    *slope = beta[1];
    *se = sigma * sqrt(xtx[1][1]);
    return 0;
}

/* The fit at step eps: 0 and the slope per unit t, or 1 when a point's
 * signature differs from base (a kink lies within ±eps). */
static int fit_along(gradcheck_loss loss, gradcheck_signature signature, void *ctx, float *param,
                     const float *saved, const float *dir, size_t size, float eps,
                     unsigned long long base, double loss_at_theta, double *slope, double *se)
{
    double y[FIT_POINTS];
    for (int k = 0; k < FIT_POINTS; k++) {
        unsigned long long sig;
        const float t = eps * (float)(k - GRADCHECK_DIR_POINTS) / GRADCHECK_DIR_POINTS;
        y[k] = loss_at(loss, signature, ctx, param, saved, dir, size, t, &sig) - loss_at_theta;
        if (signature && sig != base)
            return 1;
    }
    /* The loss is known to no better than half a float32 unit at its value. */
    const double known = 0.5 * float_ulp(loss_at_theta);
    if (fit_slope(y, known, slope, se))
        return 1;
    *slope /= eps;
    *se /= eps;
    return 0;
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
    const double at_theta = loss(ctx);
    const unsigned long long base = signature ? signature(ctx) : 0;
    double slope = 0.0;
    for (size_t i = 0; i < size; i++)
        slope += (double)grad[i] * dir[i];
    res.analytic = slope;
    /* A step that changes the loss by about GRADCHECK_DIR_CHANGE: far above
     * its rounding, and no larger than needed (truncation grows with it). */
    if (fabs(slope) * eps > GRADCHECK_DIR_CHANGE)
        eps = (float)(GRADCHECK_DIR_CHANGE / fabs(slope));
    res.kinked = 1;
    for (int attempt = 0; attempt < GRADCHECK_DIR_HALVINGS && res.kinked; attempt++, eps *= 0.5f)
        if (!fit_along(loss, signature, ctx, param, saved, dir, size, eps, base, at_theta,
                       &res.numeric, &res.se)) {
            res.eps = eps;
            res.kinked = 0;
        }
    memcpy(param, saved, size * sizeof(float));
    loss(ctx); /* leave the context as the caller had it, at θ */
    free(saved);
    free(dir);
    res.non_finite = !isfinite(res.analytic) || !isfinite(res.numeric) || !isfinite(res.se);
    res.bound = GRADCHECK_DIR_Z * res.se + GRADCHECK_DIR_REL * fabs(res.analytic);
    const double scale = fmax(fmax(fabs(res.analytic), fabs(res.numeric)), floor);
    res.error = fabs(res.analytic - res.numeric) / scale;
    res.power = fabs(res.analytic) > 0.0 ? res.bound / fabs(res.analytic) : INFINITY;
    return res;
}

int gradcheck_direction_holds(const gradcheck_dir_result *r)
{
    return !r->kinked && !r->non_finite && fabs(r->analytic - r->numeric) <= r->bound;
}

unsigned gradcheck_seed(unsigned a, unsigned b, unsigned c)
{
    static unsigned long long base;
    static int read;
    if (!read) {
        const char *s = getenv("RNNSEARCH_GRADCHECK_SEED");
        base = s && *s ? strtoull(s, NULL, 10) : 1;
        read = 1;
    }
    unsigned long long h = base * 0x9e3779b97f4a7c15ULL;
    const unsigned parts[] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        h ^= parts[i] + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
    }
    return (unsigned)(h >> 32);
}
