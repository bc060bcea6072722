#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bleu.h"
#include "checkpoint.h"
#include "decode.h"
#include "network.h"
#include "optimizer.h"
#include "shards.h"
#include "train.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void max_lengths(const rs_dataset *d, int *max_S, int *max_T)
{
    for (int i = 0; d && i < d->count; i++) {
        if (d->src_len[i] + 1 > *max_S)
            *max_S = d->src_len[i] + 1;
        if (d->tgt_len[i] + 1 > *max_T)
            *max_T = d->tgt_len[i] + 1;
    }
}

static int compare_int_pairs(const void *pa, const void *pb)
{
    const int *a = pa, *b = pb;
    return a[0] != b[0] ? a[0] - b[0] : a[1] - b[1];
}

/* Pair indices sorted by source length (then index): batches of similar length. */
static int *length_order(const rs_dataset *d, rs_error *err)
{
    int *keyed = rs_calloc((size_t)(d->count ? d->count : 1) * 2, sizeof(int), err);
    int *order = rs_calloc((size_t)(d->count ? d->count : 1), sizeof(int), err);
    if (!keyed || !order) {
        free(keyed);
        free(order);
        return NULL;
    }
    for (int i = 0; i < d->count; i++) {
        keyed[2 * i] = d->src_len[i];
        keyed[2 * i + 1] = i;
    }
    qsort(keyed, (size_t)d->count, 2 * sizeof(int), compare_int_pairs);
    for (int i = 0; i < d->count; i++)
        order[i] = keyed[2 * i + 1];
    free(keyed);
    return order;
}

int rs_score_dataset(const rs_model *model, const rs_dataset *data, int batch_size,
                     double *logprob, rs_error *err)
{
    int max_S = 1, max_T = 1;
    max_lengths(data, &max_S, &max_T);
    rs_workspace ws;
    rs_batch batch;
    int *order = length_order(data, err);
    if (!order)
        return -1;
    if (rs_workspace_alloc(&ws, model, batch_size, max_S, max_T, err)) {
        free(order);
        return -1;
    }
    if (rs_batch_alloc(&batch, batch_size, max_S, max_T, err)) {
        rs_workspace_free(&ws);
        free(order);
        return -1;
    }
    int status = 0;
    for (int from = 0; from < data->count && status == 0; from += batch_size) {
        int B = data->count - from < batch_size ? data->count - from : batch_size;
        if (rs_batch_from_dataset(&batch, data, order + from, B, err)) {
            status = -1;
            break;
        }
        rs_network_forward(&ws, model, &batch);
        for (int b = 0; b < B; b++) {
            double sum = 0.0;
            for (int t = 0; t < batch.T; t++)
                sum += ws.nll[t * B + b];
            logprob[order[from + b]] = -sum;
        }
    }
    rs_batch_free(&batch);
    rs_workspace_free(&ws);
    free(order);
    return status;
}

/* Greedy translations of the dev set: the exact-match rate, and BLEU when
 * the options carry a codec and references (else bleu = -1). */
static int dev_translate(const rs_model *model, const rs_dataset *dev,
                         const rs_train_options *options, int batch_size, double *exact,
                         double *bleu, rs_error *err)
{
    int max_S = 1, max_T = 1;
    max_lengths(dev, &max_S, &max_T);
    rs_decoder dec;
    if (rs_decoder_init(&dec, model, batch_size, max_S, err))
        return -1;
    int *order = length_order(dev, err);
    rs_translation *out = rs_calloc((size_t)batch_size, sizeof *out, err);
    const char **words = rs_calloc((size_t)2 * max_T + 12, sizeof(char *), err);
    if (!order || !out || !words) {
        free(order);
        free(out);
        free(words);
        rs_decoder_free(&dec);
        return -1;
    }
    const int with_bleu = options->codec && options->dev_refs;
    rs_bleu_stats stats;
    rs_bleu_stats_init(&stats);
    int correct = 0, status = 0;
    for (int from = 0; from < dev->count && status == 0; from += batch_size) {
        int B = dev->count - from < batch_size ? dev->count - from : batch_size;
        const int *src[B];
        int count[B];
        for (int b = 0; b < B; b++) {
            src[b] = dev->src[order[from + b]];
            count[b] = dev->src_len[order[from + b]];
        }
        if (rs_greedy(&dec, B, src, count, 2 * max_T + 10, 0, out, err)) {
            status = -1;
            break;
        }
        for (int b = 0; b < B; b++) {
            int i = order[from + b];
            correct += out[b].len == dev->tgt_len[i] &&
                       !memcmp(out[b].ids, dev->tgt[i], sizeof(int) * (size_t)out[b].len);
            if (with_bleu && status == 0) {
                char *text = NULL;
                const char *ref = options->dev_refs[dev->line[i]];
                rs_ids_to_tokens(&model->tgt_vocab, out[b].ids, out[b].len, words);
                if (rs_codec_text(options->codec, RS_SIDE_TGT, words, out[b].len, &text, err) ||
                    rs_bleu_stats_add(&stats, text, &ref, 1, NULL, err))
                    status = -1;
                free(text);
            }
            rs_translation_free(&out[b]);
        }
    }
    *exact = dev->count ? (double)correct / dev->count : 0.0;
    *bleu = -1.0;
    if (with_bleu) {
        rs_bleu_result result;
        rs_bleu_compute(&stats, &result);
        *bleu = result.score;
    }
    free(words);
    free(out);
    free(order);
    rs_decoder_free(&dec);
    return status;
}

static int append_log(const char *dir, const rs_train_event *ev, double train_loss, rs_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    FILE *f = fopen(path, "a");
    if (!f)
        return rs_fail(err, "%s: cannot open for appending", path);
    if (ftell(f) == 0)
        fprintf(f, "step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\n");
    /* dev_metric: BLEU when measured, else exact match in percent, else -1. */
    double metric = ev->dev_bleu >= 0 ? ev->dev_bleu : ev->dev_exact >= 0 ? 100 * ev->dev_exact : -1;
    fprintf(f, "%lld\t%d\t%.6f\t%.6f\t%.4f\t%.1f\t%.6g\t%.2f\n", (long long)ev->step, ev->epoch,
            train_loss, ev->dev_loss, metric, ev->tokens_per_s, ev->lr, ev->elapsed_s);
    if (fclose(f))
        return rs_fail(err, "%s: write failed", path);
    return 0;
}

typedef struct {
    rs_model *model;
    rs_train_state *state;
    const rs_train_options *options;
    rs_train_report report;
    void *ctx;
} trainer;

static int save(trainer *tr, const char *file, rs_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tr->options->dir, file);
    if (rs_checkpoint_save(path, tr->model, tr->state, err))
        return -1;
    rs_train_event ev = {.kind = RS_EV_SAVED, .step = tr->state->step, .epoch = tr->state->epoch,
                         .path = path};
    tr->report(tr->ctx, &ev);
    return 0;
}

/* Dev loss (and exact match), best.ckpt when it improved, a log line. */
static int evaluate(trainer *tr, const rs_dataset *dev, rs_train_event *ev, double train_loss,
                    rs_error *err)
{
    rs_train_state *st = tr->state;
    const rs_config *c = &tr->model->cfg;
    ev->kind = RS_EV_DEV;
    ev->dev_loss = NAN;
    ev->dev_ppl = NAN;
    ev->dev_exact = -1.0;
    ev->dev_bleu = -1.0;
    ev->improved = 0;
    ev->stop = 0;
    if (dev && dev->count > 0) {
        double *lp = rs_calloc((size_t)dev->count, sizeof(double), err);
        if (!lp || rs_score_dataset(tr->model, dev, c->batch_size, lp, err)) {
            free(lp);
            return -1;
        }
        double total = 0.0;
        long tokens = 0;
        for (int i = 0; i < dev->count; i++) {
            total -= lp[i];
            tokens += dev->tgt_len[i] + 1;
        }
        free(lp);
        ev->dev_loss = total / (double)tokens;
        ev->dev_ppl = exp(ev->dev_loss);
        const int with_bleu = tr->options->codec && tr->options->dev_refs;
        if ((tr->options->dev_translate || with_bleu) &&
            dev_translate(tr->model, dev, tr->options, c->batch_size, &ev->dev_exact,
                          &ev->dev_bleu, err))
            return -1;
        /* best.ckpt by dev BLEU when it is measured, else by dev loss. */
        if (with_bleu ? ev->dev_bleu > st->best_dev_bleu : ev->dev_loss < st->best_dev_loss)
            ev->improved = 1;
        if (ev->dev_loss < st->best_dev_loss)
            st->best_dev_loss = (float)ev->dev_loss;
        if (with_bleu && ev->dev_bleu > st->best_dev_bleu)
            st->best_dev_bleu = (float)ev->dev_bleu;
        if (ev->improved) {
            st->bad_evals = 0;
        } else {
            st->bad_evals++;
            st->lr_scale *= c->lr_decay;
            ev->stop = c->patience > 0 && st->bad_evals >= c->patience;
        }
    }
    tr->report(tr->ctx, ev);
    if (append_log(tr->options->dir, ev, train_loss, err))
        return -1;
    if (save(tr, "last.ckpt", err))
        return -1;
    /* Without a dev set the latest model is the best one known. */
    if ((ev->improved || !dev || dev->count == 0) && save(tr, "best.ckpt", err))
        return -1;
    return 0;
}

int rs_train(rs_model *model, rs_train_state *state, const rs_dataset *train,
             const rs_dataset *dev, const rs_train_options *options, rs_train_report report,
             void *ctx, rs_error *err)
{
    const rs_config *c = &model->cfg;
    if (train->count == 0)
        return rs_fail(err, "no training pairs (all longer than --max-len?)");
    int max_S = 1, max_T = 1;
    max_lengths(train, &max_S, &max_T);
    const size_t total = model->layout.total;
    char last_path[4200];
    snprintf(last_path, sizeof last_path, "%s/last.ckpt", options->dir);
    if (rs_make_parent_dirs(last_path, err))
        return -1;
    rs_shards shards;
    rs_batch batch;
    rs_epoch_plan plan = {0};
    float *grads = rs_calloc(total, sizeof(float), err);
    if (!grads)
        return -1;
    if (rs_shards_init(&shards, model, c->threads, c->batch_size, max_S, max_T, grads, err)) {
        free(grads);
        return -1;
    }
    if (rs_batch_alloc(&batch, c->batch_size, max_S, max_T, err)) {
        rs_shards_free(&shards);
        free(grads);
        return -1;
    }
    trainer tr = {model, state, options, report, ctx};

    const int batches_per_epoch = (train->count + c->batch_size - 1) / c->batch_size;
    int64_t total_steps = (int64_t)c->epochs * batches_per_epoch;
    if (c->max_steps > 0 && c->max_steps < total_steps)
        total_steps = c->max_steps;
    const int64_t first_step = state->step;
    const double start = now_seconds();
    double last_report = start, window_loss = 0.0, epoch_loss = 0.0, gnorm = 0.0;
    long window_tokens = 0, epoch_tokens = 0, tokens_since_start = 0;
    int status = 0, done = 0;
    rs_train_event ev = {0};

    while (!done && state->epoch < c->epochs) {
        /* The epoch's order comes from the RNG state at the epoch's start, so a
         * resumed run regenerates it and skips the batches already done. */
        rs_rng rng = state->rng;
        if (rs_epoch_plan_make(&plan, train, c->batch_size, &rng, err)) {
            status = -1;
            break;
        }
        for (int k = (int)state->batches_done; k < plan.batches; k++) {
            if ((c->max_steps > 0 && state->step >= c->max_steps) ||
                (c->max_minutes > 0 && now_seconds() - start >= 60.0 * c->max_minutes)) {
                done = 1;
                break;
            }
            int B = plan.start[k + 1] - plan.start[k];
            if (rs_batch_from_dataset(&batch, train, plan.order + plan.start[k], B, err)) {
                status = -1;
                break;
            }
            long tokens = 0;
            for (int b = 0; b < B; b++)
                tokens += batch.tgt_len[b];
            /* Masks from (seed, step): the same on a resumed run. */
            double loss = rs_shards_step(&shards, model, &batch, c->dropout,
                                         ((uint64_t)c->seed << 32) ^ (uint64_t)state->step,
                                         c->label_smoothing, tokens);
            gnorm = shards.grad_norm;
            if (!isfinite(gnorm) || !isfinite(loss)) {
                /* A non-finite step would poison Adam's moments: skip it, say so. */
                rs_train_event skip = {.kind = RS_EV_SKIPPED_BATCH, .step = state->step,
                                       .epoch = state->epoch, .loss = loss, .gnorm = gnorm};
                report(ctx, &skip);
                state->batches_done = k + 1;
                continue;
            }
            const float clip = rs_clip_factor(gnorm, c->clip);
            state->step++;
            float lr = c->lr * state->lr_scale;
            if (c->warmup > 0 && state->step < c->warmup)
                lr *= (float)state->step / (float)c->warmup;
            rs_shards_adam(&shards, model->params, clip, state->adam_m, state->adam_v, lr, c->beta1,
                           c->beta2, c->adam_eps, state->step);
            state->batches_done = k + 1;
            window_loss += loss;
            window_tokens += tokens;
            epoch_loss += loss;
            epoch_tokens += tokens;
            tokens_since_start += tokens;

            double t = now_seconds();
            if (t - last_report >= options->report_seconds || state->step == total_steps) {
                double elapsed = t - start;
                ev = (rs_train_event){.kind = RS_EV_PROGRESS, .step = state->step,
                                      .total_steps = total_steps, .epoch = state->epoch + 1,
                                      .loss = window_loss / (double)window_tokens,
                                      .gnorm = gnorm, .lr = lr, .elapsed_s = elapsed};
                ev.ppl = exp(ev.loss);
                ev.tokens_per_s = tokens_since_start / elapsed;
                double rate = (double)(state->step - first_step) / elapsed;
                ev.eta_s = rate > 0 ? (double)(total_steps - state->step) / rate : 0.0;
                report(ctx, &ev);
                window_loss = 0.0;
                window_tokens = 0;
                last_report = t;
            }
            if (c->save_every > 0 && state->step % c->save_every == 0 && save(&tr, "last.ckpt", err)) {
                status = -1;
                break;
            }
            if (options->eval_every > 0 && state->step % options->eval_every == 0) {
                ev.step = state->step;
                ev.epoch = state->epoch + 1;
                ev.elapsed_s = now_seconds() - start;
                if (evaluate(&tr, dev, &ev, epoch_tokens ? epoch_loss / epoch_tokens : NAN, err)) {
                    status = -1;
                    break;
                }
                if (ev.stop) {
                    done = 1;
                    break;
                }
            }
        }
        rs_epoch_plan_free(&plan);
        if (status)
            break;
        if (state->batches_done >= batches_per_epoch) {
            state->epoch++;
            state->batches_done = 0;
            state->rng = rng;
            ev.step = state->step;
            ev.epoch = state->epoch;
            ev.elapsed_s = now_seconds() - start;
            ev.tokens_per_s = tokens_since_start / ev.elapsed_s;
            ev.lr = c->lr * state->lr_scale;
            if (options->eval_every <= 0 || done) {
                if (evaluate(&tr, dev, &ev, epoch_tokens ? epoch_loss / epoch_tokens : NAN, err)) {
                    status = -1;
                    break;
                }
                done |= ev.stop;
            }
            epoch_loss = 0.0;
            epoch_tokens = 0;
        }
    }
    /* Stopped by --max-steps inside an epoch: save where it stands. */
    if (status == 0 && done && !ev.stop && state->batches_done > 0) {
        ev.step = state->step;
        ev.epoch = state->epoch + 1;
        ev.elapsed_s = now_seconds() - start;
        ev.tokens_per_s = tokens_since_start / (ev.elapsed_s > 0 ? ev.elapsed_s : 1);
        status = evaluate(&tr, dev, &ev, epoch_tokens ? epoch_loss / epoch_tokens : NAN, err);
    }
    rs_epoch_plan_free(&plan);
    rs_batch_free(&batch);
    rs_shards_free(&shards);
    free(grads);
    return status;
}
