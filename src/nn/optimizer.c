/* Adam (Kingma & Ba 2015, algorithm 1) over the one parameter buffer, and
 * clipping by the global norm. With g = grad_scale · ∂L/∂θ for update t:
 *
 *   m ← β1 m + (1 − β1) g              first moment
 *   v ← β2 v + (1 − β2) g²             second moment
 *   m̂ = m / (1 − β1^t),  v̂ = v / (1 − β2^t)   bias corrections
 *   θ ← θ − lr · m̂ / (√v̂ + ε)
 *
 * Clipping scales every gradient by grad_scale = c / ‖g‖₂ when the norm ‖g‖₂
 * over all parameters exceeds c (--clip), else by 1; the gradients themselves
 * are not rewritten, the factor rides into the update. Adam's loop is below,
 * the reference; it runs through vecmath's kernels (rs_vec_kernels), whose
 * AVX2 twin (accel/kernels.c) gives the same bits. */
#include <math.h>

#include "nn/optimizer.h"
#include "nn/vecmath.h"

void rs_slice(size_t total, int part, int parts, size_t *lo, size_t *hi)
{
    *lo = total * (size_t)part / (size_t)parts;
    *hi = total * (size_t)(part + 1) / (size_t)parts;
}

double rs_grad_sumsq(const float *grads, size_t total, int part, int parts)
{
    size_t lo, hi;
    rs_slice(total, part, parts, &lo, &hi);
    return rs_vsumsq(grads + lo, hi - lo);
}

double rs_grad_norm_of_parts(const double *sumsq, int parts)
{
    double total = 0.0;
    for (int p = 0; p < parts; p++)
        total += sumsq[p];
    return sqrt(total);
}

double rs_grad_norm(const float *grads, size_t count)
{
    const double sumsq = rs_grad_sumsq(grads, count, 0, 1);
    return rs_grad_norm_of_parts(&sumsq, 1);
}

float rs_clip_factor(double norm, float max_norm)
{
    if (max_norm <= 0.0f || !(norm > max_norm))
        return 1.0f;
    return (float)(max_norm / norm);
}

void rs_adam_portable(float *params, const float *grads, float grad_scale, float *m, float *v,
                      size_t count, const rs_adam_coeffs *k)
{
    const float lr = k->lr, beta1 = k->beta1, beta2 = k->beta2, eps = k->eps, c1 = k->c1,
                c2 = k->c2;
    for (size_t i = 0; i < count; i++) {
        float g = grad_scale * grads[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g;
        v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
        params[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
    }
}

void rs_adam_update(float *params, const float *grads, float grad_scale, float *m, float *v,
                    size_t count, const rs_adam_settings *a, int64_t step)
{
    const rs_adam_coeffs k = {.lr = a->lr,
                              .beta1 = a->beta1,
                              .beta2 = a->beta2,
                              .eps = a->eps,
                              .c1 = (float)(1.0 - pow(a->beta1, (double)step)),
                              .c2 = (float)(1.0 - pow(a->beta2, (double)step))};
    rs_vec_kernels_in_use()->adam(params, grads, grad_scale, m, v, count, &k);
}

/* Plain SGD, g = grad_scale · grads[i]:  θ −= lr g. */
void rs_sgd_update(float *params, const float *grads, float grad_scale, size_t count, float lr)
{
    for (size_t i = 0; i < count; i++)
        params[i] -= lr * (grad_scale * grads[i]);
}

/* Adadelta (Zeiler 2012, algorithm 1), with g = grad_scale · grads[i]:
 *   E[g²]  ← ρ E[g²] + (1−ρ) g²
 *   Δθ     = √(E[Δθ²] + ε) / √(E[g²] + ε) · g       (E[Δθ²] of the updates before)
 *   E[Δθ²] ← ρ E[Δθ²] + (1−ρ) Δθ²
 *   θ      −= lr Δθ                                  (lr 1 in the paper) */
void rs_adadelta_update(float *params, const float *grads, float grad_scale, float *eg2,
                        float *edx2, size_t count, const rs_adadelta_settings *a)
{
    const float rho = a->rho, eps = a->eps, lr = a->lr;
    for (size_t i = 0; i < count; i++) {
        const float g = grad_scale * grads[i];
        eg2[i] = rho * eg2[i] + (1.0f - rho) * g * g;
        const float dx = sqrtf(edx2[i] + eps) / sqrtf(eg2[i] + eps) * g;
        edx2[i] = rho * edx2[i] + (1.0f - rho) * dx * dx;
        params[i] -= lr * dx;
    }
}

/* Adagrad (Duchi et al. 2011), as torch.optim.Adagrad, g = grad_scale · grads[i]:
 *   s ← s + g²;   θ −= lr g / (√s + ε) */
void rs_adagrad_update(float *params, const float *grads, float grad_scale, float *sum,
                       size_t count, float lr)
{
    for (size_t i = 0; i < count; i++) {
        const float g = grad_scale * grads[i];
        sum[i] += g * g;
        params[i] -= lr * g / (sqrtf(sum[i]) + RS_ADAGRAD_EPS);
    }
}
