/* `rnnsearch bench`'s table (src/train/bench_table.c): the rows of a
 * measurement against its bound, and the rows as printed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/bench_table.h"

/* What was printed, in a new string (*text, for free()). */
static char *printed(const rs_bench_table *t, int tsv)
{
    static char *text;
    static size_t size;
    FILE *f = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(f);
    rs_bench_table_print(f, t, tsv);
    fclose(f);
    return text;
}

static rs_bench_table two_rows(void)
{
    rs_bench_table t = {0};
    t.count = 2;
    t.rows[0] =
        (rs_bench_row){"train", "S", "tgt tok/s", 2, {1234.4, 5.26, 0.5, 0.956, 300.2, 120}};
    t.rows[1] = (rs_bench_row){"greedy, batch 1", "S", "sent/s", 1, {12.345, -1, -1, -1, NAN, -1}};
    return t;
}

/* Rates under 100 keep two decimals, of_bound is a percentage, and
 * numbers that were not measured (< 0, NaN) are "-". */
START_TEST(cells_as_tsv)
{
    const rs_bench_table t = two_rows();
    char *text = printed(&t, 1);
    ck_assert_str_eq(text, "work\tconfig\tthreads\trate\tunit\tGFLOP/s\tof_bound\tspread\t"
                           "peak_RSS_MB\tbound_MB\n"
                           "train\tS\t2\t1234\ttgt tok/s\t5.3\t50%\t96%\t300\t120\n"
                           "greedy, batch 1\tS\t1\t12.35\tsent/s\t-\t-\t-\t-\t-\n");
    free(text);
}
END_TEST

/* The aligned table: every line the same width up to the last column,
 * the work column as wide as its longest name (a road's, side by side). */
START_TEST(columns_aligned)
{
    rs_bench_table t = two_rows();
    for (int wide = 0; wide < 2; wide++) {
        if (wide)
            snprintf(t.rows[1].work, sizeof t.rows[1].work, "%s",
                     "  bound (GEMV): onednn-avx512_core_bf16-packed x2");
        char *text = printed(&t, 0);
        char *second = strchr(text, '\n') + 1, *third = strchr(second, '\n') + 1;
        ck_assert_int_eq(strncmp(second, "train ", 6), 0);
        ck_assert_int_eq((int)(strchr(second, '\n') - second), (int)(strchr(third, '\n') - third));
        ck_assert_int_eq((int)(strchr(text, '\n') - text), (int)(strchr(second, '\n') - second));
        ck_assert_ptr_nonnull(strstr(third, "  12.35 sent/s "));
        ck_assert_ptr_nonnull(strstr(third, wide ? "packed x2 S " : "batch 1 "));
        free(text);
    }
}
END_TEST

/* A bound of two roads: "slow" best on training, "fast" on decoding; the
 * second measured in one round only. */
static rs_bench_bound two_roads(void)
{
    rs_bench_bound b = {0};
    b.count = 2;
    b.roads[0] = (rs_bench_road){.name = "openblas-Haswell",
                                 .rounds = 3,
                                 .best = {200, 100, 100, 50},
                                 .worst = {150, 90, 80, 25}};
    b.roads[1] = (rs_bench_road){.name = "onednn-avx512_core",
                                 .rounds = 1,
                                 .best = {100, 400, 200, 40},
                                 .worst = {100, 400, 200, 40}};
    return b;
}

/* Each workload's of_bound is its GFLOP/s over the best road's on its
 * products; the bound's row beneath names that road, with its spread
 * (worst / best; "-" for one round); with roads, the others follow, their
 * of_bound their share of the best. */
START_TEST(shares_of_the_bound)
{
    static rs_bench_table t;
    memset(&t, 0, sizeof t);
    const rs_bench_bound b = two_roads();
    rs_bench_measured m = {.tokens_per_s = 5000, .gflops = 50, .step_s = 0.2, .optimizer_s = 0.02};
    m.sent_s[RS_BENCH_GREEDY64] = 300, m.dec_gflops[RS_BENCH_GREEDY64] = 100;
    m.sent_s[RS_BENCH_BEAM64] = 60, m.dec_gflops[RS_BENCH_BEAM64] = 50;
    m.sent_s[RS_BENCH_GREEDY1] = 20, m.dec_gflops[RS_BENCH_GREEDY1] = 10;
    rs_bench_rows_add(&t, &rs_bench_sizes[0], 1, &m, 1, "S", &b, 0);
    ck_assert_int_eq(t.count, 10);
    ck_assert_str_eq(t.rows[0].work, "train");
    ck_assert_double_eq(t.rows[0].v.of_bound, 50.0 / 200);
    ck_assert_str_eq(t.rows[1].work, "  bound: openblas-Haswell");
    ck_assert_double_eq(t.rows[1].v.gflops, 200);
    ck_assert_double_eq(t.rows[1].v.spread, 150.0 / 200);
    ck_assert_str_eq(t.rows[2].work, "  step");
    ck_assert_double_eq_tol(t.rows[3].v.of_bound, 0.1, 1e-12);
    ck_assert_str_eq(t.rows[4].work, "greedy, batch 64");
    ck_assert_double_eq(t.rows[4].v.of_bound, 100.0 / 400);
    ck_assert_str_eq(t.rows[5].work, "  bound: onednn-avx512_core");
    ck_assert_double_lt(t.rows[5].v.spread, 0);
    ck_assert_str_eq(t.rows[6].work, "beam 5, batch 64");
    ck_assert_double_eq(t.rows[6].v.of_bound, 50.0 / 200);
    ck_assert_str_eq(t.rows[8].work, "greedy, batch 1");
    ck_assert_double_eq(t.rows[8].v.of_bound, 10.0 / 50);
    ck_assert_str_eq(t.rows[9].work, "  bound (GEMV): openblas-Haswell");
    ck_assert_double_eq(t.rows[9].v.spread, 0.5);
    /* Two threads: no step rows; every road's row under each bound. */
    memset(&t, 0, sizeof t);
    rs_bench_rows_add(&t, &rs_bench_sizes[0], 2, &m, 0, "S", &b, 1);
    ck_assert_int_eq(t.count, 3);
    ck_assert_str_eq(t.rows[2].work, "    onednn-avx512_core");
    ck_assert_double_eq(t.rows[2].v.of_bound, 0.5);
}
END_TEST

Suite *bench_table_suite(void)
{
    Suite *s = suite_create("bench_table");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, cells_as_tsv);
    tcase_add_test(tc, columns_aligned);
    tcase_add_test(tc, shares_of_the_bound);
    suite_add_tcase(s, tc);
    return s;
}
