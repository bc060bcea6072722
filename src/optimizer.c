#include <math.h>

#include "optimizer.h"

double rs_grad_norm(const float *grads, size_t count)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; i++)
        sum += (double)grads[i] * grads[i];
    return sqrt(sum);
}

float rs_clip_grads(float *grads, size_t count, double norm, float max_norm)
{
    if (max_norm <= 0.0f || !(norm > max_norm))
        return 1.0f;
    float factor = (float)(max_norm / norm);
    for (size_t i = 0; i < count; i++)
        grads[i] *= factor;
    return factor;
}

void rs_adam_update(float *params, const float *grads, float *m, float *v, size_t count,
                    float lr, float beta1, float beta2, float eps, int64_t step)
{
    /* θ -= lr · m̂ / (√v̂ + ε), m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t). */
    const float c1 = (float)(1.0 - pow(beta1, (double)step));
    const float c2 = (float)(1.0 - pow(beta2, (double)step));
    for (size_t i = 0; i < count; i++) {
        m[i] = beta1 * m[i] + (1.0f - beta1) * grads[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * grads[i] * grads[i];
        params[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
    }
}
