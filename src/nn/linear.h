/* A linear layer's forward product, y = beta·y + x Wᵀ (x [R,in], W [out,in],
 * y [R,out]), as every layer's forward pass names it: rs_linear_forward(y, x,
 * &w->U_zr, beta) reads as the equation's U_zr h_prev.
 *
 * A weight may come with a faster form of the same product (rs_linear_fast):
 * its forward computes y from x by copies of W kept in another layout (the
 * same numbers to float32 rounding) or precision (int8, within its bound).
 * accel/ makes them, and the weight views that carry them, once a model is
 * readied for translation; training never has them. Without one the
 * product is rs_matmul_forward on W. Backward passes read W itself and never
 * a faster form. This is the one seam: no other file of nn/ knows of forms. */
#ifndef RS_LINEAR_H
#define RS_LINEAR_H

#include "nn/linalg.h"

/* A faster form of one product: its forward writes y = beta·y + x Wᵀ
 * (beta 0 or 1) for the W it was made from. A form is the first member of
 * its maker's own struct, which holds what the product reads, and any
 * working memory it needs (its caller's, one per thread). */
typedef struct rs_linear_fast rs_linear_fast;
struct rs_linear_fast {
    void (*forward)(const rs_linear_fast *f, rs_mat y, rs_cmat x, float beta);
};

/* A weight matrix W [out,in] (a view: it may be a block of a larger one) and
 * its faster form, or NULL. */
typedef struct {
    rs_cmat W;
    const rs_linear_fast *fast;
} rs_linear;

/* The plain weight W, with no faster form. */
#define RS_LINEAR(view) ((rs_linear){.W = (view), .fast = NULL})

/* y [R,out] = beta·y + x [R,in] Wᵀ, by w's faster form when it has one. */
void rs_linear_forward(rs_mat y, rs_cmat x, const rs_linear *w, float beta);

#endif
