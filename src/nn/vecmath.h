/* Element-wise kernels of the layers: exp, tanh and the logistic sigmoid of
 * stated accuracy, the few fused loops around them (attention scores and
 * weighted sums, softmax sums, the GRU's gate arithmetic, a bias's row
 * sums), and Adam's loop (nn/optimizer.c), written here in portable C: the
 * reference. Its twins (8 floats at a time with AVX2, 16 with AVX-512,
 * accel/kernels.h) do the same IEEE operations in the same order (no FMA,
 * no reassociation), so they give the same bits; the kernels run through
 * one table (rs_vec_kernels), the portable loops' unless a road installs
 * the twins. Results therefore do not depend on the machine.
 *
 * Accuracy against the exact function (libm in double; tests/test_vecmath.c
 * asserts it over the float range that matters; every float was checked once:
 * exp 1.03, tanh 2.42, sigmoid 2.48 ulp at worst, the last as much as
 * 1/(1+expf(-x)) itself):
 *   rs_exp      ≤ 1.5 ulp for x in [-87, 88]; x < -87 gives 0
 *               (|error| < 1.7e-38), x > 88 gives exp(88).
 *   rs_tanh     ≤ 3 ulp; odd; |x| ≥ 20 gives ±1.
 *   rs_sigmoid  ≤ 3 ulp for x ≥ -88; below that |error| < 6.1e-39.
 * NaN in gives NaN out. An ulp is the spacing of floats at the exact value. */
#ifndef RS_VECMATH_H
#define RS_VECMATH_H

#include <stddef.h>

#include "nn/optimizer.h"

/* The approximations' constants, which a twin repeats: exp's range
 * (exp(88) < FLT_MAX with 2^127 as the scale; exp(-87) is still a normal
 * float), tanh's (tanh(20) rounds to 1), the reduction x = n·ln2 + r (ln2 in
 * two parts, the first with 9 significant bits; (v + M) − M with M = 1.5·2^23
 * rounds v to an integer, ties to even) and the Taylor coefficients 1/k!. */
#define RS_VM_EXP_HI 88.0f
#define RS_VM_EXP_LO (-87.0f)
#define RS_VM_TANH_Y_MAX 40.0f
#define RS_VM_LOG2E 1.44269504088896341f
#define RS_VM_LN2_HI 0.693359375f
#define RS_VM_LN2_LO (-2.12194440e-4f)
#define RS_VM_ROUND_MAGIC 12582912.0f
#define RS_VM_C2 (1.0f / 2)
#define RS_VM_C3 (1.0f / 6)
#define RS_VM_C4 (1.0f / 24)
#define RS_VM_C5 (1.0f / 120)
#define RS_VM_C6 (1.0f / 720)
#define RS_VM_C7 (1.0f / 5040)
#define RS_VM_C8 (1.0f / 40320)

/* The scalar kernels (the portable path uses exactly these). */
float rs_exp(float x);
float rs_tanh(float x);
float rs_sigmoid(float x);

/* y[i] = f(x[i]) for i < count; y == x (in place) is allowed. */
void rs_vexp(float *y, const float *x, size_t count);
void rs_vtanh(float *y, const float *x, size_t count);
void rs_vsigmoid(float *y, const float *x, size_t count);

/* max of x[0..count), count ≥ 1. */
float rs_vmax(const float *x, size_t count);

/* The first i of the largest x[i], count ≥ 1: what the loop "best = 0; for
 * each i, if x[i] > x[best] then best = i" leaves (a NaN is never chosen,
 * unless at x[0], which then stays). Counts fit an int's indices (< 2^31). */
size_t rs_vargmax(const float *x, size_t count);

/* The first i in [from, count) whose x[i] + add (a float sum) is not ≤ bound
 * (larger, or NaN), or count when there is none: a search's filter over a
 * row of candidates whose scores are x[i] + add, against the worst score it
 * keeps. */
size_t rs_vfirst_above(const float *x, float add, float bound, size_t from, size_t count);

/* y[i] = exp(x[i] - shift) (in place allowed); returns Σ y[i] accumulated in
 * double, in a fixed order (8 running sums by i mod 8, then added pairwise). */
double rs_vexp_shift_sum(float *y, const float *x, float shift, size_t count);
/* Its sum alone, the same bits, the exps not stored (a log-normaliser needs
 * only the sum: one write of count floats less). */
double rs_vexp_shift_total(const float *x, float shift, size_t count);

/* Additive attention's score of one (query, key) pair: phi[k] = tanh(q[k] +
 * key[k]) for k < count (model.md's φ), returns Σ v[k] phi[k] (8 running
 * sums, fixed order). */
float rs_vtanh_add_dot(float *phi, const float *q, const float *key, const float *v, size_t count);

/* Backward of rs_vtanh_add_dot given de = dL/de (forward was: e = Σ v phi,
 * phi = tanh(q + key)): dv[k] += de phi[k]; dq[k] and dkey[k] += de v[k] (1 − phi[k]²). */
void rs_vtanh_add_dot_backward(float *dq, float *dkey, float *dv, const float *phi, const float *v,
                               float de, size_t count);

/* y[i] = scale · (y[i] − shift). */
void rs_vscale_shift(float *y, float scale, float shift, size_t count);

/* Σ x[i] y[i] (8 running sums, fixed order). */
float rs_vdot(const float *x, const float *y, size_t count);

/* y[i] += alpha x[i] (alpha = 1 gives y[i] + x[i] exactly). */
void rs_vaxpy(float *y, float alpha, const float *x, size_t count);

/* Σ x[i]² accumulated in double (8 running sums, fixed order). */
double rs_vsumsq(const float *x, size_t count);

/* y[k] = Σ_j w[j] rows[j·stride + k] for k < count, j < nrows, each sum from
 * +0 in the order of j (what clearing y, then rs_vaxpy row by row, gives):
 * the attention's context c = Σ_j α_j h_j. y is none of the rows. */
void rs_vweighted_sum(float *y, const float *w, const float *rows, size_t stride, size_t nrows,
                      size_t count);

/* Its backward given dy (forward was y = Σ_j w_j row_j), row by row:
 * dw[j] = rs_vdot(dy, row_j) and drow_j += w[j] dy (rs_vaxpy), drow_j at
 * drows + j·stride. */
void rs_vweighted_sum_backward(float *dw, float *drows, const float *dy, const float *rows,
                               const float *w, size_t stride, size_t nrows, size_t count);

/* y[k] += rows[j·stride + k] for k < count, row by row (j = 0 .. nrows − 1
 * in order; rs_vaxpy with alpha 1): a bias's gradient, its rows' sum. y is
 * none of the rows. */
void rs_vadd_rows(float *y, const float *rows, size_t stride, size_t nrows, size_t count);

/* The GRU's per-element arithmetic (nn/gru.c, one batch row of n units).
 * Gates: zr[0..2n) = σ(zr) in place (z, then r), rh[k] = r[k] hp[k]. */
void rs_vgru_gates(float *zr, float *rh, const float *hp, size_t n);

/* The new state: g = tanh(g) in place, h[k] = (1 − z[k]) hp[k] + z[k] g[k]
 * where mask ≠ 0, else hp[k]. */
void rs_vgru_state(float *h, float *g, const float *z, const float *hp, float mask, size_t n);

/* Its backward (forward was h = (1 − z)⊙hp + z⊙g, z = σ(·), g = tanh(·)):
 * dxz = dh (g − hp) z (1 − z), dxg = dh z (1 − g²), dhp += dh (1 − z). */
void rs_vgru_state_backward(float *dxz, float *dxg, float *dhp, const float *z, const float *g,
                            const float *hp, const float *dh, size_t n);

/* Forward was rh = r⊙hp, r = σ(·): dxr = drh hp r (1 − r), dhp += drh r. */
void rs_vgru_reset_backward(float *dxr, float *dhp, const float *r, const float *hp,
                            const float *drh, size_t n);

/* The fixed order in which every reduction above adds its 8 running sums
 * (lane k takes i ≡ k mod 8): ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)). */
float rs_fold8(const float a[8]);
double rs_fold8d(const double a[8]);

/* The kernels as one table, the functions above (and Adam's loop) each
 * calling its entry. */
typedef struct {
    void (*vexp)(float *y, const float *x, size_t count);
    void (*vtanh)(float *y, const float *x, size_t count);
    void (*vsigmoid)(float *y, const float *x, size_t count);
    float (*vmax)(const float *x, size_t count);
    size_t (*vargmax)(const float *x, size_t count);
    size_t (*vfirst_above)(const float *x, float add, float bound, size_t from, size_t count);
    double (*vexp_shift_sum)(float *y, const float *x, float shift, size_t count);
    double (*vexp_shift_total)(const float *x, float shift, size_t count);
    float (*vtanh_add_dot)(float *phi, const float *q, const float *key, const float *v,
                           size_t count);
    void (*vtanh_add_dot_backward)(float *dq, float *dkey, float *dv, const float *phi,
                                   const float *v, float de, size_t count);
    void (*vscale_shift)(float *y, float scale, float shift, size_t count);
    float (*vdot)(const float *x, const float *y, size_t count);
    void (*vaxpy)(float *y, float alpha, const float *x, size_t count);
    double (*vsumsq)(const float *x, size_t count);
    void (*vweighted_sum)(float *y, const float *w, const float *rows, size_t stride, size_t nrows,
                          size_t count);
    void (*vweighted_sum_backward)(float *dw, float *drows, const float *dy, const float *rows,
                                   const float *w, size_t stride, size_t nrows, size_t count);
    void (*vadd_rows)(float *y, const float *rows, size_t stride, size_t nrows, size_t count);
    void (*vgru_gates)(float *zr, float *rh, const float *hp, size_t n);
    void (*vgru_state)(float *h, float *g, const float *z, const float *hp, float mask, size_t n);
    void (*vgru_state_backward)(float *dxz, float *dxg, float *dhp, const float *z, const float *g,
                                const float *hp, const float *dh, size_t n);
    void (*vgru_reset_backward)(float *dxr, float *dhp, const float *r, const float *hp,
                                const float *drh, size_t n);
    rs_adam_kernel adam;
} rs_vec_kernels;

/* The portable loops: the reference, in use until another table is. */
extern const rs_vec_kernels rs_vec_portable;

/* Makes k (NULL: rs_vec_portable) the kernels in use, for every thread; a
 * table that gives the reference's bits only. Not thread-safe against
 * kernels running, unless k is already in use (then nothing is written). */
void rs_vec_kernels_use(const rs_vec_kernels *k);
const rs_vec_kernels *rs_vec_kernels_in_use(void);

#endif
