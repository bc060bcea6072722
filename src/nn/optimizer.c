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
                    size_t count, float lr, float beta1, float beta2, float eps, int64_t step)
{
    /* θ -= lr · m̂ / (√v̂ + ε), m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t). */
    const float c1 = (float)(1.0 - pow(beta1, (double)step));
    const float c2 = (float)(1.0 - pow(beta2, (double)step));
    rs_vadam(params, grads, grad_scale, m, v, count, lr, beta1, beta2, eps, c1, c2);
}
