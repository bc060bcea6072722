/* Element-wise kernels of the layers: exp, tanh and the logistic sigmoid of
 * stated accuracy, and the few fused loops around them (attention scores,
 * softmax sums), each written twice: 8 floats at a time with AVX2 and once in
 * portable C. The two do the same IEEE operations in the same order (no FMA,
 * no reassociation), so they give the same bits; the AVX2 one is chosen at run
 * time when the CPU has it. Results therefore do not depend on the machine.
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

/* Which path runs: 1 AVX2, 0 portable. rs_vecmath_select(-1) picks the best
 * the CPU has (the default); 0 or 1 forces one (1 only if the CPU has AVX2).
 * Returns the path now in use. For tests and benchmarks; not thread-safe. */
int rs_vecmath_select(int want);

/* The path in use (choosing the CPU's best the first time): 1 AVX2, 0
 * portable. Kernels written twice outside this file (Adam, nn/optimizer.c)
 * follow it, so rs_vecmath_select chooses for them too. */
int rs_vecmath_avx2(void);

#endif
