/* A call's batches on several workers (src/search/translate.c, opt.workers):
 * the same bits as one worker, greedy and beam with n-best lists and
 * alignments; the workers decode at once, each product on one BLAS thread,
 * and BLAS's threads are as they were after; a lone batch decodes on the
 * caller's thread; a batch that fails fails the call with its message and
 * leaves nothing behind. */
#include <cblas.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nn/linalg.h"
#include "search/translate.h"
#include "testlimit.h"
#include "testskip.h"
#include "tinymodel.h"

enum { SRC_WORDS = 8, TGT_WORDS = 7, SENTENCES = 23, BATCH = 3 };

/* A random model with words s0..s7 → t0..t6, and its codec. */
static void make_model(rs_model *m, rs_codec *codec)
{
    const tiny_shape shape = {RS_RESERVED + SRC_WORDS, RS_RESERVED + TGT_WORDS, 4, 6, 5, 3,
                              RS_ATT_ADDITIVE};
    rs_error err = {{0}};
    tiny_model_shaped(m, &shape, 1.0f, 11);
    ck_assert(!rs_vocab_init(&m->src_vocab, &err) && !rs_vocab_init(&m->tgt_vocab, &err));
    char word[8];
    for (int i = 0; i < SRC_WORDS; i++) {
        snprintf(word, sizeof word, "s%d", i);
        ck_assert_int_eq(rs_vocab_add(&m->src_vocab, word, &err), RS_RESERVED + i);
    }
    for (int i = 0; i < TGT_WORDS; i++) {
        snprintf(word, sizeof word, "t%d", i);
        ck_assert_int_eq(rs_vocab_add(&m->tgt_vocab, word, &err), RS_RESERVED + i);
    }
    m->w.out_bw[RS_EOS] -= 3.0f; /* outputs of some length, not only </s> */
    m->w.out_bw[RS_UNK] += 1.0f; /* and some <unk> to replace */
    ck_assert_msg(!rs_codec_for_model(codec, m, &err), "%s", err.msg);
}

/* SENTENCES sources of 0 to 12 ids (some empty, some <unk>): 8 batches of BATCH. */
static int source_ids[SENTENCES][12];
static rs_source sources[SENTENCES];

static void make_sources(void)
{
    for (int i = 0; i < SENTENCES; i++) {
        const int len = i * 7 % 13;
        for (int k = 0; k < len; k++)
            source_ids[i][k] =
                (i + k) % 9 == 0 ? RS_UNK : RS_RESERVED + (3 * i + 5 * k) % SRC_WORDS;
        sources[i] = (rs_source){source_ids[i], len};
    }
}

/* ---- a GEMM road that computes as OpenBLAS's and notes who asks ---- */

enum { MAX_SEEN = 8 };
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t seen_more = PTHREAD_COND_INITIALIZER;
static pthread_t seen[MAX_SEEN];
static int seen_count;   /* threads that issued products */
static int wait_for;     /* a thread's first product waits (5 s at most) until this many have */
static int blas_low = 0; /* the fewest and most BLAS threads a product saw */
static int blas_high = 0;

static void noting_road(const rs_gemm_call *c)
{
    pthread_mutex_lock(&seen_lock);
    int known = 0;
    for (int i = 0; i < seen_count; i++)
        known |= pthread_equal(seen[i], pthread_self()) != 0;
    if (!known && seen_count < MAX_SEEN) {
        seen[seen_count++] = pthread_self();
        pthread_cond_broadcast(&seen_more);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 5;
        while (seen_count < wait_for &&
               pthread_cond_timedwait(&seen_more, &seen_lock, &until) != ETIMEDOUT)
            continue;
    }
    const int threads = openblas_get_num_threads();
    blas_low = blas_low && blas_low < threads ? blas_low : threads;
    blas_high = blas_high > threads ? blas_high : threads;
    pthread_mutex_unlock(&seen_lock);
    rs_gemm_openblas(c);
}

static void noting_reset(int wait)
{
    seen_count = 0;
    wait_for = wait;
    blas_low = blas_high = 0;
}

/* ---- comparing translations bit for bit ---- */

static void expect_same_hypothesis(const rs_hypothesis *a, const rs_hypothesis *b)
{
    ck_assert_int_eq(a->count, b->count);
    ck_assert(a->count == 0 || !memcmp(a->ids, b->ids, sizeof(int) * (size_t)a->count));
    for (int i = 0; i < a->count; i++)
        ck_assert_str_eq(a->tokens[i], b->tokens[i]);
    ck_assert_str_eq(a->text, b->text);
    ck_assert(!memcmp(&a->logprob, &b->logprob, sizeof a->logprob));
    ck_assert(!memcmp(&a->score, &b->score, sizeof a->score));
    ck_assert_int_eq(a->finished, b->finished);
    ck_assert_int_eq(a->columns, b->columns);
    ck_assert_int_eq(a->alignment != NULL, b->alignment != NULL);
    if (a->alignment)
        ck_assert(!memcmp(a->alignment, b->alignment,
                          sizeof(float) * (size_t)(a->count + 1) * (size_t)a->columns));
}

static void expect_same_translation(const rs_translated *a, const rs_translated *b)
{
    ck_assert_int_eq(a->source_count, b->source_count);
    ck_assert_int_eq(a->count, b->count);
    for (int r = 0; r < (a->count > 0 ? a->count : 1); r++)
        expect_same_hypothesis(&a->hyps[r], &b->hyps[r]);
}

/* sources[0..count) on `workers` workers. */
static void translate_on(const rs_ready *member, const rs_codec *codec, rs_translate_options opt,
                         int workers, int count, rs_translated *out)
{
    rs_translator tr;
    rs_error err = {{0}};
    opt.workers = workers;
    ck_assert_msg(!rs_translator_init(&tr, &member, 1, codec, &opt, &err), "%s", err.msg);
    ck_assert_msg(!rs_translate_sources(&tr, count, sources, out, &err), "%s", err.msg);
    rs_translator_free(&tr);
}

/* What each test starts from: the model, its codec, the sources, and the
 * options of loop 0 (greedy) or 1 (beam 3 with 2-best lists, alignments and
 * <unk> replaced), BATCH sentences a batch. */
typedef struct {
    rs_model m;
    rs_codec codec;
    rs_ready ready;
    const rs_ready *member; /* &ready */
    rs_translate_options opt;
} fixture;

static void fixture_open(fixture *f, int loop)
{
    make_model(&f->m, &f->codec);
    make_sources();
    f->ready = rs_ready_plain(&f->m);
    f->member = &f->ready;
    rs_translate_options_default(&f->opt);
    f->opt.batch_size = BATCH;
    if (loop == 1) {
        f->opt.beam = 3;
        f->opt.n_best = 2;
        f->opt.want_alignment = 1;
        f->opt.replace_unk = 1;
    }
}

static void fixture_close(fixture *f)
{
    rs_codec_free(&f->codec);
    rs_model_free(&f->m);
}

/* Products through the noting road on two BLAS threads (so that one BLAS
 * thread per worker shows), until noting_end; returns the BLAS threads set. */
static rs_gemm_road road_before;
static int blas_before;

static int noting_begin(void)
{
    blas_before = openblas_get_num_threads();
    openblas_set_num_threads(2);
    road_before = rs_set_gemm_road(noting_road);
    return openblas_get_num_threads();
}

static void noting_end(void)
{
    rs_set_gemm_road(road_before);
    openblas_set_num_threads(blas_before);
}

/* Since noting_reset, products came from the calling thread alone, on the
 * `blas` BLAS threads set. */
static void expect_callers_thread_alone(int blas)
{
    ck_assert_int_eq(seen_count, 1);
    ck_assert(pthread_equal(seen[0], pthread_self()));
    ck_assert_int_eq(blas_low, blas);
    ck_assert_int_eq(blas_high, blas);
}

START_TEST(workers_decode_batches_at_once_with_the_same_bits)
{
    fixture f;
    fixture_open(&f, _i);
    const int blas = noting_begin();
    rs_translated one[SENTENCES], many[SENTENCES];
    noting_reset(1);
    translate_on(f.member, &f.codec, f.opt, 1, SENTENCES, one);
    expect_callers_thread_alone(blas);
    int decoded = 0;
    for (int i = 0; i < SENTENCES; i++)
        decoded += one[i].count > 0 && one[i].hyps[0].count > 0;
    ck_assert_int_ge(decoded, SENTENCES / 2);
    for (int workers = 2; workers <= 3; workers++) {
        noting_reset(workers);
        translate_on(f.member, &f.codec, f.opt, workers, SENTENCES, many);
        /* That many threads issued products, each on one BLAS thread; BLAS
         * has its threads back. */
        ck_assert_int_eq(seen_count, workers);
        ck_assert_int_eq(blas_low, 1);
        ck_assert_int_eq(blas_high, 1);
        ck_assert_int_eq(openblas_get_num_threads(), blas);
        for (int i = 0; i < SENTENCES; i++) {
            expect_same_translation(&one[i], &many[i]);
            rs_translated_free(&many[i]);
        }
    }
    for (int i = 0; i < SENTENCES; i++)
        rs_translated_free(&one[i]);
    noting_end();
    fixture_close(&f);
}
END_TEST

/* Fewer sentences than a batch: one batch, decoded on the caller's thread on
 * BLAS's threads as set, whatever the workers; 0 workers is one. */
START_TEST(a_lone_batch_decodes_on_the_callers_thread)
{
    fixture f;
    fixture_open(&f, _i);
    f.opt.batch_size = 8;
    const int blas = noting_begin();
    rs_translated one[5], four[5];
    noting_reset(1);
    translate_on(f.member, &f.codec, f.opt, 0, 5, one);
    expect_callers_thread_alone(blas);
    noting_reset(1);
    translate_on(f.member, &f.codec, f.opt, 4, 5, four);
    expect_callers_thread_alone(blas);
    for (int i = 0; i < 5; i++) {
        expect_same_translation(&one[i], &four[i]);
        rs_translated_free(&one[i]);
        rs_translated_free(&four[i]);
    }
    noting_end();
    /* Negative workers, or more than any command's threads, are refused. */
    rs_translator tr;
    rs_error err = {{0}};
    f.opt.workers = -1;
    ck_assert(rs_translator_init(&tr, &f.member, 1, &f.codec, &f.opt, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "workers -1"));
    f.opt.workers = RS_MAX_THREADS + 1;
    ck_assert(rs_translator_init(&tr, &f.member, 1, &f.codec, &f.opt, &err));
    fixture_close(&f);
}
END_TEST

/* Batches that fail (an empty BPE marker, which rs_translator_init lets
 * through and naming a hypothesis refuses: every batch with an output
 * fails) fail the call on any number of workers, with the first failure's
 * message; out is left empty and, under AddressSanitizer, nothing leaks:
 * neither the hypotheses of batches decoded before nor those of workers
 * still decoding when the failure came. */
START_TEST(a_failing_batch_fails_the_call)
{
    fixture f;
    fixture_open(&f, _i);
    f.opt.remove_bpe = "";
    for (int workers = 1; workers <= 3; workers++) {
        rs_translator tr;
        rs_translated out[SENTENCES];
        rs_error err = {{0}};
        f.opt.workers = workers;
        ck_assert_msg(!rs_translator_init(&tr, &f.member, 1, &f.codec, &f.opt, &err), "%s",
                      err.msg);
        ck_assert(rs_translate_sources(&tr, SENTENCES, sources, out, &err));
        ck_assert_str_eq(err.msg, "the BPE marker is empty");
        ck_assert_int_eq(tr.batch_too_large, 0);
        for (int i = 0; i < SENTENCES; i++)
            ck_assert(out[i].hyps == NULL && out[i].source_tokens == NULL && out[i].count == 0);
        rs_translator_free(&tr);
    }
    fixture_close(&f);
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__)
/* The same words in the same hypotheses, without failing the test (in a
 * child). */
static int same_words(const rs_translated *a, const rs_translated *b)
{
    if (a->count != b->count || a->source_count != b->source_count)
        return 0;
    for (int r = 0; r < a->count; r++)
        if (a->hyps[r].count != b->hyps[r].count || strcmp(a->hyps[r].text, b->hyps[r].text) ||
            memcmp(a->hyps[r].ids, b->hyps[r].ids, sizeof(int) * (size_t)a->hyps[r].count))
            return 0;
    return 1;
}
#endif

/* One batch of three whose workspace cannot be had (a source of 100 000
 * tokens at beam 1000, in a child whose address space may grow by 1 GB)
 * fails the call on two workers with its own message and batch_too_large;
 * the translator then translates the other sentences as one worker did.
 * On OpenBLAS's road, whose bits do not depend on its threads. (Not under
 * AddressSanitizer, whose shadow memory a limit cannot leave room for.) */
START_TEST(a_batch_too_large_fails_the_call)
{
#if defined(__SANITIZE_ADDRESS__)
    test_skip("translate: an address-space limit cannot run under AddressSanitizer");
#else
    enum { LONG = RS_MAX_LENGTH, SHORT = SENTENCES - 1 };
    fixture f;
    fixture_open(&f, 0);
    const rs_ready *member = f.member;
    rs_translate_options opt = f.opt;
    opt.beam = RS_MAX_BEAM;
    opt.max_src_len = LONG;
    ck_assert_double_gt(rs_decoder_bytes(&member, 1, BATCH, RS_MAX_BEAM, LONG + 1),
                        4.0 * (1 << 30));
    static int long_ids[LONG];
    for (int k = 0; k < LONG; k++)
        long_ids[k] = RS_RESERVED;
    sources[SHORT] = (rs_source){long_ids, LONG};
    rs_gemm_road road = rs_set_gemm_road(NULL);
    rs_translated want[SHORT];
    translate_on(member, &f.codec, opt, 1, SHORT, want);
    pid_t pid = testlimit_fork((size_t)1 << 30);
    if (pid == 0) {
        rs_translator tr;
        rs_translated got[SENTENCES];
        rs_error err = {{0}};
        opt.workers = 2;
        if (rs_translator_init(&tr, &member, 1, &f.codec, &opt, &err))
            _exit(5);
        if (!rs_translate_sources(&tr, SENTENCES, sources, got, &err))
            _exit(6);
        if (!tr.batch_too_large || !strstr(err.msg, "of up to 100000 tokens together"))
            _exit(7);
        for (int i = 0; i < SENTENCES; i++)
            if (got[i].hyps || got[i].count)
                _exit(8);
        if (rs_translate_sources(&tr, SHORT, sources, got, &err) || tr.batch_too_large)
            _exit(9);
        for (int i = 0; i < SHORT; i++)
            if (!same_words(&got[i], &want[i]))
                _exit(10);
        _exit(0);
    }
    const int status = testlimit_wait(pid);
    rs_set_gemm_road(road);
    ck_assert_msg(status == 0,
                  "child status %d (6: it did not fail, 7: not with the batch's message, 8: out "
                  "not emptied, 9: no translation after, 10: another one)",
                  status);
    for (int i = 0; i < SHORT; i++)
        rs_translated_free(&want[i]);
    fixture_close(&f);
#endif
}
END_TEST

Suite *translate_workers_suite(void)
{
    Suite *s = suite_create("translate_workers");
    TCase *tc = tcase_create("workers");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, workers_decode_batches_at_once_with_the_same_bits, 0, 2);
    tcase_add_loop_test(tc, a_lone_batch_decodes_on_the_callers_thread, 0, 2);
    tcase_add_loop_test(tc, a_failing_batch_fails_the_call, 0, 2);
    tcase_add_test(tc, a_batch_too_large_fails_the_call);
    suite_add_tcase(s, tc);
    return s;
}
