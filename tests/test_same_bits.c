/* The arithmetic does not change by accident: a short seeded training
 * (dropout, word dropout, label smoothing, two shards) gives parameter bytes
 * equal to those the build of commit 83e02d7 wrote, and its greedy and beam
 * translations equal that build's (tests/fixtures/same-bits/, see the
 * README there). A refactoring of a layer that reorders one sum fails here. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testdir.h"
#include "testprog.h"

#define FIXTURE "tests/fixtures/same-bits"
#define TRAINING                                                                                   \
    "--emb 16 --hidden 32 --att 16 --maxout 16 --batch-size 16 --epochs 40 --eval-every 500 "      \
    "--dropout 0.1 --src-word-dropout 0.1 --tgt-word-dropout 0.1 --label-smoothing 0.1 "           \
    "--threads 2 --seed 7"

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
    char dir[64], cmd[2048], out[4096], path[256];
    testdir_make(dir, "rnnsearch-same-bits");
    snprintf(cmd, sizeof cmd,
             "head -n 400 corpora/dates/train.tsv > %s/train.tsv && "
             "head -n 40 corpora/dates/dev.tsv > %s/dev.tsv && "
             "head -n 20 corpora/dates/test.tsv | cut -f1 > %s/src.txt && "
             "%s train --train %s/train.tsv --dev %s/dev.tsv --out %s/m " TRAINING
             " --quiet 2>&1 && "
             "%s export -m %s/m/last.ckpt -o %s/params.safetensors 2>&1 && "
             "%s translate -m %s/m/last.ckpt -o %s/greedy.txt %s/src.txt 2>&1 && "
             "%s translate -m %s/m/last.ckpt --beam 5 -o %s/beam5.txt %s/src.txt 2>&1",
             dir, dir, dir, testprog_path(), dir, dir, dir, testprog_path(), dir, dir,
             testprog_path(), dir, dir, dir, testprog_path(), dir, dir, dir);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    static const char *const files[] = {"params.safetensors", "greedy.txt", "beam5.txt"};
    for (int i = 0; i < 3; i++) {
        char fixture[256];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        snprintf(fixture, sizeof fixture, FIXTURE "/%s", files[i]);
        expect_same_file(path, fixture);
    }
    testdir_remove(dir);
}
END_TEST

Suite *same_bits_suite(void)
{
    Suite *s = suite_create("same_bits");
    TCase *tc = tcase_create("fixture of 83e02d7");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, training_and_translation_give_the_fixture_bits);
    suite_add_tcase(s, tc);
    return s;
}
