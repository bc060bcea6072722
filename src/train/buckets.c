#include <stdlib.h>
#include <string.h>

#include "train/buckets.h"
#include "train/dist.h"

int rs_grad_buckets_wanted(int shards)
{
    const char *on = getenv("RNNSEARCH_ALLREDUCE_OVERLAP");
    return rs_dist_size() > 1 && shards == 1 && on && strcmp(on, "1") == 0;
}

/* Starts bucket b->started, the tensors its stage completes: their floats
 * are contiguous (params.h lays the table out in order; an absent tensor has
 * size 0). */
static void start_next(rs_grad_buckets *b)
{
    int i, j;
    rs_backward_stage_tensors((rs_backward_stage)b->started, &i, &j);
    const rs_tensor_info *first = &b->layout->info[i], *last = &b->layout->info[j];
    const size_t end = last->offset + last->size;
    b->started++;
    if (!b->failed && rs_dist_sum_start(b->grads + first->offset, end - first->offset, &b->error))
        b->failed = 1;
}

void rs_grad_buckets_stage_done(rs_grad_buckets *b, rs_backward_stage stage)
{
    while (b->started <= (int)stage)
        start_next(b);
}

void rs_grad_buckets_progress(void *ctx)
{
    (void)ctx;
    rs_dist_sum_poll();
}

void rs_grad_buckets_begin(rs_grad_buckets *b, float *grads, const rs_layout *layout)
{
    memset(b, 0, sizeof *b);
    b->grads = grads;
    b->layout = layout;
}

int rs_grad_buckets_finish(rs_grad_buckets *b, rs_error *err)
{
    while (b->started < RS_BACKWARD_STAGES)
        start_next(b);
    if (rs_dist_sum_wait(err))
        return -1;
    if (b->failed) {
        *err = b->error;
        return -1;
    }
    return 0;
}
