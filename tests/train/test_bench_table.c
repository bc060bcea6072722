/* `rnnsearch bench`'s table (src/train/bench_table.c): the rows as printed. */
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
    t.rows[0] = (rs_bench_row){"train", "S", "tgt tok/s", 2, {1234.4, 5.26, 0.5, 300.2, 120}};
    t.rows[1] = (rs_bench_row){"greedy, batch 1", "S", "sent/s", 1, {12.345, -1, -1, NAN, -1}};
    return t;
}

/* Rates under 100 keep two decimals, of_bound is a percentage, and
 * numbers that were not measured (< 0, NaN) are "-". */
START_TEST(cells_as_tsv)
{
    const rs_bench_table t = two_rows();
    char *text = printed(&t, 1);
    ck_assert_str_eq(text, "work\tconfig\tthreads\trate\tunit\tGFLOP/s\tof_bound\tpeak_RSS_MB\t"
                           "bound_MB\n"
                           "train\tS\t2\t1234\ttgt tok/s\t5.3\t50%\t300\t120\n"
                           "greedy, batch 1\tS\t1\t12.35\tsent/s\t-\t-\t-\t-\n");
    free(text);
}
END_TEST

/* The aligned table: every line the same width up to the last column. */
START_TEST(columns_aligned)
{
    const rs_bench_table t = two_rows();
    char *text = printed(&t, 0);
    char *second = strchr(text, '\n') + 1, *third = strchr(second, '\n') + 1;
    ck_assert_int_eq(strncmp(second, "train ", 6), 0);
    ck_assert_int_eq((int)(strchr(second, '\n') - second), (int)(strchr(third, '\n') - third));
    ck_assert_int_eq((int)(strchr(text, '\n') - text), (int)(strchr(second, '\n') - second));
    ck_assert_ptr_nonnull(strstr(third, "  12.35 sent/s "));
    free(text);
}
END_TEST

Suite *bench_table_suite(void)
{
    Suite *s = suite_create("bench_table");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, cells_as_tsv);
    tcase_add_test(tc, columns_aligned);
    suite_add_tcase(s, tc);
    return s;
}
