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
 * are not rewritten, the factor rides into the update. The loop is
 * rs_vadam's (vecmath.c), one pass over parameters, gradients and moments. */
#include <math.h>

#include "nn/optimizer.h"
#include "nn/vecmath.h"

double rs_grad_norm(const float *grads, size_t count)
{
    return sqrt(rs_vsumsq(grads, count));
}

float rs_clip_factor(double norm, float max_norm)
{
    if (max_norm <= 0.0f || !(norm > max_norm))
        return 1.0f;
    return (float)(max_norm / norm);
}

void rs_adam_update(float *params, const float *grads, float grad_scale, float *m, float *v,
                    size_t count, const rs_adam_settings *a, int64_t step)
{
    /* θ -= lr · m̂ / (√v̂ + ε), m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t). */
    const rs_adam_coeffs k = {.lr = a->lr,
                              .beta1 = a->beta1,
                              .beta2 = a->beta2,
                              .eps = a->eps,
                              .c1 = (float)(1.0 - pow(a->beta1, (double)step)),
                              .c2 = (float)(1.0 - pow(a->beta2, (double)step))};
    rs_vadam(params, grads, grad_scale, m, v, count, &k);
}
