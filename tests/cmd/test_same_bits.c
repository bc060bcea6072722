/* The arithmetic does not change by accident: a short seeded training
 * (dropout, word dropout, label smoothing, two shards) gives parameter bytes
 * equal to those the build of commit 83e02d7 wrote, and its greedy and beam
 * translations equal that build's (tests/fixtures/same-bits/, see the
 * README there). A refactoring of a layer that reorders one sum fails here.
 * The exported file's header may differ only by metadata keys added since,
 * at the values that leave the model as it was (later_defaults).
 * The run itself is scripts/same-bits-run.sh, which also wrote the fixtures.
 *
 * OpenBLAS picks its kernels for the processor, and kernels differ in the
 * order of their sums, so the bits are a property of (code, kernel): the
 * fixture lives in a folder named by OpenBLAS's core name. On a core that has
 * no fixture the run is made twice and must give the same bits (one road run
 * twice); the fixture's comparison is then counted as skipped (which
 * RNNSEARCH_NO_SKIPS=1 turns into a failure), naming the core, except under
 * shared/blas-variant, whose kernels ("variant-SEED") have none by design.
 *
 * The fixture belongs to the reference road (OpenBLAS), which this run takes
 * whatever RNNSEARCH_GEMM says. Another GEMM road (accel/gemm_road.h) has no
 * fixture by design (oneDNN's blocking may follow the processor's caches):
 * there the run is made twice on it and must give the same bits, with the
 * same training on one thread too and translations at batch 1 and 64
 * (packed weights, accel/packed.h, are made at every step and every
 * model load, and must not change a bit). */
#include <cblas.h>
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "accel/gemm_road.h"
#include "testdir.h"
#include "testprog.h"
#include "testskip.h"

#define FIXTURE "tests/fixtures/same-bits"

static const char *const made_files[] = {"params.safetensors", "greedy.txt", "beam5.txt"};

/* and the `more` run's (scripts/same-bits-run.sh) */
static const char *const more_files[] = {"params.safetensors",   "greedy.txt",    "beam5.txt",
                                         "params-1.safetensors", "greedy-b1.txt", "greedy-b64.txt",
                                         "beam5-b1.txt",         "beam5-b64.txt"};

static void expect_same_bytes(const char *made, const unsigned char *got, size_t made_size,
                              const char *fixture, const unsigned char *want, size_t want_size)
{
    size_t first = 0;
    while (first < made_size && first < want_size && got[first] == want[first])
        first++;
    ck_assert_msg(made_size == want_size && first == want_size,
                  "%s differs from %s (%zu and %zu bytes, first difference at byte %zu)", made,
                  fixture, made_size, want_size, first);
}

/* Metadata keys the export gained after 83e02d7, each at the value that
 * leaves the model what it was (docs/checkpoint-format.md): in the header
 * they are the only bytes allowed to differ. */
static const char *const later_defaults[] = {",\n  \"post_process\":\"none\""};

/* The header's JSON (its 8-byte length dropped), with the later keys at
 * their defaults removed and the padding spaces at its end trimmed. */
static size_t header_core(unsigned char *json, size_t len)
{
    for (size_t k = 0; k < sizeof later_defaults / sizeof *later_defaults; k++) {
        const size_t n = strlen(later_defaults[k]);
        for (size_t i = 0; i + n <= len; i++)
            if (!memcmp(json + i, later_defaults[k], n)) {
                memmove(json + i, json + i + n, len - i - n);
                len -= n;
                break;
            }
    }
    while (len && json[len - 1] == ' ')
        len--;
    return len;
}

/* A safetensors file: its tensor bytes equal the fixture's, and its header
 * too, but for metadata keys added since at their defaults. */
static void expect_same_safetensors(const char *made, unsigned char *got, size_t made_size,
                                    const char *fixture, unsigned char *want, size_t want_size)
{
    ck_assert_msg(made_size >= 8 && want_size >= 8, "%s or %s has no header", made, fixture);
    uint64_t made_len = 0, want_len = 0;
    for (int i = 7; i >= 0; i--) {
        made_len = made_len << 8 | got[i];
        want_len = want_len << 8 | want[i];
    }
    ck_assert_msg(made_len <= made_size - 8 && want_len <= want_size - 8, "%s: bad header", made);
    expect_same_bytes(made, got + 8 + made_len, made_size - 8 - made_len, fixture,
                      want + 8 + want_len, want_size - 8 - want_len);
    expect_same_bytes(made, got + 8, header_core(got + 8, made_len), fixture, want + 8,
                      header_core(want + 8, want_len));
}

static void expect_same_file(const char *made, const char *fixture)
{
    size_t made_size, want_size;
    unsigned char *got = testfile_read(made, &made_size),
                  *want = testfile_read(fixture, &want_size);
    const size_t n = strlen(made);
    if (n > 12 && !strcmp(made + n - 12, ".safetensors"))
        expect_same_safetensors(made, got, made_size, fixture, want, want_size);
    else
        expect_same_bytes(made, got, made_size, fixture, want, want_size);
    free(got);
    free(want);
}

/* Runs scripts/same-bits-run.sh with the current build into a new folder
 * (its name into dir[64]), on GEMM road `road` ("openblas", or NULL: the
 * one RNNSEARCH_GEMM chooses), with its `more` runs when more is 1. */
static void same_bits_run(char *dir, const char *road, int more)
{
    char cmd[1024], out[8192];
    testdir_make(dir, "rnnsearch-same-bits");
    snprintf(cmd, sizeof cmd, "%s%s sh scripts/same-bits-run.sh %s %s%s 2>&1",
             road ? "RNNSEARCH_GEMM=" : "", road ? road : "", testprog_path(), dir,
             more ? " more" : "");
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
}

START_TEST(training_and_translation_give_the_fixture_bits)
{
    char fixture[256], why[512];
    const char *core = openblas_get_corename();
    snprintf(fixture, sizeof fixture, FIXTURE "/%s", core);
    char dir[64], made[256], want[512];
    same_bits_run(dir, "openblas", 0);
    struct stat st;
    if (stat(fixture, &st) || !S_ISDIR(st.st_mode)) {
        /* No fixture: one road run twice still gives the same bits (a
         * deterministic program), which any kernel can show. */
        char again[64];
        same_bits_run(again, "openblas", 0);
        for (int i = 0; i < 3; i++) {
            snprintf(made, sizeof made, "%s/%s", again, made_files[i]);
            snprintf(want, sizeof want, "%s/%s", dir, made_files[i]);
            expect_same_file(made, want);
        }
        testdir_remove(again);
        testdir_remove(dir);
        /* blas-variant's kernels (shared/blas-variant) are made to have none. */
        if (strncmp(core, "variant-", 8)) {
            snprintf(why, sizeof why,
                     "same_bits: no fixture for OpenBLAS core %s (%s/README.md says how to add "
                     "one); two runs gave the same bits",
                     core, "tests/fixtures");
            test_skip(why);
        }
        return;
    }
    for (int i = 0; i < 3; i++) {
        snprintf(made, sizeof made, "%s/%s", dir, made_files[i]);
        snprintf(want, sizeof want, "%s/%s", fixture, made_files[i]);
        expect_same_file(made, want);
    }
    testdir_remove(dir);
}
END_TEST

/* Another road than the reference: no fixture by design, one run twice. */
START_TEST(another_road_gives_the_same_bits_twice)
{
    if (!strcmp(rs_gemm_road_name(), "openblas"))
        return; /* the test above is this road's */
    char dir[64], again[64], made[256], want[256];
    same_bits_run(dir, NULL, 1);
    same_bits_run(again, NULL, 1);
    for (size_t i = 0; i < sizeof more_files / sizeof *more_files; i++) {
        snprintf(made, sizeof made, "%s/%s", again, more_files[i]);
        snprintf(want, sizeof want, "%s/%s", dir, more_files[i]);
        expect_same_file(made, want);
    }
    testdir_remove(again);
    testdir_remove(dir);
}
END_TEST

Suite *same_bits_suite(void)
{
    Suite *s = suite_create("same_bits");
    TCase *tc = tcase_create("fixture of 83e02d7");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, training_and_translation_give_the_fixture_bits);
    tcase_add_test(tc, another_road_gives_the_same_bits_twice);
    suite_add_tcase(s, tc);
    return s;
}
