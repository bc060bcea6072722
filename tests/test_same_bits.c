/* The arithmetic does not change by accident: a short seeded training
 * (dropout, word dropout, label smoothing, two shards) gives parameter bytes
 * equal to those the build of commit 83e02d7 wrote, and its greedy and beam
 * translations equal that build's (tests/fixtures/same-bits/, see the
 * README there). A refactoring of a layer that reorders one sum fails here.
 *
 * OpenBLAS picks its kernels for the processor, and kernels differ in the
 * order of their sums, so the bits are a property of (code, kernel): the
 * fixture lives in a folder named by OpenBLAS's core name. On a core that has
 * no fixture the test still requires two runs to give the same bits (seeded
 * runs reproduce), and says which core lacks a fixture. */
#include <cblas.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testdir.h"
#include "testprog.h"

#define FIXTURE "tests/fixtures/same-bits"
#define TRAINING                                                                                   \
    "--emb 16 --hidden 32 --att 16 --maxout 16 --batch-size 16 --epochs 40 --eval-every 500 "      \
    "--dropout 0.1 --src-word-dropout 0.1 --tgt-word-dropout 0.1 --label-smoothing 0.1 "           \
    "--threads 2 --seed 7"

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

/* Trains, exports and translates into dir/run: the three files of made_files. */
static void train_export_translate(const char *dir, const char *run)
{
    char cmd[2560], out[4096];
    const char *p = testprog_path();
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/%s && "
             "%s train --train %s/train.tsv --dev %s/dev.tsv --out %s/%s/m " TRAINING
             " --quiet 2>&1 && "
             "%s export -m %s/%s/m/last.ckpt -o %s/%s/params.safetensors 2>&1 && "
             "%s translate -m %s/%s/m/last.ckpt -o %s/%s/greedy.txt %s/src.txt 2>&1 && "
             "%s translate -m %s/%s/m/last.ckpt --beam 5 -o %s/%s/beam5.txt %s/src.txt 2>&1",
             dir, run, p, dir, dir, dir, run, p, dir, run, dir, run, p, dir, run, dir, run, dir, p,
             dir, run, dir, run, dir);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
}

START_TEST(training_and_translation_give_the_fixture_bits)
{
    char dir[64], cmd[1024], out[4096], made[256], want[512], fixture[256];
    testdir_make(dir, "rnnsearch-same-bits");
    snprintf(cmd, sizeof cmd,
             "head -n 400 corpora/dates/train.tsv > %s/train.tsv && "
             "head -n 40 corpora/dates/dev.tsv > %s/dev.tsv && "
             "head -n 20 corpora/dates/test.tsv | cut -f1 > %s/src.txt",
             dir, dir, dir);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    train_export_translate(dir, "a");

    const char *core = openblas_get_corename();
    snprintf(fixture, sizeof fixture, FIXTURE "/%s", core);
    struct stat st;
    const int have_fixture = stat(fixture, &st) == 0 && S_ISDIR(st.st_mode);
    if (!have_fixture) {
        printf("same_bits: no fixture of 83e02d7 for OpenBLAS core %s (see %s/README.md); "
               "checked that two runs give the same bits\n",
               core, "tests/fixtures");
        train_export_translate(dir, "b");
    }
    for (int i = 0; i < 3; i++) {
        snprintf(made, sizeof made, "%s/a/%s", dir, made_files[i]);
        if (have_fixture)
            snprintf(want, sizeof want, "%s/%s", fixture, made_files[i]);
        else
            snprintf(want, sizeof want, "%s/b/%s", dir, made_files[i]);
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
