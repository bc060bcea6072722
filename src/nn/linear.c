/* The one forward product of a linear layer; linear.h says what a faster
 * form is. */
#include "nn/linear.h"

void rs_linear_forward(rs_mat y, rs_cmat x, const rs_linear *w, float beta)
{
    if (w->fast)
        w->fast->forward(w->fast, y, x, beta);
    else
        rs_matmul_forward(y, x, w->W, beta);
}
