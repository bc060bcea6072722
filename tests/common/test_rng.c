/* The seeded generator (src/common/rng.c): known outputs of xoshiro256** seeded by
 * splitmix64 (computed by an independent implementation of the published
 * algorithms), reproducibility, and the ranges and rough uniformity of
 * rs_rng_uniform and rs_rng_below. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "common/rng.h"

START_TEST(rng_known_outputs)
{
    /* splitmix64(0) starts 0xE220A8397B1DCDAF, the published first output. */
    rs_rng rng;
    rs_rng_seed(&rng, 0);
    ck_assert(rng.s[0] == 0xE220A8397B1DCDAFULL);
    const uint64_t seed0[] = {0x99EC5F36CB75F2B4ULL, 0xBF6E1F784956452AULL, 0x1A5F849D4933E6E0ULL,
                              0x6AA594F1262D2D2CULL};
    for (int i = 0; i < 4; i++)
        ck_assert_msg(rs_rng_next(&rng) == seed0[i], "seed 0, output %d", i);
    rs_rng_seed(&rng, 42);
    const uint64_t seed42[] = {0x15780B2E0C2EC716ULL, 0x6104D9866D113A7EULL, 0xAE17533239E499A1ULL,
                               0xECB8AD4703B360A1ULL};
    for (int i = 0; i < 4; i++)
        ck_assert_msg(rs_rng_next(&rng) == seed42[i], "seed 42, output %d", i);
    /* uniform = the top 53 bits / 2^53. */
    rs_rng_seed(&rng, 2026);
    const double u[] = {0.5737315027932676, 0.2836794602748579, 0.8125094267576175};
    for (int i = 0; i < 3; i++)
        ck_assert(rs_rng_uniform(&rng) == u[i]);
}
END_TEST

START_TEST(rng_same_seed_same_stream)
{
    rs_rng a, b, c;
    rs_rng_seed(&a, 7);
    rs_rng_seed(&b, 7);
    rs_rng_seed(&c, 8);
    int same_as_c = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = rs_rng_next(&a);
        ck_assert(x == rs_rng_next(&b));
        same_as_c += x == rs_rng_next(&c);
    }
    ck_assert_int_eq(same_as_c, 0);
    /* The state is plain data: a copy continues the same stream. */
    rs_rng copy = a;
    ck_assert(rs_rng_next(&copy) == rs_rng_next(&a));
}
END_TEST

START_TEST(rng_ranges_and_uniformity)
{
    rs_rng rng;
    rs_rng_seed(&rng, 123);
    enum { DRAWS = 60000, BINS = 6 };
    double sum = 0.0;
    int hist[BINS] = {0};
    for (int i = 0; i < DRAWS; i++) {
        double u = rs_rng_uniform(&rng);
        ck_assert(u >= 0.0 && u < 1.0);
        sum += u;
        uint64_t k = rs_rng_below(&rng, BINS);
        ck_assert(k < BINS);
        hist[k]++;
    }
    /* Mean 1/2 with standard error 0.0012; each bin 10000 ± 91. */
    ck_assert_double_eq_tol(sum / DRAWS, 0.5, 0.006);
    for (int k = 0; k < BINS; k++)
        ck_assert_msg(abs(hist[k] - DRAWS / BINS) < 500, "bin %d: %d of %d", k, hist[k], DRAWS);
    for (int i = 0; i < 100; i++)
        ck_assert(rs_rng_below(&rng, 1) == 0);
    /* A bound that is not a power of two near 2^64 (rejection is exercised). */
    const uint64_t big = UINT64_MAX / 3 * 2;
    for (int i = 0; i < 100; i++)
        ck_assert(rs_rng_below(&rng, big) < big);
}
END_TEST

Suite *rng_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("xoshiro256**");
    tcase_add_test(tc, rng_known_outputs);
    tcase_add_test(tc, rng_same_seed_same_stream);
    tcase_add_test(tc, rng_ranges_and_uniformity);
    suite_add_tcase(s, tc);
    return s;
}
