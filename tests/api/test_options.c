/* The C API's 1.2 options over tiny saved models: an ensemble's weights,
 * int8 decoding and the lexical shortlist, each against what the command
 * line gives (`translate --weights`, `--int8`, `--shortlist`) or the exact
 * float search, each bad value a status and a message, and an older
 * caller's smaller structure still taken. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/rnnsearch.h"
#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"
#include "tinymodel.h"

static char dir[64], path[256], other[256], table[256], input[256];
static rnnsearch_error fresh;

#define FAILS(call, needle)                                                                        \
    do {                                                                                           \
        memset(&fresh, 0, sizeof fresh);                                                           \
        ck_assert_int_eq((call), -1);                                                              \
        ck_assert_msg(strstr(fresh.message, needle), "%s: '%s' does not say '%s'", #call,          \
                      fresh.message, needle);                                                      \
    } while (0)

static const char *const lines[] = {"das haus", "haus das das", "das"};
enum { N = 3 };

static void write_file(const char *file, const char *text)
{
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert(!fclose(f));
}

/* Two tiny models with the same words (source <4 reserved> "das" "haus",
 * target <4 reserved> "the") and other hidden sizes: dir/m.ckpt, dir/o.ckpt;
 * a lexical table listing every target word, and the lines as a file. */
static void setup(void)
{
    rs_error err = {{0}};
    rs_model a, b;
    testdir_make(dir, "rs_api_options");
    snprintf(path, sizeof path, "%s/m.ckpt", dir);
    snprintf(other, sizeof other, "%s/o.ckpt", dir);
    snprintf(table, sizeof table, "%s/lex.tsv", dir);
    snprintf(input, sizeof input, "%s/in.txt", dir);
    tiny_model_with_words(&a, 5, "haus", 7);
    tiny_model_with_words(&b, 4, "haus", 8);
    ck_assert_msg(!rs_checkpoint_save(path, &a, NULL, &err), "%s", err.msg);
    ck_assert_msg(!rs_checkpoint_save(other, &b, NULL, &err), "%s", err.msg);
    rs_model_free(&a);
    rs_model_free(&b);
    write_file(table, "<unk>\tthe\t1\ndas\tthe\t1\nhaus\tthe\t1\n");
    write_file(input, "das haus\nhaus das das\ndas\n");
}

static void teardown(void)
{
    testdir_remove(dir);
}

static rnnsearch_model *load(const char *file)
{
    rnnsearch_error err = {{0}};
    rnnsearch_model *m = NULL;
    ck_assert_msg(!rnnsearch_model_load(file, &m, &err), "%s", err.message);
    return m;
}

/* The lines through a translator over count models with opt. */
static void translate(const rnnsearch_model *const *models, int count, const rnnsearch_options *opt,
                      rnnsearch_translation *out)
{
    rnnsearch_error err = {{0}};
    rnnsearch_translator *tr = NULL;
    ck_assert_msg(!rnnsearch_translator_new_ensemble(models, count, opt, &tr, &err), "%s",
                  err.message);
    ck_assert_msg(!rnnsearch_translate(tr, N, lines, out, &err), "%s", err.message);
    rnnsearch_translator_free(tr);
}

/* Two results hypothesis by hypothesis: the same text and tokens, log p
 * within tol (0: the same bits); both freed. */
static void assert_same(rnnsearch_translation *a, rnnsearch_translation *b, double tol)
{
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(a[i].count, b[i].count);
        for (int r = 0; r < a[i].count; r++) {
            const rnnsearch_hypothesis *x = &a[i].hyps[r], *y = &b[i].hyps[r];
            ck_assert_str_eq(x->text, y->text);
            ck_assert_int_eq(x->count, y->count);
            if (tol == 0.0)
                ck_assert_msg(x->logprob == y->logprob, "%.17g != %.17g", x->logprob, y->logprob);
            else
                ck_assert_msg(fabs(x->logprob - y->logprob) <= tol, "%.17g vs %.17g", x->logprob,
                              y->logprob);
        }
        rnnsearch_translation_free(&a[i]);
        rnnsearch_translation_free(&b[i]);
    }
}

/* weights: equal ones are the plain mean bit for bit, 1,0 the first model
 * alone (up to the ensemble's float rounding); bad ones are refused. */
START_TEST(weights_weigh_the_ensemble)
{
    rnnsearch_model *m = load(path), *o = load(other);
    const rnnsearch_model *both[2] = {m, o}, *first[1] = {m};
    rnnsearch_error err = {{0}};
    rnnsearch_options opt;
    ck_assert(!rnnsearch_options_init(&opt, sizeof opt, &err));
    ck_assert_ptr_null(opt.weights);
    ck_assert_int_eq(opt.n_weights, 0);
    opt.beam = 2;
    rnnsearch_translation mean[N], alone[N], got[N];
    translate(both, 2, &opt, mean);
    static const float equal[2] = {0.7f, 0.7f}, one_zero[2] = {1.0f, 0.0f};
    ck_assert_msg(!rnnsearch_options_set_weights(&opt, equal, 2, &err), "%s", err.message);
    ck_assert_ptr_eq(opt.weights, equal);
    ck_assert_int_eq(opt.n_weights, 2);
    translate(both, 2, &opt, got);
    assert_same(got, mean, 0.0);
    ck_assert(!rnnsearch_options_set_weights(&opt, one_zero, 2, &err));
    translate(both, 2, &opt, got);
    rnnsearch_options plain;
    ck_assert(!rnnsearch_options_init(&plain, sizeof plain, &err));
    plain.beam = 2;
    translate(first, 1, &plain, alone);
    assert_same(got, alone, 1e-4);

    rnnsearch_translator *tr = NULL;
    FAILS(rnnsearch_translator_new_ensemble(first, 1, &opt, &tr, &fresh), "2 weights for 1 model");
    ck_assert_ptr_null(tr);
    static const float zero[2] = {0, 0}, negative[2] = {1, -0.5f}, nan2[2] = {NAN, 1};
    FAILS(rnnsearch_options_set_weights(&opt, zero, 2, &fresh), "all zero");
    FAILS(rnnsearch_options_set_weights(&opt, negative, 2, &fresh), "weight 2 is -0.5");
    FAILS(rnnsearch_options_set_weights(&opt, nan2, 2, &fresh), "weight 1 is nan");
    FAILS(rnnsearch_options_set_weights(&opt, equal, 0, &fresh), "0 weights");
    FAILS(rnnsearch_options_set_weights(&opt, NULL, 2, &fresh), "NULL array");
    FAILS(rnnsearch_options_set_weights(&opt, equal, RNNSEARCH_MAX_MODELS + 1, &fresh),
          "give 1 to 16");
    FAILS(rnnsearch_options_set(&opt, "weights", 1, &fresh), "rnnsearch_options_set_weights");
    ck_assert_ptr_eq(opt.weights, one_zero); /* a refused call changes nothing */
    opt.weights = negative;
    FAILS(rnnsearch_options_check(&opt, &fresh), "weight 2 is -0.5");
    FAILS(rnnsearch_translator_new_ensemble(both, 2, &opt, &tr, &fresh), "weight 2 is -0.5");
    opt.n_weights = 0;
    FAILS(rnnsearch_options_check(&opt, &fresh), "NULL array");
    ck_assert(!rnnsearch_options_set_weights(&opt, NULL, 0, &err));
    ck_assert(!rnnsearch_options_check(&opt, &err));
    rnnsearch_model_free(m);
    rnnsearch_model_free(o);
}
END_TEST

/* The program's translation of the input file with extra options. */
static void program_translates(const char *extra, char *out, size_t size)
{
    char args[1024];
    snprintf(args, sizeof args, "translate -m %s --quiet %s %s", path, extra, input);
    ck_assert_int_eq(testprog_run(args, out, size), 0);
}

/* The translations' texts, a line each, as the program prints them. */
static void texts(rnnsearch_translation *t, char *out, size_t size)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < N; i++)
        at += (size_t)snprintf(out + at, size - at, "%s\n", t[i].hyps[0].text);
}

/* int8: what `translate --int8` prints; the model's float weights stay
 * exact for a translator without int8 made before or after, and for
 * rnnsearch_force. */
START_TEST(int8_translates_as_the_program)
{
    rnnsearch_model *m = load(path);
    const rnnsearch_model *one[1] = {m};
    rnnsearch_error err = {{0}};
    rnnsearch_options opt;
    ck_assert(!rnnsearch_options_init(&opt, sizeof opt, &err));
    ck_assert_int_eq(opt.int8, 0);
    rnnsearch_forced before, after;
    ck_assert(!rnnsearch_force(m, "das haus", "the the", &before, &err));
    rnnsearch_translation exact[N], q8[N], again[N];
    translate(one, 1, &opt, exact);
    ck_assert(!rnnsearch_options_set(&opt, "int8", 1, &err));
    translate(one, 1, &opt, q8);
    translate(one, 1, &opt, again); /* the copies made once, then shared */
    static char want[4096], got[4096];
    program_translates("--int8", want, sizeof want);
    texts(q8, got, sizeof got);
    ck_assert_str_eq(got, want);
    int differs = 0;
    for (int i = 0; i < N; i++)
        differs |= q8[i].hyps[0].logprob != exact[i].hyps[0].logprob;
    ck_assert_msg(differs, "int8 scores must differ from float ones for the test to say anything");
    assert_same(q8, again, 0.0);
    opt.int8 = 0;
    translate(one, 1, &opt, again);
    assert_same(exact, again, 0.0);
    ck_assert(!rnnsearch_force(m, "das haus", "the the", &after, &err));
    ck_assert(before.logprob == after.logprob);
    rnnsearch_forced_free(&before);
    rnnsearch_forced_free(&after);
    FAILS(rnnsearch_options_set(&opt, "int8", 2, &fresh), "int8: 2 is not an integer from 0 to 1");
    opt.int8 = -1;
    FAILS(rnnsearch_options_check(&opt, &fresh), "int8");
    rnnsearch_model_free(m);
}
END_TEST

/* Threads making int8 translators from one model at once: the copies are
 * made once, under the model's lock, and every thread translates alike. */
enum { THREADS = 4 };
typedef struct {
    const rnnsearch_model *model;
    double logprob[N];
    int status;
} int8_job;

static void *int8_thread(void *arg)
{
    int8_job *job = arg;
    rnnsearch_options opt;
    rnnsearch_translator *tr = NULL;
    rnnsearch_translation t[N];
    job->status = rnnsearch_options_init(&opt, sizeof opt, NULL);
    opt.int8 = 1;
    if (job->status || (job->status = rnnsearch_translator_new(job->model, &opt, &tr, NULL)))
        return NULL;
    if (!(job->status = rnnsearch_translate(tr, N, lines, t, NULL)))
        for (int i = 0; i < N; i++) {
            job->logprob[i] = t[i].hyps[0].logprob;
            rnnsearch_translation_free(&t[i]);
        }
    rnnsearch_translator_free(tr);
    return NULL;
}

START_TEST(int8_copies_are_made_once_across_threads)
{
    rnnsearch_model *m = load(path);
    int8_job jobs[THREADS];
    pthread_t threads[THREADS];
    for (int k = 0; k < THREADS; k++) {
        jobs[k] = (int8_job){.model = m, .status = -1};
        ck_assert(!pthread_create(&threads[k], NULL, int8_thread, &jobs[k]));
    }
    for (int k = 0; k < THREADS; k++)
        ck_assert(!pthread_join(threads[k], NULL));
    for (int k = 0; k < THREADS; k++) {
        ck_assert_int_eq(jobs[k].status, 0);
        for (int i = 0; i < N; i++)
            ck_assert(jobs[k].logprob[i] == jobs[0].logprob[i]);
    }
    rnnsearch_model_free(m);
}
END_TEST

/* shortlist: a table listing every word decodes exactly, as `translate
 * --shortlist` does; a bad table is refused with its file and line; sizes
 * are checked. */
START_TEST(shortlist_of_every_word_is_exact)
{
    rnnsearch_model *m = load(path), *o = load(other);
    const rnnsearch_model *one[1] = {m}, *both[2] = {m, o};
    rnnsearch_error err = {{0}};
    rnnsearch_options opt;
    ck_assert(!rnnsearch_options_init(&opt, sizeof opt, &err));
    ck_assert_ptr_null(opt.shortlist);
    opt.beam = 2;
    rnnsearch_translation exact[N], got[N];
    translate(one, 1, &opt, exact);
    /* A copy on the stack, overwritten once the translator has read it. */
    char file[256];
    snprintf(file, sizeof file, "%s", table);
    ck_assert(!rnnsearch_options_set_text(&opt, "shortlist", file, &err));
    rnnsearch_translator *tr = NULL;
    ck_assert_msg(!rnnsearch_translator_new(m, &opt, &tr, &err), "%s", err.message);
    strcpy(file, "gone");
    ck_assert_msg(!rnnsearch_translate(tr, N, lines, got, &err), "%s", err.message);
    rnnsearch_translator_free(tr);
    assert_same(got, exact, 0.0);
    /* Sizes as the program's: FIRST 10 and BEST none still hold every word. */
    ck_assert(!rnnsearch_options_set_text(&opt, "shortlist", table, &err));
    ck_assert(!rnnsearch_options_set(&opt, "shortlist_first", 10, &err));
    ck_assert(!rnnsearch_options_set(&opt, "shortlist_best", -1, &err));
    opt.beam = 1;
    translate(one, 1, &opt, got);
    static char want[4096], text[4096];
    char extra[512];
    snprintf(extra, sizeof extra, "--shortlist %s,10,0", table);
    program_translates(extra, want, sizeof want);
    texts(got, text, sizeof text);
    ck_assert_str_eq(text, want);
    for (int i = 0; i < N; i++)
        rnnsearch_translation_free(&got[i]);
    translate(both, 2, &opt, got); /* an ensemble's table: the first model's words */
    for (int i = 0; i < N; i++)
        rnnsearch_translation_free(&got[i]);

    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.tsv", dir);
    write_file(bad, "das\tthe\t1\nwas\tthe\t0.5\n");
    ck_assert(!rnnsearch_options_set_text(&opt, "shortlist", bad, &err));
    char where[300];
    snprintf(where, sizeof where, "%s:2:", bad);
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), where);
    ck_assert_ptr_null(tr);
    snprintf(bad, sizeof bad, "%s/missing.tsv", dir);
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), bad);
    /* Neither first words nor best translations: only the reserved ids, so
     * every translation would be empty (the command line's FILE,0,0). */
    ck_assert(!rnnsearch_options_set(&opt, "shortlist_first", -1, &err));
    FAILS(rnnsearch_options_check(&opt, &fresh), "list no word");
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "list no word");
    ck_assert(!rnnsearch_options_set(&opt, "shortlist_first", 10, &err));
    FAILS(rnnsearch_options_set_text(&opt, "shortlist", "", &fresh), "empty");
    FAILS(rnnsearch_options_set(&opt, "shortlist", 1, &fresh), "rnnsearch_options_set_text");
    FAILS(rnnsearch_options_set(&opt, "shortlist_first", -2, &fresh), "shortlist_first: -2");
    FAILS(rnnsearch_options_set(&opt, "shortlist_best", RNNSEARCH_MAX_SHORTLIST + 1, &fresh),
          "shortlist_best");
    opt.shortlist = NULL;
    FAILS(rnnsearch_options_check(&opt, &fresh), "sizes without a shortlist file");
    rnnsearch_model_free(m);
    rnnsearch_model_free(o);
}
END_TEST

/* A 1.0 or 1.1 caller's structure ends before the 1.2 fields: it translates
 * with their defaults, and cannot set them. */
START_TEST(older_structures_are_still_taken)
{
    rnnsearch_model *m = load(path);
    rnnsearch_error err = {{0}};
    const size_t sizes[2] = {offsetof(rnnsearch_options, replace_unk) + sizeof(int),
                             offsetof(rnnsearch_options, remove_bpe) + sizeof(const char *)};
    for (int k = 0; k < 2; k++) {
        /* The caller's bytes, with what lies beyond them poisoned. */
        rnnsearch_options opt;
        memset(&opt, 0xA5, sizeof opt);
        ck_assert(!rnnsearch_options_init(&opt, sizes[k], &err));
        ck_assert_int_eq(((unsigned char *)&opt)[sizes[k]], 0xA5);
        rnnsearch_translator *tr = NULL;
        ck_assert_msg(!rnnsearch_translator_new(m, &opt, &tr, &err), "%s", err.message);
        rnnsearch_translation t;
        ck_assert(!rnnsearch_translate(tr, 1, lines, &t, &err));
        rnnsearch_translation_free(&t);
        rnnsearch_translator_free(tr);
        static const float w[1] = {1};
        FAILS(rnnsearch_options_set_weights(&opt, w, 1, &fresh), "older header");
        FAILS(rnnsearch_options_set(&opt, "int8", 1, &fresh), "beyond the caller's options");
        FAILS(rnnsearch_options_set_text(&opt, "shortlist", table, &fresh), "older header");
    }
    rnnsearch_model_free(m);
}
END_TEST

Suite *api_options_suite(void)
{
    Suite *s = suite_create("api_options");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, weights_weigh_the_ensemble);
    tcase_add_test(tc, int8_translates_as_the_program);
    tcase_add_test(tc, int8_copies_are_made_once_across_threads);
    tcase_add_test(tc, shortlist_of_every_word_is_exact);
    tcase_add_test(tc, older_structures_are_still_taken);
    suite_add_tcase(s, tc);
    return s;
}
