#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "common/blas_buffer.h"
#include "common/clock.h"
#include "common/crc32.h"
#include "train/buckets.h"
#include "train/dist.h"
#include "common/fault.h"
#include "common/fileio.h"
#include "search/forced.h"
#include "nn/network.h"
#include "nn/optimizer.h"
#include "train/evaluate.h"
#include "train/fingerprint.h"
#include "train/rundir.h"
#include "train/train.h"
#include "train/watch.h"

/* ---- the loop ------------------------------------------------------------- */

typedef struct {
    rs_model *model;
    rs_train_state *state;
    const rs_train_options *options;
    rs_train_report report;
    void *ctx;
    int64_t saved_step;     /* the step last.ckpt holds */
    int64_t evaluated_step; /* the step last evaluated by this process (-1: none) */
    rs_loss_row window;     /* updates since the last row of train.loss.tsv; loss summed */
} trainer;

int rs_train_epoch_of_step(const rs_train_state *state)
{
    /* batches_done is 0 right after an epoch's last step: that epoch is state->epoch. */
    return state->batches_done > 0 ? (int)state->epoch + 1 : (int)state->epoch;
}

static int save(trainer *tr, const char *file, rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", tr->options->dir, file);
    if (rs_checkpoint_save(path, tr->model, tr->state, err))
        return -1;
    rs_train_event ev = {.kind = RS_EV_SAVED,
                         .step = tr->state->step,
                         .epoch = rs_train_epoch_of_step(tr->state),
                         .path = path};
    tr->report(tr->ctx, &ev);
    return 0;
}

/* Whether the step is one of the run's regular saves: every save_every
 * steps when set, else every evaluation (eval_every steps, or each epoch's
 * end when 0). keep_last's step-N.ckpt window holds these only, evenly
 * spaced as averaging wants: an epoch's end, a signal or the time limit
 * that falls between them saves last.ckpt without pushing one out of the
 * window (as fairseq's keep_interval_updates and OpenNMT-py's
 * keep_checkpoint count only the interval's saves). */
static int on_save_interval(const rs_train_config *c, const rs_train_state *st)
{
    if (c->save_every > 0)
        return st->step % c->save_every == 0;
    if (c->eval_every > 0)
        return st->step % c->eval_every == 0;
    return st->batches_done == 0; /* 0 right after an epoch's last update */
}

/* best.ckpt (when asked) before last.ckpt: killed between the two, a resume
 * starts from the older last.ckpt, redoes the evaluation and writes best.ckpt
 * again, the same. last.ckpt never records a best that best.ckpt lacks. */
static int commit_here(trainer *tr, int best, rs_error *err)
{
    if (best) {
        if (save(tr, "best.ckpt", err))
            return -1;
        rs_fault_point("best");
    }
    if (save(tr, "last.ckpt", err))
        return -1;
    rs_fault_point("last");
    tr->saved_step = tr->state->step;
    const int keep = tr->model->train.keep_last;
    if (keep > 0 && on_save_interval(&tr->model->train, tr->state)) {
        char name[64];
        snprintf(name, sizeof name, "step-%lld.ckpt", (long long)tr->state->step);
        if (save(tr, name, err) || rs_rundir_prune_steps(tr->options->dir, keep, err))
            return -1;
    }
    return 0;
}

/* Dev loss (and exact match or BLEU), the early-stopping and learning-rate
 * decay counters, and the log row. *best: best.ckpt is to be written (the
 * result is the best so far; without a dev set there is no best, only
 * last.ckpt, which `-m DIR` then resolves to). */
static int evaluate_here(trainer *tr, const rs_dataset *dev, rs_train_event *ev, double train_loss,
                         int *best, rs_error *err)
{
    rs_train_state *st = tr->state;
    const rs_train_config *c = &tr->model->train;
    ev->kind = RS_EV_DEV;
    ev->dev_loss = NAN;
    ev->dev_ppl = NAN;
    ev->dev_exact = -1.0;
    ev->dev_bleu = -1.0;
    ev->improved = 0;
    ev->stop = 0;
    *best = 0;
    if (dev && dev->count > 0) {
        const rs_ready plain = rs_ready_plain(tr->model), *members[1] = {&plain};
        rs_forced *scored = rs_calloc((size_t)dev->count, sizeof *scored, err);
        if (!scored || rs_forced_decode(members, 1, dev, c->batch_size, 0, scored, err)) {
            free(scored);
            return -1;
        }
        double total = 0.0;
        long tokens = 0;
        for (int i = 0; i < dev->count; i++) {
            total -= scored[i].logprob;
            tokens += dev->tgt_len[i] + 1;
            rs_forced_free(&scored[i]);
        }
        free(scored);
        ev->dev_loss = total / (double)tokens;
        ev->dev_ppl = exp(ev->dev_loss);
        if ((c->dev_translate || c->dev_bleu) &&
            rs_dev_translate(tr->model, dev, tr->options, c->batch_size, &ev->dev_exact,
                             &ev->dev_bleu, err))
            return -1;
        /* best.ckpt by dev BLEU when it is measured, else by dev loss. */
        ev->improved =
            c->dev_bleu ? ev->dev_bleu > st->best_dev_bleu : ev->dev_loss < st->best_dev_loss;
        if (ev->dev_loss < st->best_dev_loss)
            st->best_dev_loss = (float)ev->dev_loss;
        if (c->dev_bleu && ev->dev_bleu > st->best_dev_bleu)
            st->best_dev_bleu = (float)ev->dev_bleu;
        if (ev->improved) {
            st->bad_evals = 0;
        } else {
            st->bad_evals++;
            st->lr_scale *= c->lr_decay;
            ev->stop = c->patience > 0 && st->bad_evals >= c->patience;
        }
        *best = ev->improved;
    }
    if (rs_watch_evaluate(tr->options->watch, tr->model, dev, tr->options->dir, ev, err))
        return -1;
    tr->evaluated_step = st->step;
    tr->report(tr->ctx, ev);
    return rs_rundir_append_log(tr->options->dir, ev, train_loss, err);
}

/* ---- across ranks (src/train/dist.h): rank 0 alone evaluates, logs and saves ---- */

/* CRC-32 of what every rank must hold alike: the parameters, and unless NULL
 * the optimizer state and the training data (by its fingerprint, st->data). */
static uint32_t fingerprint(const rs_model *model, const rs_train_state *st)
{
    const size_t total = model->layout.total;
    uint32_t crc = rs_crc32_update(0, model->params, sizeof(float) * total);
    if (!st)
        return crc;
    crc = rs_crc32_update(crc, st->adam_m, sizeof(float) * total);
    crc = rs_crc32_update(crc, st->adam_v, sizeof(float) * total);
    int64_t counters[3] = {st->step, st->epoch, st->batches_done};
    crc = rs_crc32_update(crc, counters, sizeof counters);
    crc = rs_crc32_update(crc, &st->rng, sizeof st->rng);
    crc = rs_crc32_update(crc, &st->lr_scale, sizeof st->lr_scale);
    const uint32_t data[3] = {st->data.train_pairs, st->data.train_src_crc, st->data.train_tgt_crc};
    return rs_crc32_update(crc, data, sizeof data);
}

/* The row of train.loss.tsv for the updates since the last one (none when
 * there were none): rank 0 writes it, every rank starts a new window. */
static int write_loss_row(trainer *tr, rs_error *err)
{
    rs_loss_row row = tr->window;
    if (row.steps == 0)
        return 0;
    memset(&tr->window, 0, sizeof tr->window);
    row.step = tr->state->step;
    row.epoch = rs_train_epoch_of_step(tr->state);
    row.loss /= (double)row.tokens;
    return rs_dist_check(
        rs_dist_rank() == 0 ? rs_rundir_append_loss(tr->options->dir, &row, err) : 0, err);
}

static int commit(trainer *tr, int best, rs_error *err)
{
    /* The loss row first: a resumed run starts its window at the checkpoint. */
    if (write_loss_row(tr, err) ||
        rs_dist_check(rs_dist_rank() == 0 ? commit_here(tr, best, err) : 0, err))
        return -1;
    tr->saved_step = tr->state->step;
    return 0;
}

/* Rank 0's evaluation, then its outcome on every rank: the learning-rate
 * decay and early stopping it decides must apply to every rank's update. */
static int evaluate(trainer *tr, const rs_dataset *dev, rs_train_event *ev, double train_loss,
                    int *best, rs_error *err)
{
    rs_train_state *st = tr->state;
    if (rs_dist_agree(fingerprint(tr->model, NULL), "the parameters (ranks diverged)", err))
        return -1;
    *best = 0;
    int status = rs_dist_rank() == 0 ? evaluate_here(tr, dev, ev, train_loss, best, err) : 0;
    if (rs_dist_check(status, err))
        return -1;
    struct {
        float best_dev_loss, best_dev_bleu, lr_scale;
        int32_t bad_evals, stop, best;
    } outcome = {st->best_dev_loss, st->best_dev_bleu, st->lr_scale,
                 st->bad_evals,     ev->stop,          *best};
    if (rs_dist_broadcast(&outcome, sizeof outcome, err))
        return -1;
    st->best_dev_loss = outcome.best_dev_loss;
    st->best_dev_bleu = outcome.best_dev_bleu;
    st->lr_scale = outcome.lr_scale;
    st->bad_evals = outcome.bad_evals;
    ev->stop = outcome.stop;
    *best = outcome.best;
    tr->evaluated_step = st->step;
    return 0;
}

long rs_train_update_tokens(const rs_update_batches *u)
{
    long tokens = 0;
    for (int k = u->first; k < u->first + u->count; k++)
        for (int p = u->plan->start[k]; p < u->plan->start[k + 1]; p++)
            tokens += u->data->tgt_len[u->plan->order[p]] + 1;
    return tokens;
}

/* One update's results, for what follows it. */
typedef struct {
    double loss, gnorm; /* summed loss of its target tokens; the norm before clipping */
    float lr;
    int shown_epoch; /* the epoch it belongs to, from 1 */
    int epoch_end;   /* it finished the epoch */
    int planned;     /* the last update of the planned run */
} update_result;

int rs_train_gradient(rs_shards *shards, rs_batch *batch, const rs_model *model,
                      const rs_update_batches *u, double *loss, double *gnorm, rs_error *err)
{
    const long tokens = u->tokens;
    const int64_t step = u->step;
    const rs_train_config *c = &model->train;
    *loss = 0.0;
    /* Across ranks, the last batch's backward starts the all-reduce of each
     * bucket of gradients as it completes (buckets.h). */
    rs_grad_buckets buckets;
    const int overlap = rs_grad_buckets_wanted(shards->count);
    if (overlap)
        rs_grad_buckets_begin(&buckets, shards->grads, &model->layout);
    int computed = 0; /* batches of the update this rank has rows of */
    for (int k = u->first; k < u->first + u->count; k++) {
        int lo, hi;
        rs_dist_rows(u->plan->start[k + 1] - u->plan->start[k], &lo, &hi);
        if (hi == lo)
            continue;
        if (rs_batch_from_dataset(batch, u->data, u->plan->order + u->plan->start[k] + lo, hi - lo,
                                  err))
            return -1;
        const uint64_t seed = ((uint64_t)c->seed << 32) ^ (uint64_t)step ^
                              ((uint64_t)(k - u->first) * 0xD1B54A32D192ED03ULL) ^
                              ((uint64_t)rs_dist_rank() << 56);
        const rs_dropout_rates dropout = {c->dropout, c->src_word_dropout, c->tgt_word_dropout};
        shards->buckets = overlap && k == u->first + u->count - 1 ? &buckets : NULL;
        *loss += rs_shards_step(shards, model, batch, dropout, seed, c->label_smoothing, tokens,
                                computed++ > 0);
        shards->buckets = NULL;
    }
    if (rs_dist_size() > 1) {
        if (!computed)
            memset(shards->grads, 0, sizeof(float) * shards->total);
        if (overlap ? rs_grad_buckets_finish(&buckets, err)
                    : rs_dist_sum_floats(shards->grads, shards->total, err))
            return -1;
        *loss = rs_dist_sum_double(*loss);
        /* The shards' norm was of this rank's share: optimizer.h's rule again,
         * over the sum, in one part. */
        *gnorm = rs_grad_norm(shards->grads, shards->total);
        return 0;
    }
    *gnorm = shards->grad_norm;
    return 0;
}

float rs_train_apply(rs_shards *shards, rs_model *model, rs_train_state *state, double gnorm)
{
    const rs_train_config *c = &model->train;
    const float clip = rs_clip_factor(gnorm, c->clip);
    if (c->optimizer == RS_OPT_ADAGRAD && state->step == 0)
        for (size_t i = 0; i < model->layout.total; i++)
            state->adam_v[i] = c->adagrad_init; /* torch's initial_accumulator_value */
    state->step++;
    const float lr = rs_train_learning_rate(c, model->cfg.hidden, state->lr_scale, state->step);
    /* The optimizer's state in the two state buffers (checkpoint.h): Adam's
     * m and v; Adadelta's E[g²] and E[Δθ²]; Adagrad's Σ g² in the second.
     * Only Adam's update is shared among the shards' threads; the others are
     * one pass over the summed gradient. */
    float *const p = model->params, *const g = shards->grads;
    const size_t n = shards->total;
    switch (c->optimizer) {
    case RS_OPT_SGD: rs_sgd_update(p, g, clip, n, lr); break;
    case RS_OPT_ADADELTA:
        rs_adadelta_update(p, g, clip, state->adam_m, state->adam_v, n,
                           &(rs_adadelta_settings){lr, c->rho, c->adadelta_eps});
        break;
    case RS_OPT_ADAGRAD: rs_adagrad_update(p, g, clip, state->adam_v, n, lr); break;
    default: {
        const rs_adam_settings adam = {lr, c->beta1, c->beta2, c->adam_eps};
        rs_shards_adam(shards, p, clip, state->adam_m, state->adam_v, &adam, state->step);
    }
    }
    return lr;
}

float rs_train_learning_rate(const rs_train_config *c, int hidden, float lr_scale, int64_t step)
{
    if (c->lr_schedule == RS_LR_NOAM || c->lr_schedule == RS_LR_INVERSE_SQRT) {
        /* shape = min(step^-0.5, step · w^-1.5): step / w^1.5 up to w, then 1 / sqrt(step). */
        const double s = (double)step, w = (double)c->warmup;
        const double shape = s <= 0 ? 0.0 : fmin(1.0 / sqrt(s), s * pow(w, -1.5));
        /* noam: lr · n^-0.5 · shape (Joey NMT, lr its factor, n = --hidden);
         * inverse-sqrt: lr · w^0.5 · shape (fairseq), lr itself at step w. */
        const double scale = c->lr_schedule == RS_LR_NOAM ? 1.0 / sqrt((double)hidden) : sqrt(w);
        return (float)((double)c->lr * scale * shape) * lr_scale;
    }
    /* constant, plateau and exponential: lr · lr_scale, warmed up linearly
     * over --warmup steps; exponential (OpenNMT-py's schedule without a
     * decay_method) times decay_rate^⌊max(step − decay_start + decay_steps, 0) / decay_steps⌋,
     * the first decay at step decay_start. */
    float lr = c->lr * lr_scale;
    if (c->lr_schedule == RS_LR_EXPONENTIAL) {
        const int64_t k = (step - c->decay_start + c->decay_steps) / c->decay_steps;
        lr = (float)((double)lr * pow((double)c->decay_rate, (double)(k > 0 ? k : 0)));
    }
    if (c->warmup > 0 && step < c->warmup)
        lr *= (float)step / (float)c->warmup;
    return lr;
}

/* Before the first step: the resumed position fits this data (an epoch has
 * the same number of batches every time, the cuts following the lengths; a
 * position past them belongs to other data, refused before any file is
 * touched), the data's fingerprint, the run directory (rank 0), and every
 * rank agreeing on data and model. */
static int prepare_run(const rs_model *model, rs_train_state *state, const rs_dataset *train,
                       const rs_dataset *dev, const rs_train_options *options,
                       const char *last_path, int *batches_per_epoch, rs_error *err)
{
    const rs_train_config *c = &model->train;
    rs_epoch_plan plan = {0};
    rs_rng count_rng = state->rng;
    if (rs_epoch_plan_make(&plan, train, c->batch_size, c->batch_tokens, &count_rng, err))
        return -1;
    *batches_per_epoch = plan.batches;
    rs_epoch_plan_free(&plan);
    if (state->batches_done >= *batches_per_epoch)
        return rs_fail(err,
                       "%s: the training state is after batch %lld of its epoch, but this "
                       "data makes %d batches an epoch: it was trained on other data "
                       "(--new-data continues on this data from an epoch's beginning)",
                       last_path, (long long)state->batches_done, *batches_per_epoch);
    rs_data_fingerprint_of(&state->data, train, dev, c->dev_bleu ? options->dev_refs : NULL);
    if (rs_dist_check(rs_dist_rank() == 0 &&
                          (rs_make_parent_dirs(last_path, err) ||
                           rs_rundir_remove_temporaries(options->dir, err) ||
                           rs_rundir_truncate_log(options->dir, state->step, err) ||
                           rs_watch_start(options->watch, model, options->dir, state->step, err)),
                      err) ||
        rs_dist_agree(fingerprint(model, state), "the training data or the model", err))
        return -1;
    return 0;
}

/* The run's clock and the sums its progress lines and evaluations report. */
typedef struct {
    double start, limit_s, last_report;
    int64_t first_step, total_steps;
    double window_loss, finished_epoch_loss; /* summed over tokens; the epoch's: state */
    long window_tokens, tokens_since_start;
    double allreduce_start; /* rs_dist_allreduce_seconds() at the start */
    double update_s;        /* wall time of this run's updates, without evaluations and saves */
    int64_t updates_timed;
} run_clock;

/* An update's summed loss and target tokens into the sums of the progress
 * line, the epoch (kept in the training state, which checkpoints save), the
 * run and the loss table's row. */
static void count_update(trainer *tr, run_clock *rc, double loss, long tokens, float lr,
                         double gnorm)
{
    rc->window_loss += loss;
    rc->window_tokens += tokens;
    tr->window.loss += loss;
    tr->window.tokens += tokens;
    tr->window.steps++;
    tr->window.lr = lr;
    tr->window.gnorm = gnorm;
    tr->state->epoch_loss += loss;
    tr->state->epoch_tokens += tokens;
    rc->tokens_since_start += tokens;
}

/* The mean loss per target token of the epoch's updates so far (NaN when
 * not known: model.h). */
static double epoch_mean(const rs_train_state *state)
{
    return state->epoch_loss / (double)state->epoch_tokens;
}

/* Whether the run stops before its next step, and why: epochs or steps done,
 * the time limit, a signal (each rank's own clock and signals, agreed on, so
 * that all stop at one step). The time limit stops before a step that would
 * end past it (by the mean update time so far): checking only whether it has
 * passed let a step start just before it, so a run whose evaluation ended
 * near the limit took one more step and evaluated that again (1500, 1501). */
static int should_stop(const rs_train_config *c, const rs_train_state *state,
                       const rs_train_options *options, const run_clock *rc, rs_stop_reason *reason)
{
    if (state->epoch >= c->epochs) {
        *reason = RS_STOP_EPOCHS;
        return 1;
    }
    if (c->max_steps > 0 && state->step >= c->max_steps) {
        *reason = RS_STOP_MAX_STEPS;
        return 1;
    }
    const double next_s = rc->updates_timed > 0 ? rc->update_s / (double)rc->updates_timed : 0.0;
    const int stop =
        rs_dist_or((rc->limit_s > 0 && rs_clock_seconds() - rc->start + next_s >= rc->limit_s) |
                   (options->stop && *options->stop ? 2 : 0));
    if (stop & 1) {
        *reason = RS_STOP_TIME;
        return 1;
    }
    if (stop & 2) {
        *reason = RS_STOP_SIGNAL;
        return 1;
    }
    return 0;
}

/* A loss or gradient norm that is not finite: the failure, naming the last
 * good checkpoint and what to try (the same sums on every rank: all stop
 * here, as one failure). */
static int not_finite(const trainer *tr, const char *last_path, double loss, double gnorm,
                      rs_error *err)
{
    const rs_train_config *c = &tr->model->train;
    char saved[4300] = "no checkpoint was saved yet";
    if (tr->saved_step > 0)
        snprintf(saved, sizeof saved, "%s (step %lld) is the last good checkpoint", last_path,
                 (long long)tr->saved_step);
    return rs_dist_check(rs_fail(err,
                                 "step %lld: the loss or the gradient norm is not finite (loss "
                                 "%g, gradient norm %g); stopped, %s; try a smaller --lr (now "
                                 "%g) or --clip (now %g)",
                                 (long long)tr->state->step + 1, loss, gnorm, saved, (double)c->lr,
                                 (double)c->clip),
                         err);
}

/* A progress line at time t: the mean loss since the last one, tokens/s since
 * the start, and the time left (bounded by --max-minutes). */
static void report_progress(trainer *tr, run_clock *rc, rs_train_event *ev, int shown_epoch,
                            double gnorm, float lr, double t)
{
    const rs_train_state *state = tr->state;
    const double elapsed = t - rc->start;
    *ev = (rs_train_event){.kind = RS_EV_PROGRESS,
                           .step = state->step,
                           .total_steps = rc->total_steps,
                           .epoch = shown_epoch,
                           .loss = rc->window_loss / (double)rc->window_tokens,
                           .gnorm = gnorm,
                           .lr = lr,
                           .elapsed_s = elapsed};
    ev->ppl = exp(ev->loss);
    ev->tokens_per_s = rc->tokens_since_start / elapsed;
    const int64_t steps = state->step - rc->first_step;
    ev->step_s = steps > 0 ? elapsed / (double)steps : 0.0;
    ev->allreduce_s =
        steps > 0 ? (rs_dist_allreduce_seconds() - rc->allreduce_start) / (double)steps : 0.0;
    double rate = (double)(state->step - rc->first_step) / elapsed;
    ev->eta_s = rate > 0 ? (double)(rc->total_steps - state->step) / rate : 0.0;
    if (rc->limit_s > 0 && ev->eta_s > rc->limit_s - elapsed)
        ev->eta_s = rc->limit_s > elapsed ? rc->limit_s - elapsed : 0.0;
    tr->report(tr->ctx, ev);
    rc->window_loss = 0.0;
    rc->window_tokens = 0;
    rc->last_report = t;
}

/* After the loop, when it ended well: the end of the run (not an
 * interruption) is evaluated once, unless the step was evaluated already; an
 * interruption only saves. Then the event that says why the run stopped. */
static int finish_run(trainer *tr, const rs_dataset *dev, rs_train_event *ev, const run_clock *rc,
                      rs_stop_reason reason, const char *last_path, rs_error *err)
{
    const rs_train_state *state = tr->state;
    int status = 0;
    if (state->step > rc->first_step) {
        ev->step = state->step;
        ev->epoch = rs_train_epoch_of_step(state);
        ev->elapsed_s = rs_clock_seconds() - rc->start;
        ev->tokens_per_s = rc->tokens_since_start / (ev->elapsed_s > 0 ? ev->elapsed_s : 1);
        ev->lr = rs_train_learning_rate(&tr->model->train, tr->model->cfg.hidden, state->lr_scale,
                                        state->step);
        int best = 0;
        if (reason != RS_STOP_SIGNAL && tr->evaluated_step != state->step) {
            if (evaluate(tr, dev, ev,
                         state->epoch_tokens ? epoch_mean(state) : rc->finished_epoch_loss, &best,
                         err) ||
                commit(tr, best, err))
                status = -1;
        } else if (tr->saved_step != state->step) {
            status = commit(tr, 0, err);
        }
    }
    if (status == 0) {
        rs_train_event stopped = {.kind = RS_EV_STOPPED,
                                  .step = state->step,
                                  .epoch = rs_train_epoch_of_step(state),
                                  .reason = reason,
                                  .path = last_path};
        tr->report(tr->ctx, &stopped);
    }
    return status;
}

/* What a step computes with: the shards (each thread's workspace), one
 * batch, and the gradient sum the shards write. Sized for the longest pair
 * of the training data, once, before the first step. */
typedef struct {
    rs_shards shards;
    rs_batch batch;
    float *grads; /* [parameters] */
} step_buffers;

static int step_buffers_init(step_buffers *b, const rs_model *model, const rs_dataset *train,
                             rs_error *err)
{
    const rs_train_config *c = &model->train;
    int max_S = 1, max_T = 1;
    rs_dataset_max_lengths(train, &max_S, &max_T);
    memset(b, 0, sizeof *b);
    if (!(b->grads = rs_calloc(model->layout.total, sizeof(float), err)))
        return -1;
    if (rs_shards_init(&b->shards, model, c->threads, c->batch_size, max_S, max_T, b->grads, err)) {
        free(b->grads);
        return -1;
    }
    /* Shard 0 runs on this thread, whose OpenBLAS buffer is mapped. */
    if (rs_blas_room(b->shards.count - 1, err)) {
        rs_shards_free(&b->shards);
        free(b->grads);
        return -1;
    }
    if (rs_batch_alloc(&b->batch, c->batch_size, max_S, max_T, err)) {
        rs_shards_free(&b->shards);
        free(b->grads);
        return -1;
    }
    return 0;
}

static void step_buffers_free(step_buffers *b)
{
    rs_batch_free(&b->batch);
    rs_shards_free(&b->shards);
    free(b->grads);
}

/* A run in progress: what rs_train's loop carries from one update to the
 * next. The epoch's batch order comes from the RNG state at the epoch's
 * start (epoch_rng starts there and moves on as the order is drawn), so a
 * resumed run regenerates it and skips the batches already done. */
typedef struct {
    trainer *tr;
    run_clock rc;
    step_buffers buf;
    const rs_dataset *train;
    rs_epoch_plan plan; /* order == NULL: not drawn yet */
    rs_rng epoch_rng;
    rs_train_event ev; /* the latest progress and evaluation */
    const char *last_path;
} run;

/* One update: the gradient of train.accumulate batches (fewer at the epoch's
 * end), clipping, Adam, and the sums and counters that follow. */
static int update(run *r, update_result *u, rs_error *err)
{
    trainer *tr = r->tr;
    rs_train_state *state = tr->state;
    const rs_train_config *c = &tr->model->train;
    if (!r->plan.order) {
        r->epoch_rng = state->rng;
        if (rs_epoch_plan_make(&r->plan, r->train, c->batch_size, c->batch_tokens, &r->epoch_rng,
                               err))
            return -1;
    }
    /* batches_done is always at the start of an update. */
    const int k = (int)state->batches_done;
    rs_update_batches batches = {r->train, &r->plan, k,
                                 r->plan.batches - k < c->accumulate ? r->plan.batches - k
                                                                     : c->accumulate,
                                 .step = state->step};
    batches.tokens = rs_train_update_tokens(&batches);
    const double t0 = rs_clock_seconds();
    if (rs_train_gradient(&r->buf.shards, &r->buf.batch, tr->model, &batches, &u->loss, &u->gnorm,
                          err))
        return -1;
    if (!isfinite(u->gnorm) || !isfinite(u->loss))
        return not_finite(tr, r->last_path, u->loss, u->gnorm, err);
    u->lr = rs_train_apply(&r->buf.shards, tr->model, state, u->gnorm);
    r->rc.update_s += rs_clock_seconds() - t0;
    r->rc.updates_timed++;
    u->shown_epoch = state->epoch + 1;
    state->batches_done = k + batches.count;
    count_update(tr, &r->rc, u->loss, batches.tokens, u->lr, u->gnorm);
    u->epoch_end = state->batches_done >= r->plan.batches;
    if (u->epoch_end) {
        state->epoch++;
        state->batches_done = 0;
        state->rng = r->epoch_rng;
        rs_epoch_plan_free(&r->plan);
    }
    /* The last step of the planned run: its saves wait for the final
     * evaluation (finish_run), so no checkpoint holds this step unevaluated. */
    u->planned = state->epoch >= c->epochs || (c->max_steps > 0 && state->step >= c->max_steps);
    if (c->log_every > 0 && state->step % c->log_every == 0)
        return write_loss_row(tr, err);
    return 0;
}

/* What follows an update: the progress line when due, the evaluation and the
 * saves of its step (saved after the evaluation of the same step, never
 * before it); *patience_out when the evaluation says to stop. */
static int after_update(run *r, const rs_dataset *dev, const update_result *u, int *patience_out,
                        rs_error *err)
{
    trainer *tr = r->tr;
    const rs_train_state *state = tr->state;
    const rs_train_config *c = &tr->model->train;
    run_clock *rc = &r->rc;
    const double t = rs_clock_seconds(), elapsed = t - rc->start;
    if (t - rc->last_report >= tr->options->report_seconds || state->step == rc->total_steps)
        report_progress(tr, rc, &r->ev, u->shown_epoch, u->gnorm, u->lr, t);
    const int eval_due = c->eval_every > 0 ? state->step % c->eval_every == 0 : u->epoch_end;
    int best = 0;
    r->ev.step = state->step;
    r->ev.epoch = u->shown_epoch;
    r->ev.elapsed_s = elapsed;
    r->ev.tokens_per_s = rc->tokens_since_start / (elapsed > 0 ? elapsed : 1);
    r->ev.lr = u->lr;
    if (eval_due &&
        evaluate(tr, dev, &r->ev, state->epoch_tokens ? epoch_mean(state) : NAN, &best, err))
        return -1;
    if (u->epoch_end) {
        rc->finished_epoch_loss = epoch_mean(state);
        tr->state->epoch_loss = 0.0;
        tr->state->epoch_tokens = 0;
    }
    const int save_due =
        eval_due || u->epoch_end || (c->save_every > 0 && state->step % c->save_every == 0);
    if (save_due && (eval_due || !u->planned) && commit(tr, eval_due && best, err))
        return -1;
    *patience_out = eval_due && r->ev.stop;
    return 0;
}

int rs_train(rs_model *model, rs_train_state *state, const rs_dataset *train, const rs_dataset *dev,
             const rs_train_options *options, rs_train_report report, void *ctx, rs_error *err)
{
    const rs_train_config *c = &model->train;
    if (train->count == 0)
        return rs_fail(err, "no training pairs (all longer than --max-len?)");
    if (c->dev_bleu && (!options->codec || !options->dev_refs))
        return rs_fail(err, "dev BLEU needs the text codec and the dev references");
    char last_path[4200];
    snprintf(last_path, sizeof last_path, "%s/last.ckpt", options->dir);
    int batches_per_epoch;
    if (prepare_run(model, state, train, dev, options, last_path, &batches_per_epoch, err))
        return -1;
    trainer tr = {model, state, options, report, ctx, state->step, -1, {0}};
    run r = {.tr = &tr, .train = train, .epoch_rng = state->rng, .last_path = last_path};
    if (step_buffers_init(&r.buf, model, train, err))
        return -1;
    const int updates_per_epoch = (batches_per_epoch + c->accumulate - 1) / c->accumulate;
    r.rc = (run_clock){.start = rs_clock_seconds(),
                       .limit_s = 60.0 * c->max_minutes,
                       .first_step = state->step,
                       .total_steps = (int64_t)c->epochs * updates_per_epoch,
                       .finished_epoch_loss = NAN,
                       .allreduce_start = rs_dist_allreduce_seconds()};
    r.rc.last_report = r.rc.start;
    if (c->max_steps > 0 && c->max_steps < r.rc.total_steps)
        r.rc.total_steps = c->max_steps;
    int status = 0;
    rs_stop_reason reason = RS_STOP_EPOCHS;
    while (!should_stop(c, state, options, &r.rc, &reason)) {
        update_result u = {0};
        int patience_out = 0;
        if (update(&r, &u, err) || after_update(&r, dev, &u, &patience_out, err)) {
            status = -1;
            break;
        }
        if (patience_out) {
            reason = RS_STOP_PATIENCE;
            break;
        }
    }
    if (status == 0)
        status = finish_run(&tr, dev, &r.ev, &r.rc, reason, last_path, err);
    rs_epoch_plan_free(&r.plan);
    step_buffers_free(&r.buf);
    return status;
}
