/* The gradient all-reduce of a multi-process step, overlapped with the
 * backward pass, as PyTorch DDP and Horovod do it: the parameters are cut
 * into buckets in the order in which the backward finishes their gradients,
 * one bucket per stage of the backward (rs_backward_stage, network.h), and
 * each bucket's sum across ranks (rs_dist_sum_start) starts as soon as its
 * stage is done, so it travels while the earlier layers' gradients are still
 * being computed:
 *
 *   output layer and deep output → decoder GRU → target embeddings →
 *   initial state and attention → encoder GRUs → source embeddings
 *
 * The bucket order is fixed and every rank starts the same buckets in the
 * same order: a rank whose shard of the update's last batch is empty (or
 * that overlaps nothing) starts them all at the end, in that order. Summing
 * a bucket alone gives the same values as summing the whole buffer at once
 * up to the order of the sum over ranks, which MPI chooses by message size
 * (on 2 ranks it is the same bits: a + b = b + a).
 *
 * One shard per rank only: with --threads > 1 the shards' gradients are
 * summed after all of them are done (train/shards.h), and the all-reduce
 * follows. */
#ifndef RS_BUCKETS_H
#define RS_BUCKETS_H

#include "common/error.h"
#include "model/params.h"
#include "nn/network.h"

typedef struct {
    float *grads; /* [layout->total] the summed gradient buffer */
    const rs_layout *layout;
    int started; /* buckets (stages) whose sum has started, in order */
    int failed;  /* a start failed: error, kept for finish */
    rs_error error;
} rs_grad_buckets;

/* Whether this run overlaps: several ranks, one shard each, and asked for by
 * RNNSEARCH_ALLREDUCE_OVERLAP=1. Off by default: on the emulated hosts of
 * docs/scaling.md it gave nothing measurable on 2 hosts (a little slower at
 * 1 Gbit/s) and 2-11 % on 4 hosts at 10 Gbit/s, where moving the bytes is
 * itself work for the same two cores; real NICs are left to measure. */
int rs_grad_buckets_wanted(int shards);

/* Before the update's last backward: no bucket started yet. */
void rs_grad_buckets_begin(rs_grad_buckets *b, float *grads, const rs_layout *layout);

/* The backward's stage is done: the sums of its bucket and of any before it
 * not started yet start, in order. */
void rs_grad_buckets_stage_done(rs_grad_buckets *b, rs_backward_stage stage);

/* Lets the sums in flight move on (rs_workspace's progress; ctx unused). */
void rs_grad_buckets_progress(void *ctx);

/* Starts the buckets not started yet, in order, and waits for every sum: then
 * grads holds the sum over ranks. */
int rs_grad_buckets_finish(rs_grad_buckets *b, rs_error *err);

#endif
