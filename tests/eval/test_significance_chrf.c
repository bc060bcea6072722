/* The paired tests on chrF (eval/significance.c with rs_paired_chrf): the
 * machinery is BLEU's, which tests/eval/test_significance.c holds to
 * sacreBLEU's digits, so here what chrF brings is checked against sums done
 * by hand: the whole-set score is corpus chrF, a one-resample bootstrap's
 * mean is chrF of exactly the sentences numpy's generator draws, a
 * one-trial randomization's p-value follows from the swaps it draws, and a
 * system against itself gets the smallest p-value a test can give. On the
 * three systems of tests/fixtures/paired. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/pcg64.h"
#include "eval/chrf.h"
#include "eval/significance.h"
#include "testprog.h"
#include "text/corpus.h"

#define FIXTURE "tests/fixtures/paired/"

enum { SYSTEMS = 3 };

/* stats[s * n + i] of base, better and close against ref; *n sentences. */
static rs_chrf_stats *fixture_stats(int *n)
{
    static const char *const files[SYSTEMS] = {"base.txt", "better.txt", "close.txt"};
    rs_lines ref, sys[SYSTEMS];
    rs_error err;
    ck_assert_msg(rs_lines_read(FIXTURE "ref.txt", &ref, &err) == 0, "%s", err.msg);
    *n = ref.count;
    rs_chrf_stats *stats = calloc((size_t)SYSTEMS * (size_t)*n, sizeof *stats);
    ck_assert_ptr_nonnull(stats);
    const rs_bleu_opts opts = {0, RS_BLEU_TOK_13A};
    for (int s = 0; s < SYSTEMS; s++) {
        char path[256];
        snprintf(path, sizeof path, FIXTURE "%s", files[s]);
        ck_assert_msg(rs_lines_read(path, &sys[s], &err) == 0, "%s", err.msg);
        ck_assert_int_eq(sys[s].count, *n);
        for (int i = 0; i < *n; i++) {
            const char *refs[1] = {ref.lines[i]};
            rs_chrf_stats_init(&stats[(size_t)s * *n + i]);
            ck_assert(rs_chrf_stats_add(&stats[(size_t)s * *n + i], sys[s].lines[i], refs, 1, &opts,
                                        &err) >= 0);
        }
        rs_lines_free(&sys[s]);
    }
    rs_lines_free(&ref);
    return stats;
}

static double chrf_of(const rs_chrf_stats *sum)
{
    rs_chrf_result r;
    rs_chrf_compute(sum, &r);
    return r.score;
}

static void add(rs_chrf_stats *sum, const rs_chrf_stats *s)
{
    for (int k = 0; k < RS_CHRF_ORDER; k++) {
        sum->hyp[k] += s->hyp[k];
        sum->ref[k] += s->ref[k];
        sum->match[k] += s->match[k];
    }
    sum->segments += s->segments;
}

START_TEST(chrf_scores_are_corpus_chrf)
{
    int n;
    rs_chrf_stats *stats = fixture_stats(&n);
    rs_paired_result out[SYSTEMS];
    rs_error err;
    ck_assert_msg(rs_paired_metric_run(RS_PAIRED_BS,
                                       &(rs_paired_table){&rs_paired_chrf, stats, SYSTEMS, n}, 50,
                                       RS_PAIRED_SEED, out, &err) == 0,
                  "%s", err.msg);
    for (int s = 0; s < SYSTEMS; s++) {
        rs_chrf_stats sum;
        rs_chrf_stats_init(&sum);
        for (int i = 0; i < n; i++)
            add(&sum, &stats[(size_t)s * n + i]);
        ck_assert_msg(out[s].score == chrf_of(&sum), "system %d: %.17g, corpus chrF %.17g", s,
                      out[s].score, chrf_of(&sum));
        ck_assert(isfinite(out[s].mean) && out[s].ci > 0);
    }
    /* better.txt is better than the baseline by chrF too, clearly. */
    ck_assert(out[1].score > out[0].score + 5 && out[1].p < 0.05);
    ck_assert(isnan(out[0].p));
    free(stats);
}
END_TEST

START_TEST(one_resample_is_chrf_of_the_drawn_sentences)
{
    int n;
    rs_chrf_stats *stats = fixture_stats(&n);
    rs_paired_result out[SYSTEMS];
    rs_error err;
    const uint64_t seed = 7;
    ck_assert(rs_paired_metric_run(RS_PAIRED_BS,
                                   &(rs_paired_table){&rs_paired_chrf, stats, SYSTEMS, n}, 1, seed,
                                   out, &err) == 0);
    /* numpy's default_rng(seed).choice(n, (1, n)): n draws below n. */
    rs_pcg64 g;
    rs_pcg64_seed(&g, seed);
    rs_chrf_stats sum[SYSTEMS];
    for (int s = 0; s < SYSTEMS; s++)
        rs_chrf_stats_init(&sum[s]);
    for (int i = 0; i < n; i++) {
        const uint32_t k = rs_pcg64_below(&g, (uint64_t)n);
        for (int s = 0; s < SYSTEMS; s++)
            add(&sum[s], &stats[(size_t)s * n + k]);
    }
    for (int s = 0; s < SYSTEMS; s++) {
        ck_assert_msg(out[s].mean == chrf_of(&sum[s]), "system %d: mean %.17g, by hand %.17g", s,
                      out[s].mean, chrf_of(&sum[s]));
        ck_assert(out[s].ci == 0.0); /* one score: no width */
    }
    /* One resample: p = (1[|d_r − d_r| > d] + 1) / 2 = 1/2 whatever d is. */
    ck_assert(out[1].p == 0.5 && out[2].p == 0.5);
    free(stats);
}
END_TEST

START_TEST(one_trial_swaps_as_drawn)
{
    int n;
    rs_chrf_stats *stats = fixture_stats(&n);
    rs_paired_result out[SYSTEMS];
    rs_error err;
    const uint64_t seed = 12345;
    ck_assert(rs_paired_metric_run(RS_PAIRED_AR,
                                   &(rs_paired_table){&rs_paired_chrf, stats, SYSTEMS, n}, 1, seed,
                                   out, &err) == 0);
    rs_pcg64 g;
    rs_pcg64_seed(&g, seed);
    int bits = 0;
    uint32_t buf = 0;
    unsigned char *keep = malloc((size_t)n);
    ck_assert_ptr_nonnull(keep);
    for (int i = 0; i < n; i++)
        keep[i] = (unsigned char)rs_pcg64_bool(&g, &bits, &buf);
    for (int s = 1; s < SYSTEMS; s++) {
        rs_chrf_stats a, b;
        rs_chrf_stats_init(&a);
        rs_chrf_stats_init(&b);
        for (int i = 0; i < n; i++) {
            add(&a, keep[i] ? &stats[i] : &stats[(size_t)s * n + i]);
            add(&b, keep[i] ? &stats[(size_t)s * n + i] : &stats[i]);
        }
        const double d = fabs(out[0].score - out[s].score);
        const double want = (fabs(chrf_of(&a) - chrf_of(&b)) > d ? 2.0 : 1.0) / 2.0;
        ck_assert_msg(out[s].p == want, "system %d: p %g, by hand %g", s, out[s].p, want);
    }
    free(keep);
    free(stats);
}
END_TEST

START_TEST(a_system_against_itself_gets_the_least_p)
{
    int n;
    rs_chrf_stats *stats = fixture_stats(&n);
    /* The baseline twice: every difference 0, none above the real one (0). */
    memcpy(stats + n, stats, sizeof *stats * (size_t)n);
    rs_paired_result out[2];
    rs_error err;
    for (int test = RS_PAIRED_BS; test <= RS_PAIRED_AR; test++) {
        ck_assert(rs_paired_metric_run((rs_paired_test)test,
                                       &(rs_paired_table){&rs_paired_chrf, stats, 2, n}, 99, 3, out,
                                       &err) == 0);
        ck_assert(out[0].score == out[1].score);
        ck_assert_msg(out[1].p == 1.0 / 100.0, "test %d: p %g", test, out[1].p);
    }
    free(stats);
}
END_TEST

/* bleu --paired-bs --metric chrf: the chrF2 table, the baseline's score
 * that of 'bleu --metric chrf'; --metric both is one metric too many. */
START_TEST(bleu_command_tests_chrf_when_asked)
{
    char out[4096], alone[256];
    ck_assert_int_eq(testprog_run("bleu --metric chrf " FIXTURE "base.txt " FIXTURE "ref.txt 2>&1",
                                  alone, sizeof alone),
                     0);
    ck_assert_int_eq(testprog_run("bleu --paired-bs --paired-n 20 --metric chrf -i " FIXTURE
                                  "base.txt -i " FIXTURE "better.txt " FIXTURE "ref.txt",
                                  out, sizeof out),
                     0);
    ck_assert_msg(!strncmp(out, "system", 6) && strstr(out, "chrF2"), "%s", out);
    double score;
    const char *row = strstr(out, "base.txt");
    ck_assert_ptr_nonnull(row);
    ck_assert_int_eq(sscanf(row + strlen("base.txt"), "%lf", &score), 1);
    char want[64];
    snprintf(want, sizeof want, "chrF2 = %.2f", score);
    ck_assert_msg(strstr(alone, want), "'%s' not in '%s'", want, alone);
    ck_assert_int_eq(testprog_run_all("bleu --paired-ar --metric both -i " FIXTURE
                                      "base.txt -i " FIXTURE "better.txt " FIXTURE "ref.txt",
                                      out, sizeof out),
                     2);
    ck_assert_msg(strstr(out, "tests one metric"), "%s", out);
}
END_TEST

Suite *significance_chrf_suite(void)
{
    Suite *s = suite_create("significance_chrf");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, chrf_scores_are_corpus_chrf);
    tcase_add_test(tc, one_resample_is_chrf_of_the_drawn_sentences);
    tcase_add_test(tc, one_trial_swaps_as_drawn);
    tcase_add_test(tc, a_system_against_itself_gets_the_least_p);
    tcase_add_test(tc, bleu_command_tests_chrf_when_asked);
    suite_add_tcase(s, tc);
    return s;
}
