/* sacreBLEU's paired significance tests (src/eval/significance.c) and
 * numpy's generator under them (src/common/pcg64.c), against numbers numpy
 * itself gave: tests/fixtures/paired, written by tests/support/paired-fixture.py
 * (a transcription of sacrebleu/significance.py run with numpy 1.24). */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pcg64.h"
#include "eval/significance.h"
#include "testdir.h"
#include "testprog.h"
#include "text/corpus.h"

#define FIXTURE "tests/fixtures/paired"

/* Values printed by numpy 1.24 for the same calls. */
START_TEST(pcg64_is_numpys)
{
    rs_pcg64 g;
    /* default_rng(12345).bit_generator.state and .random_raw(3) */
    rs_pcg64_seed(&g, 12345);
    ck_assert_uint_eq(g.state_hi, 0x1905e0335aae9634ull);
    ck_assert_uint_eq(g.state_lo, 0x9199b0d09775add5ull);
    ck_assert_uint_eq(g.inc_hi, 0xc9c7353e6e2b1f28ull);
    ck_assert_uint_eq(g.inc_lo, 0x7d761f2d4027fae7ull);
    static const uint64_t raw[] = {4193609425186963869ull, 5843160025838961886ull,
                                   14708796524633321433ull};
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(rs_pcg64_next64(&g), raw[i]);
    /* default_rng(12345).choice(7, size=(2, 7), replace=True) */
    static const uint32_t choice7[] = {4, 1, 5, 2, 1, 5, 4, 4, 6, 2, 5, 2, 3, 4};
    rs_pcg64_seed(&g, 12345);
    for (int i = 0; i < 14; i++)
        ck_assert_uint_eq(rs_pcg64_below(&g, 7), choice7[i]);
    /* default_rng(2**40 + 3).choice(1000003, size=10): a two-word seed */
    static const uint32_t big[] = {733164, 773658, 444678, 995860, 380641,
                                   473180, 336832, 64850,  786267, 195652};
    rs_pcg64_seed(&g, (1ull << 40) + 3);
    for (int i = 0; i < 10; i++)
        ck_assert_uint_eq(rs_pcg64_below(&g, 1000003), big[i]);
    /* default_rng(5).integers(2, size=40, dtype=bool) */
    const char *bools = "0001010110100111000111011101010101110111";
    rs_pcg64_seed(&g, 5);
    int bits = 0;
    uint32_t buf = 0;
    for (int i = 0; i < 40; i++)
        ck_assert_int_eq(rs_pcg64_bool(&g, &bits, &buf), bools[i] - '0');
}
END_TEST

/* np.mean's pairwise sum: 1000 values whose naive left-to-right sum differs
 * from it in the last bits. */
START_TEST(numpy_mean)
{
    double x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = 1.0 / (i + 1) + (i % 7) * 1e-3;
    /* np.mean([1/(i+1) + (i % 7) * 1e-3 for i in range(1000)]); summed left to right
     * it is 0.010482470860550356 */
    ck_assert_double_eq(rs_numpy_mean(x, 1000), 0.010482470860550345);
}
END_TEST

typedef struct {
    char test[4], system[32];
    double score, mean, ci, p;
} expected_row;

static int read_expected(expected_row *rows, int max)
{
    FILE *f = fopen(FIXTURE "/expected.txt", "r");
    ck_assert_msg(f != NULL, "cannot open " FIXTURE "/expected.txt");
    char line[512], v[4][64];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        ck_assert_int_lt(n, max);
        expected_row *r = &rows[n++];
        ck_assert_int_eq(sscanf(line, "%3s %31s %63s %63s %63s %63s", r->test, r->system, v[0],
                                v[1], v[2], v[3]),
                         6);
        r->score = strtod(v[0], NULL);
        r->mean = strtod(v[1], NULL);
        r->ci = strtod(v[2], NULL);
        r->p = strtod(v[3], NULL);
    }
    fclose(f);
    return n;
}

/* Equal to the last bit, NaN to NaN. */
static void same(double got, double want, const char *what, const char *system)
{
    if (isnan(want))
        ck_assert_msg(isnan(got), "%s %s: %.17g, want nan", system, what, got);
    else
        ck_assert_msg(got == want, "%s %s: %.17g, want %.17g (numpy)", system, what, got, want);
}

START_TEST(paired_tests_are_sacrebleus)
{
    static const char *const files[] = {"base.txt", "better.txt", "close.txt"};
    enum { SYSTEMS = 3 };
    rs_lines ref = {0}, hyp[SYSTEMS] = {{0}};
    rs_error err = {{0}};
    ck_assert_msg(!rs_lines_read(FIXTURE "/ref.txt", &ref, &err), "%s", err.msg);
    const int n = ref.count;
    ck_assert_int_eq(n, 60);
    rs_bleu_stats *stats = calloc((size_t)SYSTEMS * n, sizeof *stats);
    ck_assert_ptr_nonnull(stats);
    const rs_bleu_opts none = {0, RS_BLEU_TOK_NONE};
    for (int s = 0; s < SYSTEMS; s++) {
        char path[256];
        snprintf(path, sizeof path, FIXTURE "/%s", files[s]);
        ck_assert_msg(!rs_lines_read(path, &hyp[s], &err), "%s", err.msg);
        ck_assert_int_eq(hyp[s].count, n);
        for (int i = 0; i < n; i++) {
            const char *r = ref.lines[i];
            rs_bleu_stats_init(&stats[s * n + i]);
            ck_assert_msg(
                !rs_bleu_stats_add(&stats[s * n + i], hyp[s].lines[i], &r, 1, &none, &err), "%s",
                err.msg);
        }
    }
    expected_row rows[8];
    ck_assert_int_eq(read_expected(rows, 8), 2 * SYSTEMS);
    for (int t = 0; t < 2; t++) {
        rs_paired_result out[SYSTEMS];
        const int samples = t ? RS_PAIRED_AR_SAMPLES : RS_PAIRED_BS_SAMPLES;
        ck_assert_msg(!rs_paired_test_run(t ? RS_PAIRED_AR : RS_PAIRED_BS, stats, SYSTEMS, n,
                                          samples, RS_PAIRED_SEED, out, &err),
                      "%s", err.msg);
        for (int s = 0; s < SYSTEMS; s++) {
            const expected_row *w = &rows[t * SYSTEMS + s];
            ck_assert_str_eq(w->test, t ? "ar" : "bs");
            ck_assert_str_eq(w->system, files[s]);
            same(out[s].score, w->score, "score", w->system);
            same(out[s].mean, w->mean, "mean", w->system);
            same(out[s].ci, w->ci, "ci", w->system);
            same(out[s].p, w->p, "p", w->system);
        }
    }
    /* A system against itself: no resample or trial differs, p = 1 / (N + 1). */
    memcpy(stats + n, stats, (size_t)n * sizeof *stats);
    rs_paired_result self[2];
    ck_assert(!rs_paired_test_run(RS_PAIRED_BS, stats, 2, n, 100, 1, self, &err));
    ck_assert_double_eq(self[1].p, 1.0 / 101);
    ck_assert_double_eq(self[0].mean, self[1].mean);
    /* Bad arguments are refused, not run. */
    ck_assert_int_eq(rs_paired_test_run(RS_PAIRED_BS, stats, 1, n, 100, 1, self, &err), -1);
    ck_assert_msg(strstr(err.msg, "two systems"), "%s", err.msg);
    for (int s = 0; s < SYSTEMS; s++)
        rs_lines_free(&hyp[s]);
    rs_lines_free(&ref);
    free(stats);
}
END_TEST

/* The command: the same numbers as the library's (above: numpy's), rounded
 * as printed, the signature naming the test, and what it refuses. */
START_TEST(paired_command)
{
    char *out, *errs;
    const char *systems = "-i " FIXTURE "/base.txt -i " FIXTURE "/better.txt -i " FIXTURE
                          "/close.txt " FIXTURE "/ref.txt";
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "bleu --paired-bs --tokenize none %s", systems);
    ck_assert_int_eq(testprog_run_split(cmd, &out, &errs), 0);
    /* expected.txt: 28.051211…, 28.170777…, 6.691810…; 40.055016…, 39.907695…,
     * 6.013317…, p 0.005994…; 29.904521…, 29.924228…, 5.401765…, p 0.249750… */
    ck_assert_msg(strstr(out, FIXTURE "/base.txt     28.05   28.17 ±  6.69       -\n") &&
                      strstr(out, FIXTURE "/better.txt   40.06   39.91 ±  6.01  0.0060 *\n") &&
                      strstr(out, FIXTURE "/close.txt    29.90   29.92 ±  5.40  0.2498\n"),
                  "%s", out);
    ck_assert_msg(strstr(errs, "BLEU|nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:none|"), "%s",
                  errs);
    char *first = out;
    free(errs);
    snprintf(cmd, sizeof cmd, "bleu --paired-ar --tokenize none %s", systems);
    ck_assert_int_eq(testprog_run_split(cmd, &out, &errs), 0);
    ck_assert_msg(strstr(out, FIXTURE "/better.txt   40.06  0.0179 *\n") &&
                      strstr(out, FIXTURE "/close.txt    29.90  0.7040\n"),
                  "%s", out);
    ck_assert_msg(strstr(errs, "|ar:10000|seed:12345|"), "%s", errs);
    free(out), free(errs);
    /* Another seed, other draws: the bootstrap's mean moves, the scores do not. */
    snprintf(cmd, sizeof cmd, "bleu --paired-bs --paired-n 200 --seed 7 --tokenize none %s",
             systems);
    ck_assert_int_eq(testprog_run_split(cmd, &out, &errs), 0);
    ck_assert_msg(strstr(out, "/base.txt     28.05 ") && strcmp(out, first), "%s", out);
    free(first);
    ck_assert_msg(strstr(errs, "|bs:200|seed:7|"), "%s", errs);
    free(out), free(errs);

    char dir[128], nbest[256], short_sys[256];
    testdir_make(dir, "rs_paired");
    snprintf(nbest, sizeof nbest, "%s/nbest.txt", dir);
    snprintf(short_sys, sizeof short_sys, "%s/short.txt", dir);
    static const char nb[] = "0 ||| the cat ||| F0= -1.5 ||| -0.75\n";
    testfile_write(nbest, (const unsigned char *)nb, sizeof nb - 1);
    testfile_write(short_sys, (const unsigned char *)"a\nb\n", 4);
    static const struct {
        const char *args, *said;
    } bad[] = {
        {"--paired-bs -i " FIXTURE "/base.txt " FIXTURE "/ref.txt", "--paired-bs compares systems"},
        {"-i " FIXTURE "/base.txt -i " FIXTURE "/close.txt " FIXTURE "/ref.txt",
         "-i given 2 times: several systems go with --paired-bs or --paired-ar"},
        {"--paired-bs --metric both -i " FIXTURE "/base.txt -i " FIXTURE "/close.txt " FIXTURE
         "/ref.txt",
         "--paired-bs tests one metric: --metric bleu or chrf"},
        {"--paired-bs --paired-ar -i a -i b r", "one test at a time"},
        {"--seed 3 " FIXTURE "/base.txt " FIXTURE "/ref.txt", "--seed goes with --paired-bs"},
        {"--paired-bs -i " FIXTURE "/base.txt -i %s " FIXTURE "/ref.txt",
         "short.txt has 2: the systems of a paired test"},
        {"--paired-ar -i %s -i %s %s", "nbest.txt:1: an n-best line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[1024];
        snprintf(args, sizeof args, bad[i].args, i == 5 ? short_sys : nbest, nbest, nbest);
        snprintf(cmd, sizeof cmd, "bleu %s", args);
        ck_assert_int_eq(testprog_run_split(cmd, &out, &errs), 2);
        ck_assert_msg(strstr(errs, bad[i].said), "%s: %s", args, errs);
        ck_assert_str_eq(out, "");
        free(out), free(errs);
    }
    testdir_remove(dir);
}
END_TEST

Suite *significance_suite(void)
{
    Suite *s = suite_create("significance");
    TCase *tc = tcase_create("significance");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, pcg64_is_numpys);
    tcase_add_test(tc, numpy_mean);
    tcase_add_test(tc, paired_tests_are_sacrebleus);
    tcase_add_test(tc, paired_command);
    suite_add_tcase(s, tc);
    return s;
}
