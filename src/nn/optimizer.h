/* Adam (Kingma & Ba 2015) with bias correction, and clipping by the global
 * norm of all gradients. Parameters, gradients and both moments share one
 * layout, so each is one loop over `count` floats. */
#ifndef RS_OPTIMIZER_H
#define RS_OPTIMIZER_H

#include <stddef.h>
#include <stdint.h>

/* ‖g‖₂ over all entries, accumulated in double. */
double rs_grad_norm(const float *grads, size_t count);

/* The factor clipping applies to the gradients: max_norm / norm when
 * norm > max_norm > 0, else 1. */
float rs_clip_factor(double norm, float max_norm);

/* Adam's settings: step size, the moments' decay rates, ε. */
typedef struct {
    float lr, beta1, beta2, eps;
} rs_adam_settings;

/* One Adam update with the gradients grad_scale · grads (the clip factor;
 * grads is not changed), in one pass; step is the 1-based index of this update. */
void rs_adam_update(float *params, const float *grads, float grad_scale, float *m, float *v,
                    size_t count, const rs_adam_settings *a, int64_t step);

#endif
