/* exp by range reduction: x = n·ln2 + r, |r| ≤ ln2/2, exp(x) = 2^n · e^r with
 * e^r from its Taylor series to r^7 (truncation < 2^-27 relative). ln2 is
 * split in two (hi with 9 significant bits, so n·hi is exact) to keep r exact
 * to float precision. tanh(|x|) = e / (e + 2) with e = expm1(2|x|), where
 * expm1(y) = 2^n · expm1(r) + (2^n − 1) and expm1(r) is its Taylor series to
 * r^8: no cancellation anywhere, so small arguments keep full relative
 * accuracy. accel/'s AVX2 and AVX-512 twins repeat these operations lane
 * by lane; the loops here are the reference, and the kernels run through one
 * table (rs_vec_kernels), these loops' until a twin is installed. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nn/vecmath.h"


static float pow2i(int n)
{
    uint32_t bits = (uint32_t)(n + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* n and r with x = n·ln2 + r, for x in [RS_VM_EXP_LO, RS_VM_EXP_HI] or [0, RS_VM_TANH_Y_MAX]. */
static float reduce(float x, float *n)
{
    *n = (x * RS_VM_LOG2E + RS_VM_ROUND_MAGIC) - RS_VM_ROUND_MAGIC;
    return (x - *n * RS_VM_LN2_HI) - *n * RS_VM_LN2_LO;
}

float rs_exp(float x)
{
    if (x != x)
        return x;
    if (x < RS_VM_EXP_LO)
        return 0.0f;
    float n, r = reduce(x > RS_VM_EXP_HI ? RS_VM_EXP_HI : x, &n);
    float p = RS_VM_C7;
    p = p * r + RS_VM_C6;
    p = p * r + RS_VM_C5;
    p = p * r + RS_VM_C4;
    p = p * r + RS_VM_C3;
    p = p * r + RS_VM_C2;
    float e = 1.0f + (r + (r * r) * p);
    return e * pow2i((int)n);
}

float rs_tanh(float x)
{
    if (x != x)
        return x;
    float y = 2.0f * (x < 0.0f ? -x : x);
    if (y > RS_VM_TANH_Y_MAX)
        y = RS_VM_TANH_Y_MAX;
    float n, r = reduce(y, &n);
    float p = RS_VM_C8;
    p = p * r + RS_VM_C7;
    p = p * r + RS_VM_C6;
    p = p * r + RS_VM_C5;
    p = p * r + RS_VM_C4;
    p = p * r + RS_VM_C3;
    p = p * r + RS_VM_C2;
    float q = r + (r * r) * p; /* expm1(r) */
    float s = pow2i((int)n);
    float e = q * s + (s - 1.0f); /* expm1(y) */
    float t = e / (e + 2.0f);
    return x < 0.0f ? -t : t;
}

float rs_sigmoid(float x)
{
    if (x != x)
        return x;
    return 1.0f / (1.0f + rs_exp(-x));
}

/* Reductions keep 8 running sums, lane k taking i ≡ k (mod 8), and add them
 * as ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)). */
float rs_fold8(const float a[8])
{
    float s0 = a[0] + a[4], s1 = a[1] + a[5], s2 = a[2] + a[6], s3 = a[3] + a[7];
    return (s0 + s2) + (s1 + s3);
}

double rs_fold8d(const double a[8])
{
    double s0 = a[0] + a[4], s1 = a[1] + a[5], s2 = a[2] + a[6], s3 = a[3] + a[7];
    return (s0 + s2) + (s1 + s3);
}

static void vexp_portable(float *y, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = rs_exp(x[i]);
}

static void vtanh_portable(float *y, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = rs_tanh(x[i]);
}

static void vsigmoid_portable(float *y, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = rs_sigmoid(x[i]);
}

static float vmax_portable(const float *x, size_t count)
{
    float max = x[0];
    for (size_t i = 1; i < count; i++)
        if (x[i] > max)
            max = x[i];
    return max;
}

static double vexp_shift_total_portable(const float *x, float shift, size_t count)
{
    double acc[8] = {0};
    for (size_t i = 0; i < count; i++)
        acc[i % 8] += (double)rs_exp(x[i] - shift);
    return rs_fold8d(acc);
}

static size_t vfirst_above_portable(const float *x, float add, float bound, size_t from,
                                    size_t count)
{
    for (size_t i = from; i < count; i++)
        if (!(x[i] + add <= bound))
            return i;
    return count;
}

static size_t vargmax_portable(const float *x, size_t count)
{
    size_t best = 0;
    for (size_t i = 1; i < count; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

static double vexp_shift_sum_portable(float *y, const float *x, float shift, size_t count)
{
    double acc[8] = {0};
    for (size_t i = 0; i < count; i++) {
        y[i] = rs_exp(x[i] - shift);
        acc[i % 8] += (double)y[i];
    }
    return rs_fold8d(acc);
}

static float vtanh_add_dot_portable(float *phi, const float *q, const float *key, const float *v,
                                    size_t count)
{
    float acc[8] = {0};
    for (size_t i = 0; i < count; i++) {
        phi[i] = rs_tanh(q[i] + key[i]);
        acc[i % 8] += v[i] * phi[i];
    }
    return rs_fold8(acc);
}

static void vtanh_add_dot_backward_portable(float *dq, float *dkey, float *dv, const float *phi,
                                            const float *v, float de, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        dv[k] += de * phi[k];
        float dpre = de * v[k] * (1.0f - phi[k] * phi[k]); /* through tanh */
        dq[k] += dpre;
        dkey[k] += dpre;
    }
}

static void vscale_shift_portable(float *y, float scale, float shift, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = scale * (y[i] - shift);
}

static float vdot_portable(const float *x, const float *y, size_t count)
{
    float acc[8] = {0};
    for (size_t i = 0; i < count; i++)
        acc[i % 8] += x[i] * y[i];
    return rs_fold8(acc);
}

static void vaxpy_portable(float *y, float alpha, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] += alpha * x[i];
}

static double vsumsq_portable(const float *x, size_t count)
{
    double acc[8] = {0};
    for (size_t i = 0; i < count; i++)
        acc[i % 8] += (double)x[i] * (double)x[i];
    return rs_fold8d(acc);
}

static void vweighted_sum_portable(float *y, const float *w, const float *rows, size_t stride,
                                   size_t nrows, size_t count)
{
    memset(y, 0, sizeof(float) * count);
    for (size_t j = 0; j < nrows; j++)
        vaxpy_portable(y, w[j], rows + j * stride, count);
}

static void vweighted_sum_backward_portable(float *dw, float *drows, const float *dy,
                                            const float *rows, const float *w, size_t stride,
                                            size_t nrows, size_t count)
{
    for (size_t j = 0; j < nrows; j++) {
        dw[j] = vdot_portable(dy, rows + j * stride, count);
        vaxpy_portable(drows + j * stride, w[j], dy, count);
    }
}

static void vadd_rows_portable(float *y, const float *rows, size_t stride, size_t nrows,
                               size_t count)
{
    for (size_t j = 0; j < nrows; j++)
        vaxpy_portable(y, 1.0f, rows + j * stride, count);
}

static void vgru_gates_portable(float *zr, float *rh, const float *hp, size_t n)
{
    vsigmoid_portable(zr, zr, 2 * n);
    for (size_t k = 0; k < n; k++)
        rh[k] = zr[n + k] * hp[k];
}

static void vgru_state_portable(float *h, float *g, const float *z, const float *hp, float mask,
                                size_t n)
{
    vtanh_portable(g, g, n);
    for (size_t k = 0; k < n; k++) {
        float h_new = (1.0f - z[k]) * hp[k] + z[k] * g[k];
        h[k] = mask != 0.0f ? h_new : hp[k];
    }
}

static void vgru_state_backward_portable(float *dxz, float *dxg, float *dhp, const float *z,
                                         const float *g, const float *hp, const float *dh, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        float dz = dh[k] * (g[k] - hp[k]); /* dL/dz */
        float dg = dh[k] * z[k];           /* dL/dg */
        dhp[k] += dh[k] * (1.0f - z[k]);
        dxz[k] = dz * z[k] * (1.0f - z[k]); /* through σ */
        dxg[k] = dg * (1.0f - g[k] * g[k]); /* through tanh */
    }
}

static void vgru_reset_backward_portable(float *dxr, float *dhp, const float *r, const float *hp,
                                         const float *drh, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        float dr = drh[k] * hp[k]; /* dL/dr */
        dhp[k] += drh[k] * r[k];
        dxr[k] = dr * r[k] * (1.0f - r[k]); /* through σ */
    }
}

const rs_vec_kernels rs_vec_portable = {
    .vexp = vexp_portable,
    .vtanh = vtanh_portable,
    .vsigmoid = vsigmoid_portable,
    .vmax = vmax_portable,
    .vargmax = vargmax_portable,
    .vfirst_above = vfirst_above_portable,
    .vexp_shift_sum = vexp_shift_sum_portable,
    .vexp_shift_total = vexp_shift_total_portable,
    .vtanh_add_dot = vtanh_add_dot_portable,
    .vtanh_add_dot_backward = vtanh_add_dot_backward_portable,
    .vscale_shift = vscale_shift_portable,
    .vdot = vdot_portable,
    .vaxpy = vaxpy_portable,
    .vsumsq = vsumsq_portable,
    .vweighted_sum = vweighted_sum_portable,
    .vweighted_sum_backward = vweighted_sum_backward_portable,
    .vadd_rows = vadd_rows_portable,
    .vgru_gates = vgru_gates_portable,
    .vgru_state = vgru_state_portable,
    .vgru_state_backward = vgru_state_backward_portable,
    .vgru_reset_backward = vgru_reset_backward_portable,
    .adam = rs_adam_portable,
};

/* The kernels in use: these, until another set is installed. */
static const rs_vec_kernels *kernels = &rs_vec_portable;

void rs_vec_kernels_use(const rs_vec_kernels *k)
{
    if (!k)
        k = &rs_vec_portable;
    if (kernels != k) /* no write when nothing changes: roads install theirs as they start */
        kernels = k;
}

const rs_vec_kernels *rs_vec_kernels_in_use(void)
{
    return kernels;
}

void rs_vexp(float *y, const float *x, size_t count)
{
    kernels->vexp(y, x, count);
}

void rs_vtanh(float *y, const float *x, size_t count)
{
    kernels->vtanh(y, x, count);
}

void rs_vsigmoid(float *y, const float *x, size_t count)
{
    kernels->vsigmoid(y, x, count);
}

float rs_vmax(const float *x, size_t count)
{
    return kernels->vmax(x, count);
}

size_t rs_vfirst_above(const float *x, float add, float bound, size_t from, size_t count)
{
    return kernels->vfirst_above(x, add, bound, from, count);
}

size_t rs_vargmax(const float *x, size_t count)
{
    return kernels->vargmax(x, count);
}

double rs_vexp_shift_total(const float *x, float shift, size_t count)
{
    return kernels->vexp_shift_total(x, shift, count);
}

double rs_vexp_shift_sum(float *y, const float *x, float shift, size_t count)
{
    return kernels->vexp_shift_sum(y, x, shift, count);
}

float rs_vtanh_add_dot(float *phi, const float *q, const float *key, const float *v, size_t count)
{
    return kernels->vtanh_add_dot(phi, q, key, v, count);
}

float rs_vdot(const float *x, const float *y, size_t count)
{
    return kernels->vdot(x, y, count);
}

void rs_vaxpy(float *y, float alpha, const float *x, size_t count)
{
    kernels->vaxpy(y, alpha, x, count);
}

double rs_vsumsq(const float *x, size_t count)
{
    return kernels->vsumsq(x, count);
}

void rs_vtanh_add_dot_backward(float *dq, float *dkey, float *dv, const float *phi, const float *v,
                               float de, size_t count)
{
    kernels->vtanh_add_dot_backward(dq, dkey, dv, phi, v, de, count);
}

void rs_vscale_shift(float *y, float scale, float shift, size_t count)
{
    kernels->vscale_shift(y, scale, shift, count);
}

void rs_vweighted_sum(float *y, const float *w, const float *rows, size_t stride, size_t nrows,
                      size_t count)
{
    kernels->vweighted_sum(y, w, rows, stride, nrows, count);
}

void rs_vweighted_sum_backward(float *dw, float *drows, const float *dy, const float *rows,
                               const float *w, size_t stride, size_t nrows, size_t count)
{
    kernels->vweighted_sum_backward(dw, drows, dy, rows, w, stride, nrows, count);
}

void rs_vadd_rows(float *y, const float *rows, size_t stride, size_t nrows, size_t count)
{
    kernels->vadd_rows(y, rows, stride, nrows, count);
}

void rs_vgru_gates(float *zr, float *rh, const float *hp, size_t n)
{
    kernels->vgru_gates(zr, rh, hp, n);
}

void rs_vgru_state(float *h, float *g, const float *z, const float *hp, float mask, size_t n)
{
    kernels->vgru_state(h, g, z, hp, mask, n);
}

void rs_vgru_state_backward(float *dxz, float *dxg, float *dhp, const float *z, const float *g,
                            const float *hp, const float *dh, size_t n)
{
    kernels->vgru_state_backward(dxz, dxg, dhp, z, g, hp, dh, n);
}

void rs_vgru_reset_backward(float *dxr, float *dhp, const float *r, const float *hp,
                            const float *drh, size_t n)
{
    kernels->vgru_reset_backward(dxr, dhp, r, hp, drh, n);
}
