/* One Check runner for every suite in tests/LAYER/test_ROOM.c (listed in suites.h,
 * which the Makefile generates from the `Suite *name_suite(void)` lines),
 * then the tests that were skipped (testskip.h). It takes the GEMM road the
 * program would (RNNSEARCH_GEMM, accel/gemm_road.h) and names it and
 * OpenBLAS's kernels first (scripts/check-cores.sh runs it under each).
 * Built for make nn-check (RS_NN_CHECK), it links nn/ and what lies below
 * it alone: OpenBLAS is its one road. */
#include <cblas.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RS_NN_CHECK
#include "accel/gemm_road.h"
#endif
#include "testskip.h"

#define X(name) Suite *name(void);
#include "suites.h"
#undef X

int main(void)
{
    test_skip_begin();
#ifdef RS_NN_CHECK
    /* Which kernels ran: sums, and so the bits some tests compare, depend on it. */
    printf("OpenBLAS %s, core %s\n", openblas_get_config(), openblas_get_corename());
#else
    rs_error err;
    if (rs_gemm_road_choose(NULL, &err)) {
        fprintf(stderr, "run_tests: %s\n", err.msg);
        return EXIT_FAILURE;
    }
    printf("OpenBLAS %s, core %s; GEMM road %s (%s)\n", openblas_get_config(),
           openblas_get_corename(), rs_gemm_road_name(), rs_gemm_road_kernel());
#endif
    SRunner *runner = srunner_create(NULL);
#define X(name) srunner_add_suite(runner, name());
#include "suites.h"
#undef X
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    const int skipped = test_skip_report();
    const char *strict = getenv("RNNSEARCH_NO_SKIPS");
    if (skipped && strict && !strcmp(strict, "1")) {
        printf("RNNSEARCH_NO_SKIPS=1: %d test%s could not run, which fails this run\n", skipped,
               skipped == 1 ? "" : "s");
        return EXIT_FAILURE;
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
