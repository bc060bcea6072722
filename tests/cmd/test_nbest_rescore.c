/* Every hypothesis of translate's n-best list can be scored again by score
 * and gets its F0, the empty translation of an empty line included (F0= 0,
 * given without decoding): score refused the pair of an empty source and
 * an empty target. */
#define _DEFAULT_SOURCE /* realpath */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"
#include "tinymodel.h"

START_TEST(every_n_best_hypothesis_is_scored_to_its_f0)
{
    char dir[64], cmd[16384], out[8192], prog[4096];
    ck_assert_ptr_nonnull(realpath(testprog_path(), prog));
    testdir_make(dir, "rnnsearch-rescore");
    char model[128];
    snprintf(model, sizeof model, "%s/m.ckpt", dir);
    rs_model m;
    rs_error err;
    tiny_model_with_words(&m, 4, "haus", 1);
    /* Words it knows, not <unk> (whose text reads back as other tokens). */
    m.w.out_bw[RS_UNK] -= 20.0f;
    m.w.out_bw[RS_RESERVED] += 1.0f;
    ck_assert_msg(!rs_checkpoint_save(model, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    testfile_put(dir, "src.txt", "das haus\n\ndas das haus\n");
    /* The n-best list, its hypotheses paired with their sources, scored. */
    snprintf(cmd, sizeof cmd,
             "cd %s && %s translate -m m.ckpt --beam 3 --n-best 3 --max-len 6 src.txt > nbest "
             "2>/dev/null && awk -F ' [|][|][|] ' 'NR == FNR { src[FNR - 1] = $0; next } "
             "{ print src[$1] \"\\t\" $2 > \"pairs.tsv\"; sub(/^F0= /, \"\", $3); print $3 }' "
             "src.txt nbest > f0 && %s score -m m.ckpt pairs.tsv > scores && paste f0 scores",
             dir, prog, prog);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
    int lines = 0, empty = 0;
    for (char *line = out; *line; lines++) {
        char *end;
        const double f0 = strtod(line, &end), score = strtod(end, &end);
        ck_assert_msg(*end == '\n' && fabs(f0 - score) <= 1e-5 * fabs(f0) + 1e-5,
                      "line %d: F0 %g, score %g:\n%s", lines + 1, f0, score, out);
        empty += f0 == 0;
        line = end + 1;
    }
    ck_assert_int_eq(lines, 7); /* 3 + 1 + 3 */
    ck_assert_int_eq(empty, 1);
    /* An empty source has no other translation. */
    snprintf(cmd, sizeof cmd, "printf '\\tthe\\n' | %s score -m %s 2>&1", prog, model);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "<stdin>:1: empty sentence in column 1"), "%s", out);
    testdir_remove(dir);
}
END_TEST

Suite *nbest_rescore_suite(void)
{
    Suite *s = suite_create("nbest_rescore");
    TCase *tc = tcase_create("nbest_rescore");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, every_n_best_hypothesis_is_scored_to_its_f0);
    suite_add_tcase(s, tc);
    return s;
}
