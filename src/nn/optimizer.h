/* Adam (Kingma & Ba 2015) with bias correction, plain SGD, Adadelta (Zeiler
 * 2012, as Bahdanau et al. trained RNNsearch) and Adagrad (Duchi et al.
 * 2011), and clipping by the global norm of all gradients. Parameters,
 * gradients and each optimizer's state buffers share one layout, so each is
 * one loop over `count` floats (the loops: optimizer.c; the equations:
 * docs/model.md, "Optimisers"). */
#ifndef RS_OPTIMIZER_H
#define RS_OPTIMIZER_H

#include <stddef.h>
#include <stdint.h>

/* Part `part` of `parts` of a parameter-shaped buffer of `total` floats:
 * [lo, hi) = [total·part/parts, total·(part+1)/parts). Threads sharing the
 * work on such buffers (train/shards.c) take one part each. */
void rs_slice(size_t total, int part, int parts, size_t *lo, size_t *hi);

/* The gradient's global norm, one rule wherever it is taken:
 *
 *   ‖g‖₂ = √(sumsq_0 + sumsq_1 + …),   sumsq_p = Σ g² over part p (rs_slice)
 *
 * each sumsq_p accumulated in double in rs_vsumsq's fixed order, the parts
 * added in order p = 0, 1, …. `parts` is the number of threads that summed
 * the gradient, each taking its part's sumsq_p as it finished that part
 * (train/shards.c), or 1: the whole buffer in one sum (rs_grad_norm; several
 * ranks, after the all-reduce). Another number of parts may change the last
 * bits, so the caller states it. */
double rs_grad_sumsq(const float *grads, size_t total, int part, int parts);
double rs_grad_norm_of_parts(const double *sumsq, int parts);
/* The rule with one part: ‖g‖₂ over grads[0..count). */
double rs_grad_norm(const float *grads, size_t count);

/* The factor clipping applies to the gradients: max_norm / norm when
 * norm > max_norm > 0, else 1. */
float rs_clip_factor(double norm, float max_norm);

/* Adam's settings: step size, the moments' decay rates, ε. */
typedef struct {
    float lr, beta1, beta2, eps;
} rs_adam_settings;

/* One update's coefficients: the settings and the bias corrections
 * c1 = 1 − β1^t, c2 = 1 − β2^t of update t. */
typedef struct {
    float lr, beta1, beta2, eps, c1, c2;
} rs_adam_coeffs;

/* Adam's loop over count entries with g = grad_scale · grads[i]:
 *   m = β1 m + (1−β1) g;  v = β2 v + (1−β2) g²;  θ −= lr (m / c1) / (√(v / c2) + ε)
 * rs_adam_portable is the reference; rs_adam_update runs the kernels' in use
 * (nn/vecmath.h), which give its bits. */
typedef void (*rs_adam_kernel)(float *params, const float *grads, float grad_scale, float *m,
                               float *v, size_t count, const rs_adam_coeffs *k);
void rs_adam_portable(float *params, const float *grads, float grad_scale, float *m, float *v,
                      size_t count, const rs_adam_coeffs *k);

/* One Adam update with the gradients grad_scale · grads (the clip factor;
 * grads is not changed), in one pass; step is the 1-based index of this update. */
void rs_adam_update(float *params, const float *grads, float grad_scale, float *m, float *v,
                    size_t count, const rs_adam_settings *a, int64_t step);

/* One SGD update: θ ← θ − lr · grad_scale · g (no momentum: OpenNMT-py's sgd). */
void rs_sgd_update(float *params, const float *grads, float grad_scale, size_t count, float lr);

/* Adadelta's settings: the step's scale (1 in Zeiler's paper), the decay
 * rate ρ of both running averages, ε inside both roots. */
typedef struct {
    float lr, rho, eps;
} rs_adadelta_settings;

/* One Adadelta update with g = grad_scale · grads; eg2 holds E[g²] and edx2
 * E[Δθ²], each [count], zero before the first update. */
void rs_adadelta_update(float *params, const float *grads, float grad_scale, float *eg2,
                        float *edx2, size_t count, const rs_adadelta_settings *a);

/* Adagrad's ε, PyTorch's (torch.optim.Adagrad, which OpenNMT-py and Joey NMT
 * train with): added to the root, so a parameter never seen is not divided by 0. */
#define RS_ADAGRAD_EPS 1e-10f

/* One Adagrad update with g = grad_scale · grads; sum holds Σ g² of every
 * update so far [count], zero before the first. */
void rs_adagrad_update(float *params, const float *grads, float grad_scale, float *sum,
                       size_t count, float lr);

#endif
