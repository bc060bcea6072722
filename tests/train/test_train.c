/* Training end to end in-process: a model trained on a few hundred pairs
 * reproduces its training translations; the same seed gives the same model
 * bit for bit; a resumed run equals an uninterrupted one; beam search agrees
 * with greedy decoding and with forced-decoding scores. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "train/rundir.h"
#include "common/clock.h"
#include "search/beam.h"
#include "search/forced.h"
#include "model/checkpoint.h"
#include "data/dataset.h"
#include "testdir.h"
#include "train/train.h"

static void quiet(void *ctx, const rs_train_event *ev)
{
    (void)ctx;
    (void)ev;
}

typedef struct {
    rs_model model;
    rs_train_state state;
    rs_dataset data;
    char dir[64];
} trained;

/* Reads the first `count` pairs of the reorder corpus, builds vocabularies
 * and a fresh small model. */
static void prepare(trained *t, int count, int epochs)
{
    rs_error err;
    rs_pairs pairs;
    ck_assert_msg(rs_pairs_read_tsv("corpora/reorder/train.tsv", 0, &pairs, &err) == 0, "%s",
                  err.msg);
    const int all = pairs.count;
    pairs.count = count < pairs.count ? count : pairs.count;
    rs_config cfg;
    rs_config_defaults(&cfg);
    cfg.model.emb = 32, cfg.model.hidden = 64, cfg.model.att = 64, cfg.model.maxout = 32,
    cfg.train.batch_size = 16;
    cfg.train.lr = 0.005f, cfg.train.epochs = epochs;
    rs_codec codec;
    rs_tokenized tok;
    ck_assert(rs_codec_init(&codec, &cfg.model, &err) == 0);
    ck_assert(rs_tokenize_pairs(&tok, &pairs, &codec, "reorder", &err) == 0);
    rs_vocab counts[2], vocab[2];
    for (int side = 0; side < 2; side++) {
        ck_assert(rs_vocab_init(&counts[side], &err) == 0);
        ck_assert(rs_count_tokens(&counts[side], &tok, side, &err) == 0);
        ck_assert(rs_vocab_select(&vocab[side], &counts[side], 1, 0, &err) == 0);
        rs_vocab_free(&counts[side]);
    }
    cfg.model.src_vocab = vocab[0].size, cfg.model.tgt_vocab = vocab[1].size;
    ck_assert(rs_model_alloc(&t->model, &cfg, &err) == 0);
    t->model.src_vocab = vocab[0];
    t->model.tgt_vocab = vocab[1];
    rs_rng rng;
    rs_rng_seed(&rng, 7);
    rs_model_init_random(&t->model, &rng);
    ck_assert(rs_train_state_alloc(&t->state, &t->model, &err) == 0);
    ck_assert(rs_dataset_build(&t->data, &tok, &vocab[0], &vocab[1], 0, NULL, &err) == 0);
    rs_tokenized_free(&tok);
    rs_codec_free(&codec);
    pairs.count = all;
    rs_pairs_free(&pairs);
    snprintf(t->dir, sizeof t->dir, "/tmp/rnnsearch-test-XXXXXX");
    ck_assert(mkdtemp(t->dir) != NULL);
}

static void run(trained *t)
{
    rs_error err;
    rs_train_options opt = {.dir = t->dir, .report_seconds = 1e9};
    ck_assert_msg(rs_train(&t->model, &t->state, &t->data, NULL, &opt, quiet, NULL, &err) == 0,
                  "%s", err.msg);
}

static void finish(trained *t)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", t->dir);
    ck_assert(system(cmd) == 0);
    rs_dataset_free(&t->data);
    rs_train_state_free(&t->state);
    rs_model_free(&t->model);
}

START_TEST(small_model_reproduces_its_training_translations)
{
    trained t;
    prepare(&t, 300, 40);
    run(&t);
    rs_decoder dec;
    rs_error err;
    const rs_ready member_ready = rs_ready_plain(&t.model), *member = &member_ready;
    ck_assert(rs_decoder_init(&dec, &member, 1, 1, 1, 16, &err) == 0);
    int exact = 0;
    for (int i = 0; i < t.data.count; i++) {
        rs_hypothesis out;
        const int *src = t.data.src[i];
        ck_assert(rs_greedy(&dec, 1, &src, &t.data.src_len[i], 30, 1, &out, &err) == 0);
        exact += out.count == t.data.tgt_len[i] &&
                 !memcmp(out.ids, t.data.tgt[i], sizeof(int) * (size_t)out.count);
        /* Every soft alignment row sums to one. */
        for (int r = 0; r <= out.count; r++) {
            double sum = 0.0;
            for (int j = 0; j < out.columns; j++)
                sum += out.alignment[r * out.columns + j];
            ck_assert_double_eq_tol(sum, 1.0, 1e-5);
        }
        rs_hypothesis_free(&out);
    }
    ck_assert_int_eq(exact, t.data.count);
    rs_decoder_free(&dec);
    finish(&t);
}
END_TEST

START_TEST(same_seed_same_model_and_resume_matches)
{
    trained a, b;
    prepare(&a, 120, 4);
    prepare(&b, 120, 2);
    run(&a);
    run(&b);
    /* Resume b from its last checkpoint for the remaining two epochs. */
    char path[128];
    rs_error err;
    snprintf(path, sizeof path, "%s/last.ckpt", b.dir);
    rs_model resumed;
    rs_train_state state;
    ck_assert_msg(rs_checkpoint_load(path, &resumed, &state, &err) == 0, "%s", err.msg);
    resumed.train.epochs = 4;
    rs_train_options opt = {.dir = b.dir, .report_seconds = 1e9};
    ck_assert(rs_train(&resumed, &state, &b.data, NULL, &opt, quiet, NULL, &err) == 0);
    ck_assert_int_eq(state.step, a.state.step);
    ck_assert_msg(!memcmp(resumed.params, a.model.params, sizeof(float) * a.model.layout.total),
                  "a resumed run differs from an uninterrupted one");
    ck_assert(!memcmp(state.adam_v, a.state.adam_v, sizeof(float) * a.model.layout.total));
    /* And a second uninterrupted run equals the first, bit for bit. */
    trained c;
    prepare(&c, 120, 4);
    run(&c);
    ck_assert(!memcmp(c.model.params, a.model.params, sizeof(float) * a.model.layout.total));
    rs_train_state_free(&state);
    rs_model_free(&resumed);
    finish(&a);
    finish(&b);
    finish(&c);
}
END_TEST

START_TEST(beam_search_agrees_with_greedy_and_scores)
{
    trained t;
    prepare(&t, 200, 3); /* half-trained: outputs are uncertain, so beams differ */
    run(&t);
    rs_error err;
    const int B = 8, K = 4;
    rs_decoder dec;
    rs_beam_search one, four;
    const rs_ready member_ready = rs_ready_plain(&t.model), *member = &member_ready;
    ck_assert(rs_decoder_init(&dec, &member, 1, B, 1, 16, &err) == 0);
    ck_assert(rs_beam_init(&one, &member, 1, B, 1, 16, &err) == 0);
    ck_assert(rs_beam_init(&four, &member, 1, B, K, 16, &err) == 0);
    const int *src[8];
    for (int b = 0; b < B; b++)
        src[b] = t.data.src[b];
    rs_hypothesis greedy[8], beam1[8], beam4[32];
    rs_beam_options opt = {.beam = 1, .length_penalty = 0.0f, .n_best = 1, .max_len = 25};
    ck_assert(rs_greedy(&dec, B, src, t.data.src_len, 25, 0, greedy, &err) == 0);
    ck_assert(rs_beam_translate(&one, B, src, t.data.src_len, &opt, beam1, &err) == 0);
    opt.beam = K, opt.n_best = K, opt.length_penalty = 1.0f;
    ck_assert(rs_beam_translate(&four, B, src, t.data.src_len, &opt, beam4, &err) == 0);
    /* K = 1 is greedy decoding. */
    for (int b = 0; b < B; b++) {
        ck_assert_int_eq(beam1[b].count, greedy[b].count);
        ck_assert(!memcmp(beam1[b].ids, greedy[b].ids, sizeof(int) * (size_t)greedy[b].count));
        ck_assert_double_eq_tol(beam1[b].logprob, greedy[b].logprob, 1e-4);
    }
    /* The n-best lists are ranked, and each hypothesis' log p is what forced
     * decoding of that output computes. */
    rs_dataset forced = {0};
    int *ids[32], len[32], src_len[32];
    int *srcs[32];
    for (int k = 0; k < B * K; k++) {
        ck_assert(beam4[k].ids != NULL);
        if (k % K)
            ck_assert(beam4[k].score <= beam4[k - 1].score + 1e-9);
        ids[k] = beam4[k].ids;
        len[k] = beam4[k].count;
        srcs[k] = t.data.src[k / K];
        src_len[k] = t.data.src_len[k / K];
    }
    forced.count = B * K, forced.src = srcs, forced.tgt = ids, forced.src_len = src_len,
    forced.tgt_len = len;
    rs_forced scored[32];
    ck_assert(rs_forced_decode(&member, 1, &forced, 16, 0, scored, &err) == 0);
    for (int k = 0; k < B * K; k++) {
        const double logprob = scored[k].logprob;
        ck_assert_double_eq_tol(beam4[k].logprob, logprob, 1e-4 * fmax(1.0, fabs(logprob)));
        rs_forced_free(&scored[k]);
    }
    for (int b = 0; b < B; b++) {
        rs_hypothesis_free(&greedy[b]);
        rs_hypothesis_free(&beam1[b]);
    }
    for (int k = 0; k < B * K; k++)
        rs_hypothesis_free(&beam4[k]);
    rs_beam_free(&one);
    rs_beam_free(&four);
    rs_decoder_free(&dec);
    finish(&t);
}
END_TEST

/* A non-finite loss stops training with the step number and advice, and
 * leaves last.ckpt as the last good step saved it (no batch silently skipped). */
START_TEST(a_non_finite_loss_stops_and_keeps_the_last_checkpoint)
{
    trained t;
    prepare(&t, 40, 1);
    run(&t);
    char path[128];
    snprintf(path, sizeof path, "%s/last.ckpt", t.dir);
    size_t before_size, after_size;
    unsigned char *before = testfile_read(path, &before_size);
    const long long step = (long long)t.state.step;
    t.model.train.epochs = 2;
    t.model.w.out_bw[RS_EOS] = NAN;
    rs_error err;
    rs_train_options opt = {.dir = t.dir, .report_seconds = 1e9};
    ck_assert(rs_train(&t.model, &t.state, &t.data, NULL, &opt, quiet, NULL, &err) != 0);
    char expected[64];
    snprintf(expected, sizeof expected, "step %lld:", step + 1);
    ck_assert_msg(strstr(err.msg, expected) && strstr(err.msg, "--lr") && strstr(err.msg, "--clip"),
                  "%s", err.msg);
    ck_assert_int_eq(t.state.step, step);
    unsigned char *after = testfile_read(path, &after_size);
    ck_assert(before_size == after_size && !memcmp(before, after, before_size));
    free(before);
    free(after);
    finish(&t);
}
END_TEST

typedef struct {
    volatile sig_atomic_t stop;
    int64_t stop_at;
    int stopped;
    rs_stop_reason reason;
} stopper;

static void stop_at_step(void *ctx, const rs_train_event *ev)
{
    stopper *s = ctx;
    if (ev->kind == RS_EV_PROGRESS && ev->step == s->stop_at)
        s->stop = 1;
    if (ev->kind == RS_EV_STOPPED)
        s->stopped++, s->reason = ev->reason;
}

/* The stop flag (set by the program's signal handler) ends training after
 * the current step with last.ckpt saved, and says why it stopped. */
START_TEST(a_stop_request_saves_the_current_step)
{
    trained t;
    prepare(&t, 120, 3);
    stopper s = {.stop_at = 3};
    rs_error err;
    rs_train_options opt = {.dir = t.dir, .report_seconds = 0, .stop = &s.stop};
    ck_assert_msg(rs_train(&t.model, &t.state, &t.data, NULL, &opt, stop_at_step, &s, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(s.stopped, 1);
    ck_assert_int_eq(s.reason, RS_STOP_SIGNAL);
    ck_assert_int_eq(t.state.step, 3);
    rs_model m;
    rs_train_state st;
    char path[128];
    snprintf(path, sizeof path, "%s/last.ckpt", t.dir);
    ck_assert_msg(rs_checkpoint_load(path, &m, &st, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(st.step, 3);
    ck_assert_int_eq(st.batches_done, 3);
    ck_assert(!memcmp(m.params, t.model.params, sizeof(float) * m.layout.total));
    rs_train_state_free(&st);
    rs_model_free(&m);
    /* Then running to the end reports why it stopped. */
    s.stop = 0, s.stop_at = -1;
    ck_assert(rs_train(&t.model, &t.state, &t.data, NULL, &opt, stop_at_step, &s, &err) == 0);
    ck_assert_int_eq(s.stopped, 2);
    ck_assert_int_eq(s.reason, RS_STOP_EPOCHS);
    ck_assert_int_eq(t.state.epoch, 3);
    finish(&t);
}
END_TEST

/* Whether DIR/step-STEP.ckpt exists, for steps 1..last, as a list "3 6 9". */
static void step_files(const char *dir, int last, char *out, size_t size)
{
    out[0] = 0;
    for (int step = 1; step <= last; step++) {
        char path[160];
        snprintf(path, sizeof path, "%s/step-%d.ckpt", dir, step);
        if (access(path, F_OK) == 0)
            snprintf(out + strlen(out), size - strlen(out), "%s%d", out[0] ? " " : "", step);
    }
}

/* --keep-last K: the K most recent saves of the regular interval stay as
 * step-N.ckpt (every --save-every steps, else every evaluation); the saves
 * at epochs' ends between them do not push one out of the window;
 * --overwrite's clearing removes them with the rest. */
START_TEST(keep_last_keeps_the_most_recent_step_checkpoints)
{
    trained t;
    prepare(&t, 120, 2); /* 8 batches an epoch: saves at 3, 6, 8, 9, 12, 15, 16 */
    t.model.train.save_every = 3;
    t.model.train.keep_last = 3;
    run(&t);
    char kept[128];
    step_files(t.dir, 16, kept, sizeof kept);
    ck_assert_str_eq(kept, "9 12 15");
    char path[160];
    size_t a_size, b_size;
    snprintf(path, sizeof path, "%s/step-15.ckpt", t.dir);
    unsigned char *a = testfile_read(path, &a_size);
    rs_model m;
    rs_train_state st;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(path, &m, &st, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(st.step, 15);
    rs_train_state_free(&st);
    rs_model_free(&m);
    snprintf(path, sizeof path, "%s/last.ckpt", t.dir);
    unsigned char *b = testfile_read(path, &b_size);
    ck_assert(a_size != b_size || memcmp(a, b, a_size)); /* last.ckpt is step 16's */
    free(a);
    free(b);
    ck_assert(rs_train_dir_has_model(t.dir));
    ck_assert(rs_train_clear_dir(t.dir, &err) == 0);
    ck_assert(!rs_train_dir_has_model(t.dir));
    finish(&t);
}
END_TEST

/* Without --save-every the interval is the evaluations': every 5 steps
 * here, the epochs' ends (8, 16) saving last.ckpt only. */
START_TEST(keep_last_without_save_every_keeps_the_evaluations)
{
    trained t;
    prepare(&t, 120, 2);
    t.model.train.eval_every = 5;
    t.model.train.keep_last = 2;
    run(&t);
    char kept[128];
    step_files(t.dir, 16, kept, sizeof kept);
    ck_assert_str_eq(kept, "10 15");
    finish(&t);
}
END_TEST

/* The time limit: the report callback holds the save of the first
 * evaluation's step (5, last.ckpt written after best.ckpt) until a quarter
 * of the shortest step so far before the limit. The run must stop there, the next step not
 * fitting, with that one evaluation; checking only whether the limit had
 * passed ran step 6 across it and evaluated again. */
typedef struct {
    double limit_s, start;               /* start: the run's clock, from the first progress event */
    double last_progress, shortest_step; /* the shortest time between two progress events */
    int devs;
    int64_t last_dev_step, stopped_step;
    rs_stop_reason reason;
} time_limit_probe;

static void hold_first_evaluation(void *ctx, const rs_train_event *ev)
{
    time_limit_probe *p = ctx;
    if (ev->kind == RS_EV_PROGRESS) {
        const double now = rs_clock_seconds();
        if (p->start == 0)
            p->start = now - ev->elapsed_s;
        else if (p->shortest_step == 0 || now - p->last_progress < p->shortest_step)
            p->shortest_step = now - p->last_progress;
        p->last_progress = now;
    }
    if (ev->kind == RS_EV_DEV)
        p->devs++, p->last_dev_step = ev->step;
    if (ev->kind == RS_EV_SAVED && p->devs == 1 && strstr(ev->path, "/last.ckpt")) {
        /* A quarter of the shortest step: less than the mean update the
         * run predicts by, less than the step that would follow. */
        while (rs_clock_seconds() - p->start < p->limit_s - p->shortest_step / 4) {
            const struct timespec tick = {0, 100000};
            nanosleep(&tick, NULL);
        }
    }
    if (ev->kind == RS_EV_STOPPED)
        p->stopped_step = ev->step, p->reason = ev->reason;
}

START_TEST(time_limit_takes_no_step_past_it)
{
    trained t;
    prepare(&t, 120, 1000);
    t.model.train.eval_every = 5;
    /* 2 s: room for five steps of this model under a sanitizer on a loaded machine. */
    t.model.train.max_minutes = 2.0f / 60.0f;
    time_limit_probe p = {.limit_s = 60.0 * (double)t.model.train.max_minutes};
    rs_error err;
    rs_train_options opt = {.dir = t.dir, .report_seconds = 0};
    ck_assert_msg(
        rs_train(&t.model, &t.state, &t.data, &t.data, &opt, hold_first_evaluation, &p, &err) == 0,
        "%s", err.msg);
    ck_assert_int_eq(p.reason, RS_STOP_TIME);
    ck_assert_int_eq(p.stopped_step, 5);
    ck_assert_int_eq(p.devs, 1);
    ck_assert_int_eq(p.last_dev_step, 5);
    ck_assert_int_eq(t.state.step, 5);
    rs_model m;
    rs_train_state st;
    char path[128];
    snprintf(path, sizeof path, "%s/last.ckpt", t.dir);
    ck_assert_msg(rs_checkpoint_load(path, &m, &st, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(st.step, 5);
    rs_train_state_free(&st);
    rs_model_free(&m);
    finish(&t);
}
END_TEST

static void first_progress(void *ctx, const rs_train_event *ev)
{
    rs_train_event *first = ctx;
    if (ev->kind == RS_EV_PROGRESS && first->step == 0)
        *first = *ev;
}

/* --accumulate K: one update from K batches has the loss and the gradient of
 * one batch holding all their pairs (the per-token mean over all of them),
 * and an epoch has ceil(batches / K) updates. */
START_TEST(accumulated_batches_give_the_gradient_of_their_union)
{
    rs_train_event first[2];
    int64_t steps[2];
    for (int run_index = 0; run_index < 2; run_index++) {
        trained t;
        prepare(&t, 48, 1);
        t.model.train.batch_size = run_index == 0 ? 48 : 16;
        t.model.train.accumulate = run_index == 0 ? 1 : 3;
        memset(&first[run_index], 0, sizeof first[run_index]);
        rs_error err;
        rs_train_options opt = {.dir = t.dir, .report_seconds = 0};
        ck_assert_msg(rs_train(&t.model, &t.state, &t.data, NULL, &opt, first_progress,
                               &first[run_index], &err) == 0,
                      "%s", err.msg);
        steps[run_index] = t.state.step;
        finish(&t);
    }
    ck_assert_int_eq(steps[0], 1);
    ck_assert_int_eq(steps[1], 1);
    ck_assert_double_eq_tol(first[1].loss, first[0].loss, 1e-6 * first[0].loss);
    ck_assert_double_eq_tol(first[1].gnorm, first[0].gnorm, 1e-5 * first[0].gnorm);
    /* 7 batches, K = 3: updates of 3, 3 and 1 batches. */
    trained t;
    prepare(&t, 7 * 16, 2);
    t.model.train.accumulate = 3;
    run(&t);
    ck_assert_int_eq(t.state.step, 6);
    finish(&t);
}
END_TEST

/* --batch-tokens N: batches of at most N padded target tokens (and at most
 * batch_size pairs), every pair once, the same number of batches each epoch. */
START_TEST(token_batches_respect_their_budget)
{
    trained t;
    prepare(&t, 300, 1);
    rs_error err;
    int batches = -1;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        rs_rng rng;
        rs_rng_seed(&rng, seed);
        rs_epoch_plan plan;
        ck_assert(rs_epoch_plan_make(&plan, &t.data, 64, 60, &rng, &err) == 0);
        char *seen = calloc((size_t)t.data.count, 1);
        ck_assert_ptr_nonnull(seen);
        for (int k = 0; k < plan.batches; k++) {
            const int size = plan.start[k + 1] - plan.start[k];
            int longest = 0;
            ck_assert(size >= 1 && size <= 64);
            for (int p = plan.start[k]; p < plan.start[k + 1]; p++) {
                const int i = plan.order[p];
                ck_assert(!seen[i]);
                seen[i] = 1;
                if (t.data.tgt_len[i] + 1 > longest)
                    longest = t.data.tgt_len[i] + 1;
            }
            ck_assert_msg(size == 1 || size * longest <= 60, "batch %d: %d x %d tokens", k, size,
                          longest);
        }
        for (int i = 0; i < t.data.count; i++)
            ck_assert(seen[i]);
        free(seen);
        ck_assert(batches < 0 || batches == plan.batches);
        batches = plan.batches;
        rs_epoch_plan_free(&plan);
    }
    ck_assert_int_gt(batches, (300 + 63) / 64); /* the budget, not the pair count, cut them */
    t.model.train.batch_size = 64;
    t.model.train.batch_tokens = 60;
    run(&t);
    ck_assert_int_eq(t.state.step, batches);
    finish(&t);
}
END_TEST

/* Forced decoding of the reorder test pairs: the argmax source position of
 * each target word (</s> row and column left out) against the generator's
 * gold links (corpora/reorder/test.align, Pharaoh i-j, source-target). */
START_TEST(hard_alignments_match_the_known_word_correspondence)
{
    trained t;
    prepare(&t, 3000, 3);
    run(&t);
    rs_error err;
    rs_config cfg = rs_model_settings(&t.model);
    rs_codec codec;
    rs_pairs pairs;
    rs_tokenized tok;
    rs_dataset test;
    ck_assert(rs_codec_init(&codec, &cfg.model, &err) == 0);
    ck_assert(rs_pairs_read_tsv("corpora/reorder/test.tsv", 0, &pairs, &err) == 0);
    ck_assert(rs_tokenize_pairs(&tok, &pairs, &codec, "test", &err) == 0);
    ck_assert(
        rs_dataset_build(&test, &tok, &t.model.src_vocab, &t.model.tgt_vocab, 0, NULL, &err) == 0);
    FILE *gold = fopen("corpora/reorder/test.align", "r");
    ck_assert(gold != NULL);
    rs_workspace ws;
    rs_batch batch;
    ck_assert(rs_workspace_alloc(&ws, &t.model, 1, 16, 16, &err) == 0);
    ck_assert(rs_batch_alloc(&batch, 1, 16, 16, &err) == 0);
    long links = 0, agree = 0;
    char line[1024];
    for (int i = 0; i < test.count; i++) {
        ck_assert(fgets(line, sizeof line, gold) != NULL);
        ck_assert(rs_batch_from_dataset(&batch, &test, &i, 1, &err) == 0);
        const rs_network_weights w = rs_network_weights_of(&t.model);
        rs_network_forward(&ws, &w, &batch);
        int offset = 0, src_pos, tgt_pos, used;
        while (sscanf(line + offset, "%d-%d%n", &src_pos, &tgt_pos, &used) == 2) {
            offset += used;
            ck_assert(tgt_pos < test.tgt_len[i] && src_pos < test.src_len[i]);
            const float *row = ws.alpha + (size_t)tgt_pos * batch.S;
            int best = 0;
            for (int j = 1; j < test.src_len[i]; j++)
                if (row[j] > row[best])
                    best = j;
            agree += best == src_pos;
            links++;
        }
    }
    fclose(gold);
    fprintf(stderr, "reorder alignments: %ld of %ld gold links (%.2f%%)\n", agree, links,
            100.0 * agree / links);
    ck_assert_int_gt(links, 1000);
    ck_assert_msg(agree >= 0.9 * links, "only %ld of %ld links agree", agree, links);
    rs_batch_free(&batch);
    rs_workspace_free(&ws);
    rs_dataset_free(&test);
    rs_tokenized_free(&tok);
    rs_pairs_free(&pairs);
    rs_codec_free(&codec);
    finish(&t);
}
END_TEST

/* rs_train_learning_rate against its formulas, worked by hand at chosen steps
 * (w = 4, so w^-1.5 = 1/8 and w^0.5 = 2). */
static rs_config schedule(int kind, float lr, int warmup, int hidden)
{
    rs_config c;
    rs_config_defaults(&c);
    c.train.lr_schedule = kind;
    c.train.lr = lr;
    c.train.warmup = warmup;
    c.model.hidden = hidden;
    return c;
}

#define ck_assert_lr(cfg, scale, step, want)                                                       \
    ck_assert_msg(                                                                                 \
        fabs(rs_train_learning_rate(&(cfg).train, (cfg).model.hidden, (scale), (step)) -           \
             (want)) <= 1e-6 * (want),                                                             \
        "step %d: lr %.9g, want %.9g", (int)(step),                                                \
        (double)rs_train_learning_rate(&(cfg).train, (cfg).model.hidden, (scale), (step)),         \
        (double)(want))

START_TEST(inverse_sqrt_peaks_at_lr_after_warmup)
{
    /* lr · w^0.5 · min(step^-0.5, step · w^-1.5), lr = 0.5, w = 4 */
    const rs_config c = schedule(RS_LR_INVERSE_SQRT, 0.5f, 4, 16);
    ck_assert_lr(c, 1.0f, 1, 0.125);  /* 0.5 · 2 · 1/8 */
    ck_assert_lr(c, 1.0f, 2, 0.25);   /* 0.5 · 2 · 2/8 */
    ck_assert_lr(c, 1.0f, 4, 0.5);    /* the peak: lr itself */
    ck_assert_lr(c, 1.0f, 16, 0.25);  /* 0.5 · 2 · 16^-0.5 */
    ck_assert_lr(c, 1.0f, 100, 0.1);  /* 0.5 · 2 · 0.1 */
    ck_assert_lr(c, 0.5f, 100, 0.05); /* a plateau decay multiplies it */
    ck_assert(rs_train_learning_rate(&c.train, c.model.hidden, 1.0f, 0) == 0.0f);
}
END_TEST

START_TEST(noam_scales_by_the_hidden_size)
{
    /* lr · n^-0.5 · min(step^-0.5, step · w^-1.5), lr = 2, n = 16, w = 4 */
    const rs_config c = schedule(RS_LR_NOAM, 2.0f, 4, 16);
    ck_assert_lr(c, 1.0f, 1, 0.0625); /* 2 · 1/4 · 1/8 */
    ck_assert_lr(c, 1.0f, 4, 0.25);   /* 2 · 1/4 · 1/2 */
    ck_assert_lr(c, 1.0f, 16, 0.125); /* 2 · 1/4 · 1/4 */
    ck_assert_lr(c, 1.0f, 400, 0.025);
}
END_TEST

START_TEST(constant_and_plateau_warm_up_linearly)
{
    for (int kind = RS_LR_CONSTANT; kind <= RS_LR_PLATEAU; kind += RS_LR_PLATEAU) {
        const rs_config c = schedule(kind, 0.01f, 4, 16);
        /* The float arithmetic of before the schedules, bit for bit. */
        ck_assert(rs_train_learning_rate(&c.train, c.model.hidden, 0.5f, 1) ==
                  0.01f * 0.5f * (1.0f / 4.0f));
        ck_assert(rs_train_learning_rate(&c.train, c.model.hidden, 0.5f, 3) ==
                  0.01f * 0.5f * (3.0f / 4.0f));
        ck_assert(rs_train_learning_rate(&c.train, c.model.hidden, 0.5f, 4) == 0.01f * 0.5f);
        ck_assert(rs_train_learning_rate(&c.train, c.model.hidden, 1.0f, 1000) == 0.01f);
        const rs_config none = schedule(kind, 0.01f, 0, 16);
        ck_assert(rs_train_learning_rate(&none.train, none.model.hidden, 0.7f, 1) == 0.01f * 0.7f);
    }
}
END_TEST

START_TEST(schedules_refuse_what_they_cannot_use)
{
    rs_error err;
    rs_config c = schedule(RS_LR_NOAM, 1.0f, 0, 16);
    ck_assert_int_ne(rs_config_check(&c, &err), 0);
    ck_assert_msg(strstr(err.msg, "--lr-schedule noam needs --warmup") != NULL, "%s", err.msg);
    c = schedule(RS_LR_PLATEAU, 1.0f, 0, 16);
    ck_assert_int_ne(rs_config_check(&c, &err), 0);
    ck_assert_msg(strstr(err.msg, "plateau needs --lr-decay") != NULL, "%s", err.msg);
    c.train.lr_decay = 0.5f;
    ck_assert_int_eq(rs_config_check(&c, &err), 0);
    ck_assert_int_eq(rs_config_set(&c, "lr_schedule", "inverse-sqrt", &err), 0);
    ck_assert_int_eq(c.train.lr_schedule, RS_LR_INVERSE_SQRT);
    ck_assert_int_ne(rs_config_set(&c, "lr_schedule", "cosine", &err), 0);
}
END_TEST

Suite *train_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("end to end");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, small_model_reproduces_its_training_translations);
    tcase_add_test(tc, same_seed_same_model_and_resume_matches);
    tcase_add_test(tc, beam_search_agrees_with_greedy_and_scores);
    tcase_add_test(tc, hard_alignments_match_the_known_word_correspondence);
    tcase_add_test(tc, a_non_finite_loss_stops_and_keeps_the_last_checkpoint);
    tcase_add_test(tc, a_stop_request_saves_the_current_step);
    tcase_add_test(tc, keep_last_keeps_the_most_recent_step_checkpoints);
    tcase_add_test(tc, keep_last_without_save_every_keeps_the_evaluations);
    tcase_add_test(tc, time_limit_takes_no_step_past_it);
    tcase_add_test(tc, accumulated_batches_give_the_gradient_of_their_union);
    tcase_add_test(tc, token_batches_respect_their_budget);
    suite_add_tcase(s, tc);
    TCase *lr = tcase_create("learning rate");
    tcase_add_test(lr, inverse_sqrt_peaks_at_lr_after_warmup);
    tcase_add_test(lr, noam_scales_by_the_hidden_size);
    tcase_add_test(lr, constant_and_plateau_warm_up_linearly);
    tcase_add_test(lr, schedules_refuse_what_they_cannot_use);
    suite_add_tcase(s, lr);
    return s;
}
