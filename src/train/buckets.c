#include <stdlib.h>
#include <string.h>

#include "train/buckets.h"
#include "train/dist.h"

/* In the order rs_network_backward completes them (network.h); together they
 * are every tensor of params.h once. */
static const int bucket_tensors[RS_NUM_BUCKETS][2] = {
    {RS_P_out_U, RS_P_out_bw}, {RS_P_dec_W, RS_P_dec_b},         {RS_P_tgt_emb, RS_P_tgt_emb},
    {RS_P_init_W, RS_P_att_K}, {RS_P_enc_fwd_W, RS_P_enc_bwd_b}, {RS_P_src_emb, RS_P_src_emb},
};

void rs_grad_bucket_tensors(int k, int *first, int *last)
{
    *first = bucket_tensors[k][0];
    *last = bucket_tensors[k][1];
}

int rs_grad_buckets_wanted(int shards)
{
    const char *on = getenv("RNNSEARCH_ALLREDUCE_OVERLAP");
    return rs_dist_size() > 1 && shards == 1 && on && strcmp(on, "1") == 0;
}

/* Starts bucket b->started: the floats of its tensors are contiguous
 * (params.h lays the table out in order; an absent tensor has size 0). */
static void start_next(rs_grad_buckets *b)
{
    const rs_tensor_info *first = &b->layout->info[bucket_tensors[b->started][0]];
    const rs_tensor_info *last = &b->layout->info[bucket_tensors[b->started][1]];
    const size_t end = last->offset + last->size;
    b->started++;
    if (!b->failed && rs_dist_sum_start(b->grads + first->offset, end - first->offset, &b->error))
        b->failed = 1;
}

static int bucket_complete(const rs_grad_buckets *b, int k)
{
    for (int i = bucket_tensors[k][0]; i <= bucket_tensors[k][1]; i++)
        if (!b->complete[i])
            return 0;
    return 1;
}

static void on_final(void *ctx, int first, int last)
{
    rs_grad_buckets *b = ctx;
    for (int i = first; i <= last; i++)
        b->complete[i] = 1;
    while (b->started < RS_NUM_BUCKETS && bucket_complete(b, b->started))
        start_next(b);
}

static void on_working(void *ctx)
{
    (void)ctx;
    rs_dist_sum_poll();
}

void rs_grad_buckets_begin(rs_grad_buckets *b, float *grads, const rs_layout *layout)
{
    memset(b, 0, sizeof *b);
    b->grads = grads;
    b->layout = layout;
    b->hook = (rs_backward_hook){on_final, on_working, b};
}

int rs_grad_buckets_finish(rs_grad_buckets *b, rs_error *err)
{
    while (b->started < RS_NUM_BUCKETS)
        start_next(b);
    if (rs_dist_sum_wait(err))
        return -1;
    if (b->failed) {
        *err = b->error;
        return -1;
    }
    return 0;
}
