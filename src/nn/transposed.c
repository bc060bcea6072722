/* Transposed copies of the decoding weights; transposed.h says why. */
#include <stdlib.h>

#include "nn/transposed.h"

/* Blocks of 32 × 32 floats (4 KB read, 4 KB written) keep both sides of
 * the copy in the L1 cache: a row-by-row transpose writes one float per
 * cache line of dst. */
enum { TILE = 32 };

void rs_transpose(float *dst, rs_cmat src)
{
    const int R = src.rows, C = src.cols;
    for (int r0 = 0; r0 < R; r0 += TILE)
        for (int c0 = 0; c0 < C; c0 += TILE)
            for (int r = r0; r < R && r < r0 + TILE; r++)
                for (int c = c0; c < C && c < c0 + TILE; c++)
                    dst[(size_t)c * R + r] = src.data[(size_t)r * src.stride + c];
}

rs_cmat rs_wt_view(const float *t, int in, int out)
{
    return t ? RS_CMAT(t, in, out) : (rs_cmat){NULL, 0, 0, 0};
}

void rs_wt_weights_free(rs_wt_weights *wt)
{
    if (!wt)
        return;
    free(wt->block);
    free(wt);
}
