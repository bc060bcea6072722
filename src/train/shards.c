#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel/kernels.h"
#include "nn/optimizer.h"
#include "nn/vecmath.h"
#include "train/shards.h"

/* Rows [b0, b1) of `in`, lengths trimmed to the longest of those rows. */
static void slice_batch(rs_batch *out, const rs_batch *in, int b0, int b1)
{
    const int nb = b1 - b0;
    int S = 1, T = 1;
    for (int b = b0; b < b1; b++) {
        S = in->src_len[b] > S ? in->src_len[b] : S;
        T = in->tgt_len[b] > T ? in->tgt_len[b] : T;
    }
    out->B = nb;
    out->S = S;
    out->T = T;
    for (int b = 0; b < nb; b++) {
        out->src_len[b] = in->src_len[b0 + b];
        out->tgt_len[b] = in->tgt_len[b0 + b];
    }
    for (int j = 0; j < S; j++)
        memcpy(out->src + (size_t)j * nb, in->src + (size_t)j * in->B + b0, sizeof(int) * nb);
    for (int t = 0; t < T; t++) {
        memcpy(out->tgt_in + (size_t)t * nb, in->tgt_in + (size_t)t * in->B + b0, sizeof(int) * nb);
        memcpy(out->tgt_out + (size_t)t * nb, in->tgt_out + (size_t)t * in->B + b0,
               sizeof(int) * nb);
    }
}

static void rows_of(const rs_shards *sh, int s, int B, int *b0, int *b1)
{
    *b0 = (int)((long)B * s / sh->count);
    *b1 = (int)((long)B * (s + 1) / sh->count);
}

/* Phase 0: forward and backward of the shard's rows into its own buffer. */
static void shard_pass(rs_shard *me)
{
    rs_shards *sh = me->pool;
    int b0, b1;
    rows_of(sh, me->index, sh->batch->B, &b0, &b1);
    me->loss = 0.0;
    /* Shard 0 writes into the summed buffer: when accumulating it keeps the
     * sum so far, and the other shards' fresh gradients are added to it. */
    if (!(sh->accumulate && me->index == 0))
        memset(me->grads, 0, sizeof(float) * sh->total);
    if (b1 == b0)
        return;
    const rs_batch *batch = sh->batch;
    if (sh->count > 1) {
        slice_batch(&me->batch, sh->batch, b0, b1);
        batch = &me->batch;
    }
    rs_tensors g;
    rs_tensors_bind(&g, &sh->model->layout, me->grads);
    me->ws.dropout = sh->dropout;
    rs_rng_seed(&me->ws.dropout_rng, sh->seed ^ ((uint64_t)me->index * 0x9E3779B97F4A7C15u));
    const rs_network_weights w = rs_network_weights_of(sh->model); /* training's: plain */
    me->loss = rs_network_forward(&me->ws, &w, batch);
    /* The backward's stages, each bucket's sum started once its stage is done. */
    rs_grad_buckets *buckets = sh->count == 1 ? sh->buckets : NULL;
    me->ws.progress = buckets ? rs_grad_buckets_progress : NULL;
    for (int s = 0; s < RS_BACKWARD_STAGES; s++) {
        rs_network_backward_stage(&me->ws, &w, batch, &g, sh->smoothing, sh->scale,
                                  (rs_backward_stage)s);
        if (buckets)
            rs_grad_buckets_stage_done(buckets, (rs_backward_stage)s);
    }
}

/* This shard's slice [lo, hi) of the parameter-sized buffers. */
static void slice_of(const rs_shard *me, size_t *lo, size_t *hi)
{
    rs_slice(me->pool->total, me->index, me->pool->count, lo, hi);
}

/* Phase 1: this shard's slice of the sum, added in shard order, and its part
 * of the norm (rs_grad_sumsq) while the slice is fresh. */
static void shard_sum(rs_shard *me)
{
    rs_shards *sh = me->pool;
    size_t lo, hi;
    slice_of(me, &lo, &hi);
    for (int s = 1; s < sh->count; s++)
        rs_vaxpy(sh->grads + lo, 1.0f, sh->shard[s].grads + lo, hi - lo);
    sh->sumsq[me->index] = rs_grad_sumsq(sh->grads, sh->total, me->index, sh->count);
}

/* Phase 2: Adam on this shard's slice. */
static void shard_adam(rs_shard *me)
{
    rs_shards *sh = me->pool;
    size_t lo, hi;
    slice_of(me, &lo, &hi);
    rs_adam_update(sh->params + lo, sh->grads + lo, sh->grad_scale, sh->adam_m + lo,
                   sh->adam_v + lo, hi - lo, &sh->adam, sh->adam_step);
}

static void run_phase(rs_shard *me)
{
    if (me->pool->phase == 0)
        shard_pass(me);
    else if (me->pool->phase == 1)
        shard_sum(me);
    else
        shard_adam(me);
}

static void *worker(void *arg)
{
    rs_shard *me = arg;
    rs_shards *sh = me->pool;
    pthread_mutex_lock(&sh->lock);
    uint64_t seen = 0; /* rounds start only once every thread exists */
    for (;;) {
        while (sh->round == seen && !sh->quit)
            pthread_cond_wait(&sh->start, &sh->lock);
        if (sh->quit)
            break;
        seen = sh->round;
        pthread_mutex_unlock(&sh->lock);
        run_phase(me);
        pthread_mutex_lock(&sh->lock);
        if (--sh->pending == 0)
            pthread_cond_signal(&sh->done);
    }
    pthread_mutex_unlock(&sh->lock);
    return NULL;
}

/* One phase on every shard; the caller's thread takes shard 0. */
static void run_round(rs_shards *sh, int phase)
{
    pthread_mutex_lock(&sh->lock);
    sh->phase = phase;
    sh->pending = sh->count;
    sh->round++;
    pthread_cond_broadcast(&sh->start);
    pthread_mutex_unlock(&sh->lock);
    run_phase(&sh->shard[0]);
    pthread_mutex_lock(&sh->lock);
    sh->pending--;
    while (sh->pending > 0)
        pthread_cond_wait(&sh->done, &sh->lock);
    pthread_mutex_unlock(&sh->lock);
}

int rs_shards_init(rs_shards *sh, const rs_model *model, int threads, int max_B, int max_S,
                   int max_T, float *grads, rs_error *err)
{
    memset(sh, 0, sizeof *sh);
    rs_accel_kernels_select(-1); /* the processor's fastest kernels, the same bits */
    if (threads < 1) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        threads = online < 1 ? 1 : online > 64 ? 64 : (int)online;
    }
    sh->count = threads > max_B ? max_B : threads;
    sh->total = model->layout.total;
    sh->grads = grads;
    sh->shard = rs_calloc((size_t)sh->count, sizeof *sh->shard, err);
    sh->sumsq = sh->shard ? rs_calloc((size_t)sh->count, sizeof *sh->sumsq, err) : NULL;
    if (!sh->sumsq) {
        free(sh->shard);
        sh->shard = NULL;
        return -1;
    }
    if (pthread_mutex_init(&sh->lock, NULL) || pthread_cond_init(&sh->start, NULL) ||
        pthread_cond_init(&sh->done, NULL)) {
        free(sh->shard);
        free(sh->sumsq);
        sh->shard = NULL;
        sh->sumsq = NULL;
        return rs_fail(err, "cannot create the training threads' locks");
    }
    sh->sync_ready = 1;
    const int shard_B = (max_B + sh->count - 1) / sh->count;
    for (int s = 0; s < sh->count; s++) {
        rs_shard *me = &sh->shard[s];
        me->pool = sh;
        me->index = s;
        me->grads = s == 0 ? grads : rs_calloc(sh->total, sizeof(float), err);
        if (!me->grads ||
            rs_workspace_alloc(&me->ws, model, sh->count > 1 ? shard_B : max_B, max_S, max_T,
                               err) ||
            (sh->count > 1 && rs_batch_alloc(&me->batch, shard_B, max_S, max_T, err))) {
            rs_shards_free(sh);
            return -1;
        }
    }
    for (int s = 1; s < sh->count; s++) {
        if (pthread_create(&sh->shard[s].thread, NULL, worker, &sh->shard[s])) {
            rs_shards_free(sh);
            return rs_fail(err, "cannot start training thread %d of %d", s + 1, threads);
        }
        sh->shard[s].started = 1;
    }
    return 0;
}

double rs_shards_step(rs_shards *sh, const rs_model *model, const rs_batch *batch,
                      rs_dropout_rates dropout, uint64_t dropout_seed, float smoothing, long tokens,
                      int accumulate)
{
    sh->accumulate = accumulate;
    sh->model = model;
    sh->batch = batch;
    sh->dropout = dropout;
    sh->seed = dropout_seed;
    sh->smoothing = smoothing;
    sh->scale = 1.0f / (float)(tokens > 0 ? tokens : 1);
    if (sh->count == 1) {
        sh->phase = 0;
        shard_pass(&sh->shard[0]);
        sh->grad_norm = sh->buckets ? 0.0 : rs_grad_norm(sh->grads, sh->total);
        return sh->shard[0].loss;
    }
    /* Each shard's GEMMs on its own core: OpenBLAS's own threads would only
     * compete with the shards. */
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    run_round(sh, 0);
    run_round(sh, 1);
    openblas_set_num_threads(blas_threads);
    double loss = 0.0;
    for (int s = 0; s < sh->count; s++)
        loss += sh->shard[s].loss;
    sh->grad_norm = rs_grad_norm_of_parts(sh->sumsq, sh->count);
    return loss;
}

void rs_shards_adam(rs_shards *sh, float *params, float grad_scale, float *m, float *v,
                    const rs_adam_settings *a, int64_t step)
{
    if (sh->count == 1) {
        rs_adam_update(params, sh->grads, grad_scale, m, v, sh->total, a, step);
        return;
    }
    sh->params = params, sh->adam_m = m, sh->adam_v = v;
    sh->grad_scale = grad_scale, sh->adam = *a, sh->adam_step = step;
    run_round(sh, 2);
}

void rs_shards_free(rs_shards *sh)
{
    if (sh->sync_ready) {
        pthread_mutex_lock(&sh->lock);
        sh->quit = 1;
        pthread_cond_broadcast(&sh->start);
        pthread_mutex_unlock(&sh->lock);
    }
    for (int s = 0; sh->shard && s < sh->count; s++) {
        rs_shard *me = &sh->shard[s];
        if (me->started)
            pthread_join(me->thread, NULL);
        if (s > 0)
            free(me->grads);
        rs_workspace_free(&me->ws);
        rs_batch_free(&me->batch);
    }
    if (sh->sync_ready) {
        pthread_mutex_destroy(&sh->lock);
        pthread_cond_destroy(&sh->start);
        pthread_cond_destroy(&sh->done);
    }
    free(sh->shard);
    free(sh->sumsq);
    memset(sh, 0, sizeof *sh);
}
