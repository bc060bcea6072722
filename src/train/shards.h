/* Data-parallel training step: a batch's rows are split into one shard per
 * thread (rows [s·B/N, (s+1)·B/N) go to shard s), each shard runs the forward
 * and backward pass on its own workspace with single-threaded BLAS, into its
 * own gradient buffer, and the buffers are summed in a fixed order,
 *
 *   grads[i] = ((g_0[i] + g_1[i]) + g_2[i]) + …
 *
 * whichever thread finishes first, so the same batch, weights and shard count
 * give the same bits. A different shard count changes the order of the sums
 * (and each shard's padding), so results differ in the last bits. With one
 * shard this is exactly rs_network_forward + rs_network_backward into grads.
 *
 * The loss scale 1/tokens is global: `tokens` counts the target tokens of the
 * whole batch (of every process, when ranks are more shards): each shard's
 * gradient is already its share of the mean, and a sum across processes of
 * `grads` (an all-reduce) then needs no rescaling. Dropout masks of shard s come
 * from the seed given, mixed with s (shard 0 uses the seed as given). */
#ifndef RS_SHARDS_H
#define RS_SHARDS_H

#include <pthread.h>
#include <stdint.h>

#include "nn/network.h"
#include "nn/optimizer.h"
#include "train/buckets.h"

typedef struct rs_shards rs_shards;

typedef struct {
    rs_shards *pool;
    int index;
    rs_workspace ws;
    rs_batch batch; /* this shard's rows of the batch */
    float *grads;   /* [total]; shard 0's is the pool's summed buffer */
    double loss;
    pthread_t thread;
    int started;
} rs_shard;

struct rs_shards {
    int count;       /* shards = threads (the caller's thread runs shard 0) */
    size_t total;    /* floats in a gradient buffer (model->layout.total) */
    float *grads;    /* [total] the summed gradient: the caller's buffer */
    rs_shard *shard; /* [count] */
    double *sumsq;   /* [count] Σ g² of each shard's slice of grads: the norm's parts */
    /* the job of the current round, read by every shard */
    const rs_model *model;
    const rs_batch *batch;
    rs_dropout_rates dropout;
    float smoothing, scale;
    uint64_t seed;
    int phase;      /* 0 forward and backward, 1 sum a slice, 2 Adam on a slice */
    int accumulate; /* phase 0 adds to the summed buffer instead of replacing it */
    /* With a single shard (count 1; NULL: none): the buckets whose sums
     * start as the backward's stages complete their gradients, which then
     * belong to the buckets until they are finished, so grad_norm is left
     * at 0. */
    rs_grad_buckets *buckets;
    double grad_norm; /* ‖grads‖₂ after the last step */
    /* the Adam update of the current round (phase 2) */
    float *params, *adam_m, *adam_v;
    float grad_scale;
    rs_adam_settings adam;
    int64_t adam_step;
    /* round hand-off */
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    uint64_t round; /* incremented to start a round */
    int pending;    /* shards still working on the round */
    int quit;
    int sync_ready;
};

/* threads shards (0: one per online CPU) for batches of up to max_B rows and max_S/max_T tokens
 * (with </s>); grads [model->layout.total] receives every step's sum. */
int rs_shards_init(rs_shards *sh, const rs_model *model, int threads, int max_B, int max_S,
                   int max_T, float *grads, rs_error *err);

/* grads = Σ_s d(scale · L_s)/dθ (accumulate: grads += it, for an update made
 * of several batches) with scale = 1 / tokens (L_s shard s's summed
 * loss, label-smoothed by `smoothing`); returns Σ_s L_s (unsmoothed, as
 * rs_network_forward). dropout and dropout_seed as in rs_workspace. Also sets
 * sh->grad_norm = ‖grads‖₂ by optimizer.h's rule in `count` parts, one per
 * shard. A multi-process run all-reduces grads after this and takes
 * rs_grad_norm (one part) of the result instead. */
double rs_shards_step(rs_shards *sh, const rs_model *model, const rs_batch *batch,
                      rs_dropout_rates dropout, uint64_t dropout_seed, float smoothing, long tokens,
                      int accumulate);

/* rs_adam_update of every parameter with grads (grad_scale: the clip factor),
 * each shard's thread taking a slice: the same bits as one rs_adam_update. */
void rs_shards_adam(rs_shards *sh, float *params, float grad_scale, float *m, float *v,
                    const rs_adam_settings *a, int64_t step);

void rs_shards_free(rs_shards *sh);

#endif
