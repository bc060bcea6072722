/* Finite-difference gradient checking shared by the tests.
 * Central differences (f(x+h) - f(x-h)) / 2h, the loss evaluated in double;
 * error metric (|analytic - numeric| - resolution) / max(|analytic|,
 * |numeric|, floor), where resolution = (ulp(f(x+h)) + ulp(f(x-h))) / 2h in
 * float32: a loss computed in float32 is known to about one unit in its last
 * place at each end, so the difference cannot resolve the gradient more
 * finely than that. Kernels sum in different orders and so round those last
 * bits differently: a bound finer than the resolution holds on one OpenBLAS
 * core and fails on another. */
#ifndef RS_TEST_GRADCHECK_H
#define RS_TEST_GRADCHECK_H

#include <stddef.h>

/* Tolerances of the layer tests. Their float32 forward passes carry ~1e-6
 * absolute rounding noise in the loss, so a central difference with h = 1e-2
 * is good to ~1e-4; gradients below the floor are compared in absolute terms. */
#define GRADCHECK_LAYER_TOL 2e-3
#define GRADCHECK_LAYER_FLOOR 1e-2

typedef double (*gradcheck_loss)(void *ctx);

/* A hash of the discrete choices the last loss evaluation made (which half of
 * each maxout pair won). Central differences are meaningless across such a
 * kink, so a sample whose perturbation changes the signature is skipped. */
typedef unsigned long long (*gradcheck_signature)(void *ctx);

/* FNV-1a over bytes: a ready-made signature for maxout choices. */
unsigned long long gradcheck_hash(const unsigned char *bytes, size_t count);

typedef struct {
    double worst;             /* largest error seen */
    size_t worst_index;       /* where */
    double analytic, numeric; /* at the worst index */
    int non_finite;           /* a NaN or Inf anywhere */
    int checked;
    int skipped; /* samples that straddled a kink */
} gradcheck_result;

/* Checks up to `samples` entries of param[size] (all when size <= samples,
 * else a fixed pseudo-random choice) against grad. param is restored. */
gradcheck_result gradcheck(gradcheck_loss loss, void *ctx, float *param, const float *grad,
                           size_t size, int samples, float h, double floor);
gradcheck_result gradcheck_kinked(gradcheck_loss loss, gradcheck_signature signature, void *ctx,
                                  float *param, const float *grad, size_t size, int samples,
                                  float h, double floor);

/* A directional check of a whole tensor, for errors too small for the
 * per-entry check: a gradient 2% wrong in entries that all lie below the
 * absolute floor, or one scaled by 1.004 everywhere. For a random direction d
 * (uniform in [-1, 1], from seed) the loss is evaluated, in double over float32
 * arithmetic, at the 2·GRADCHECK_DIR_POINTS + 1 steps t = kε/GRADCHECK_DIR_POINTS,
 * k = −POINTS … POINTS, and fitted in least squares by a polynomial of degree
 * GRADCHECK_DIR_DEGREE in t. Its linear coefficient is the directional
 * derivative (the terms up to t⁶ absorbed, so truncation is O(ε⁶)); what the
 * polynomial cannot explain is the loss's float32 rounding at this point, on
 * this BLAS kernel, and gives the coefficient's standard error `se`. So the
 * tolerance is measured, not chosen:
 *
 *   |⟨g, d⟩ − slope| ≤ GRADCHECK_DIR_Z · se + GRADCHECK_DIR_REL · |⟨g, d⟩|
 *
 * Z = 8 standard errors (with the fit's 18 degrees of freedom a deviation
 * that large from rounding alone has a probability under 1e-6); REL = 2e-4
 * covers the truncation left at ε. A gradient scaled by 1.004 breaks the bound
 * wherever rounding leaves the slope better than 0.4 % known, which the
 * tests assert for some direction of every tensor they check (see
 * nn/test_network.c). ε is the given step, or less where that would change the
 * loss by more than GRADCHECK_DIR_CHANGE; a fit whose points do not all have
 * the signature of θ (a maxout kink lies within ±ε) is retried with ε halved. */
#define GRADCHECK_DIR_HALVINGS 8
#define GRADCHECK_DIR_CHANGE 5e-3
#define GRADCHECK_DIR_POINTS 12
#define GRADCHECK_DIR_DEGREE 6
#define GRADCHECK_DIR_Z 8.0
#define GRADCHECK_DIR_REL 2e-4
typedef struct {
    double analytic; /* ⟨g, d⟩ over the steps actually taken in float */
    double numeric;  /* the fitted slope */
    double se;       /* its standard error, from the fit's residuals */
    double bound;    /* Z·se + REL·|analytic|: the most |analytic − numeric| may be */
    double error;    /* |analytic − numeric| / max(|analytic|, |numeric|, floor), for reports */
    double
        power; /* the smallest relative error of ⟨g, d⟩ this check would catch: bound / |analytic| */
    float eps; /* the step used */
    int non_finite;
    int kinked; /* across a kink even at the smallest step: nothing compared */
} gradcheck_dir_result;

gradcheck_dir_result gradcheck_direction(gradcheck_loss loss, gradcheck_signature signature,
                                         void *ctx, float *param, const float *grad, size_t size,
                                         unsigned seed, float eps, double floor);

/* 1 when r compared something and its error is within its bound. */
int gradcheck_direction_holds(const gradcheck_dir_result *r);

/* The directions' seeds: RNNSEARCH_GRADCHECK_SEED when set (any number),
 * else 1; mixed with the test's own indices, so that no direction is chosen
 * by hand and every run can try others. */
unsigned gradcheck_seed(unsigned a, unsigned b, unsigned c);

/* Fails the current Check test unless r is finite, checked something and its
 * worst error is at most tol; prints the worst entry to stderr when it fails. */
void gradcheck_expect(const char *what, gradcheck_result r, double tol);

/* Σ x[i] w[i] in double: the loss L = Σ out ⊙ W of the layer tests. */
double gradcheck_weighted_sum(const float *x, const float *w, size_t count);

/* Fills x[count] uniformly in [-scale, scale] from a simple LCG seeded by seed. */
void fill_uniform(float *x, size_t count, float scale, unsigned seed);

#endif
