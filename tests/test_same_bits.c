/* The arithmetic does not change by accident: a short seeded training
 * (dropout, word dropout, label smoothing, two shards) gives parameter bytes
 * equal to those the build of commit 83e02d7 wrote, and its greedy and beam
 * translations equal that build's (tests/fixtures/same-bits/, see the
 * README there). A refactoring of a layer that reorders one sum fails here.
 * The run itself is scripts/same-bits-run.sh, which also wrote the fixtures.
 *
 * OpenBLAS picks its kernels for the processor, and kernels differ in the
 * order of their sums, so the bits are a property of (code, kernel): the
 * fixture lives in a folder named by OpenBLAS's core name. On a core that has
 * no fixture the test cannot bind anything and is counted as skipped (which
 * RNNSEARCH_NO_SKIPS=1 turns into a failure), naming the core. */
#include <cblas.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "testdir.h"
#include "testprog.h"
#include "testskip.h"

#define FIXTURE "tests/fixtures/same-bits"

static const char *const made_files[] = {"params.safetensors", "greedy.txt", "beam5.txt"};

static void expect_same_file(const char *made, const char *fixture)
{
    size_t made_size, want_size;
    unsigned char *got = testfile_read(made, &made_size),
                  *want = testfile_read(fixture, &want_size);
    size_t first = 0;
    while (first < made_size && first < want_size && got[first] == want[first])
        first++;
    ck_assert_msg(made_size == want_size && first == want_size,
                  "%s differs from %s (%zu and %zu bytes, first difference at byte %zu)", made,
                  fixture, made_size, want_size, first);
    free(got);
    free(want);
}

START_TEST(training_and_translation_give_the_fixture_bits)
{
    char fixture[256], why[512];
    const char *core = openblas_get_corename();
    snprintf(fixture, sizeof fixture, FIXTURE "/%s", core);
    struct stat st;
    if (stat(fixture, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(why, sizeof why,
                 "same_bits: no fixture for OpenBLAS core %s (%s/README.md says how to add one)",
                 core, "tests/fixtures");
        test_skip(why);
        return;
    }
    char dir[64], cmd[1024], out[8192], made[256], want[512];
    testdir_make(dir, "rnnsearch-same-bits");
    snprintf(cmd, sizeof cmd, "sh scripts/same-bits-run.sh %s %s 2>&1", testprog_path(), dir);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    for (int i = 0; i < 3; i++) {
        snprintf(made, sizeof made, "%s/%s", dir, made_files[i]);
        snprintf(want, sizeof want, "%s/%s", fixture, made_files[i]);
        expect_same_file(made, want);
    }
    testdir_remove(dir);
}
END_TEST

Suite *same_bits_suite(void)
{
    Suite *s = suite_create("same_bits");
    TCase *tc = tcase_create("fixture of 83e02d7");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, training_and_translation_give_the_fixture_bits);
    suite_add_tcase(s, tc);
    return s;
}
