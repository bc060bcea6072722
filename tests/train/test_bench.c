/* The measurements of `rnnsearch bench` (src/train/bench.c): the two model
 * sizes of its table, data that is not there refused by name, and the
 * FLOPs a decoding counts. (The timed measurements need Multi30k and
 * minutes: not run here.) */
#include <check.h>
#include <string.h>

#include "testdir.h"
#include "tinymodel.h"
#include "train/bench.h"

START_TEST(sizes_are_s_and_m)
{
    ck_assert_str_eq(rs_bench_sizes[0].name, "S");
    ck_assert_int_eq(rs_bench_sizes[0].n, 256);
    ck_assert_int_eq(rs_bench_sizes[0].batch, 64);
    ck_assert_str_eq(rs_bench_sizes[1].name, "M");
    ck_assert_int_eq(rs_bench_sizes[1].n, 512);
    ck_assert_int_eq(rs_bench_sizes[1].batch, 128);
}
END_TEST

START_TEST(missing_data_is_named)
{
    char dir[256];
    testdir_make(dir, "rnnsearch-bench");
    rs_bench_data d;
    memset(&d, 0, sizeof d);
    rs_error err = {{0}};
    ck_assert_int_ne(rs_bench_data_load(&d, dir, &err), 0);
    ck_assert_msg(strstr(err.msg, "/train.de: no such file (nor ") &&
                      strstr(err.msg, "train.de.gz); give --data DIR"),
                  "%s", err.msg);
    rs_bench_data_free(&d);
    testdir_remove(dir);
}
END_TEST

/* Greedy decoding of one sentence of k words with a model that never says
 * </s> takes 2k + 10 words and the step that ends it: the FLOPs counted are
 * those of its products, summed here by hand from model.md (2 a
 * multiply-add), on every road. */
START_TEST(decoding_counts_its_products)
{
    rs_model model;
    tiny_model_with_words(&model, 5, "haus", 3);
    model.w.out_bw[RS_EOS] -= 1000.0f;
    const double m = 3, n = 5, a = 5, l = 2, V = 5;
    static const int ids[3] = {RS_RESERVED, RS_RESERVED + 1, RS_RESERVED};
    const int k = 3;
    const double S = k + 1, T = 2 * k + 11;
    const double encoder = 2 * S * (m * 3 * n + n * 2 * n + n * n)    /* both directions */
                           + S * 2 * n * a                            /* attention keys */
                           + n * n;                                   /* initial state */
    const double step = m * 3 * n + 2 * n * 3 * n + n * 2 * n + n * n /* decoder GRU */
                        + n * a                                       /* attention query */
                        + (n + m + 2 * n) * 2 * l                     /* deep output */
                        + l * V;                                      /* output layer */
    const rs_source one = {ids, k};
    const rs_ready plain = rs_ready_plain(&model);
    for (int w = RS_BENCH_GREEDY64; w < RS_BENCH_WORKLOADS; w += 2) {
        double seconds = -1, flops = -1;
        rs_error err = {{0}};
        ck_assert_msg(!rs_bench_decode(&plain, &one, 1, w, 1, &seconds, &flops, &err), "%s",
                      err.msg);
        ck_assert_double_eq(flops, 2 * (encoder + T * step));
        ck_assert(seconds >= 0);
    }
    rs_model_free(&model);
}
END_TEST

Suite *bench_suite(void)
{
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create("sizes and data");
    tcase_add_test(tc, sizes_are_s_and_m);
    tcase_add_test(tc, missing_data_is_named);
    tcase_add_test(tc, decoding_counts_its_products);
    suite_add_tcase(s, tc);
    return s;
}
