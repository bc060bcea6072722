/* Alignment error rate: a hand-computed example with sure and possible links
 * (library and `rnnsearch aer`), malformed links named by file, line and
 * column, and agreement with the fraction scripts/align-accuracy.sh prints
 * when every gold link is sure. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/aer.h"
#include "testdir.h"
#include "testprog.h"

/* Gold: sentence 1 sure {0-0, 2-2}, possible {1?1}; sentence 2 sure {0-1}.
 * Hypothesis: {0-0, 1-1, 1-2} and {0-1, 1-1}. So |A| = 5, |S| = 3,
 * A ∩ S = {0-0, 0-1}: 2, A ∩ P = {0-0, 1-1, 0-1}: 3, and
 * AER = 1 − (2 + 3)/(5 + 3) = 0.375, precision 3/5, recall 2/3. */
static const char *const gold_lines[] = {"0-0 1?1 2-2", "0-1"};
static const char *const hyp_lines[] = {"1-2 0-0 1-1 0-0", "0-1 1-1"};

START_TEST(hand_computed_example)
{
    rs_aer_counts c = {0};
    rs_error err;
    for (int i = 0; i < 2; i++) {
        rs_gold_links g, h;
        ck_assert_msg(rs_gold_links_parse(gold_lines[i], &g, &err) == 0, "%s", err.msg);
        ck_assert_msg(rs_gold_links_parse(hyp_lines[i], &h, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(rs_aer_add(&c, h.links, h.count, &g, &err), 0);
        rs_gold_links_free(&g);
        rs_gold_links_free(&h);
    }
    ck_assert_int_eq(c.hyp, 5); /* the repeated 0-0 counts once */
    ck_assert_int_eq(c.sure, 3);
    ck_assert_int_eq(c.possible, 4);
    ck_assert_int_eq(c.hyp_sure, 2);
    ck_assert_int_eq(c.hyp_possible, 3);
    rs_aer_result r;
    rs_aer_compute(&c, &r);
    ck_assert_double_eq_tol(r.aer, 0.375, 1e-12);
    ck_assert_double_eq_tol(r.precision, 0.6, 1e-12);
    ck_assert_double_eq_tol(r.recall, 2.0 / 3.0, 1e-12);

    /* The same through the program. */
    char dir[64], cmd[512], out[512];
    testdir_make(dir, "rnnsearch-aer");
    snprintf(cmd, sizeof cmd, "%s/gold.align", dir);
    testfile_write(cmd, (const unsigned char *)"0-0 1?1 2-2\n0-1\n", 16);
    snprintf(cmd, sizeof cmd, "%s/hyp.align", dir);
    testfile_write(cmd, (const unsigned char *)"1-2 0-0 1-1 0-0\n0-1 1-1\n", 24);
    snprintf(cmd, sizeof cmd, "aer %s/gold.align %s/hyp.align", dir, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "AER 37.50  precision 60.00  recall 66.67  (sentences 2, links 5, "
                              "sure 3, possible 4)"),
                  "%s", out);
    testdir_remove(dir);
}
END_TEST

START_TEST(bad_links_are_named)
{
    rs_gold_links g;
    rs_error err;
    static const char *const bad[] = {"0-1 2-", "0-1 a-2", "0:1", "1-2-3", "0-1x", "-1-2"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        ck_assert_msg(rs_gold_links_parse(bad[k], &g, &err) != 0, "'%s' accepted", bad[k]);
    ck_assert_int_eq(rs_gold_links_parse("0-1 a-2", &g, &err), -1);
    ck_assert_msg(strstr(err.msg, "column 5") && strstr(err.msg, "'a-2'"), "%s", err.msg);
    ck_assert_int_eq(rs_gold_links_parse("  ", &g, &err), 0);
    ck_assert_int_eq(g.count, 0);
    rs_gold_links_free(&g);

    char dir[64], path[256], cmd[768], out[1024];
    testdir_make(dir, "rnnsearch-aer-bad");
    snprintf(path, sizeof path, "%s/gold.align", dir);
    testfile_write(path, (const unsigned char *)"0-0\n1-1 2=2\n", 12);
    snprintf(cmd, sizeof cmd, "aer %s %s", path, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "gold.align:2: column 5: '2=2'"), "%s", out);
    /* Files of different lengths, a missing file, a wrong number of arguments. */
    snprintf(cmd, sizeof cmd, "aer %s corpora/reorder/dev.align", path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "has 2 lines but"), "%s", out);
    snprintf(cmd, sizeof cmd, "aer %s/missing %s", dir, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "missing"), "%s", out);
    ck_assert_int_eq(testprog_run_all("aer only-one", out, sizeof out), 2);
    /* The help names nothing an installed rnnsearch lacks (the source tree's scripts/). */
    ck_assert_int_eq(testprog_run_all("aer --help", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "recall is the share of gold links") && !strstr(out, "scripts/"),
                  "%s", out);
    testdir_remove(dir);
}
END_TEST

/* rs_aer_files: two files' counts as rs_aer_add sums them; a bad line, files
 * of other lengths and a gold file of possible links only fail, naming the
 * file (and line). */
START_TEST(files_are_counted)
{
    char dir[64], gold[256], hyp[256], only_possible[256];
    testdir_make(dir, "rnnsearch-aer-files");
    snprintf(gold, sizeof gold, "%s/gold", dir);
    snprintf(hyp, sizeof hyp, "%s/hyp", dir);
    snprintf(only_possible, sizeof only_possible, "%s/possible", dir);
    testfile_write(gold, (const unsigned char *)"0-0 1?1\n2-2\n", 12);
    testfile_write(hyp, (const unsigned char *)"0-0 1-1\n2-1\n", 12);
    testfile_write(only_possible, (const unsigned char *)"0?0\n1?1\n", 8);
    rs_aer_counts c;
    rs_error err;
    ck_assert_msg(!rs_aer_files(gold, hyp, &c, &err), "%s", err.msg);
    ck_assert_int_eq(c.sentences, 2);
    ck_assert_int_eq(c.hyp, 3);
    ck_assert_int_eq(c.sure, 2);
    ck_assert_int_eq(c.possible, 3);
    ck_assert_int_ne(rs_aer_files(only_possible, hyp, &c, &err), 0);
    ck_assert_msg(strstr(err.msg, "possible has no sure links"), "%s", err.msg);
    testfile_write(hyp, (const unsigned char *)"0-0\n", 4);
    ck_assert_int_ne(rs_aer_files(gold, hyp, &c, &err), 0);
    ck_assert_msg(strstr(err.msg, "gold has 2 lines but") && strstr(err.msg, "hyp has 1"), "%s",
                  err.msg);
    testfile_write(hyp, (const unsigned char *)"0-0\nx\n", 6);
    ck_assert_int_ne(rs_aer_files(gold, hyp, &c, &err), 0);
    ck_assert_msg(strstr(err.msg, "hyp:2: "), "%s", err.msg);
    testdir_remove(dir);
}
END_TEST

/* With every gold link sure (corpora/reorder), recall is the share of gold
 * links the argmax alignment finds: the percentage align-accuracy.sh prints. */
START_TEST(recall_is_align_accuracy_fraction)
{
    char dir[64], cmd[1024], out[4096];
    testdir_make(dir, "rnnsearch-aer-acc");
    snprintf(cmd, sizeof cmd,
             "head -n 400 corpora/reorder/train.tsv > %s/train.tsv && "
             "%s train --train %s/train.tsv --out %s/m --epochs 2 --emb 16 --hidden 16 --att 16 "
             "--maxout 8 --quiet 2>/dev/null && "
             "RNNSEARCH=%s scripts/align-accuracy.sh --model %s/m --min 0",
             dir, testprog_path(), dir, dir, testprog_path(), dir);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    const char *agree = strstr(out, "alignment agreement:");
    ck_assert_msg(agree, "%s", out);
    double script = atof(agree + strlen("alignment agreement:"));
    snprintf(cmd, sizeof cmd,
             "align -m %s/m --pairs --format pharaoh corpora/reorder/test.tsv > %s/hyp && %s aer "
             "corpora/reorder/test.align %s/hyp",
             dir, dir, testprog_path(), dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    const char *recall = strstr(out, "recall ");
    ck_assert_msg(recall, "%s", out);
    ck_assert_double_eq_tol(atof(recall + 7), script, 0.006); /* both print 2 decimals */
    /* One argmax link per target word against one gold link each: AER = 1 − recall. */
    ck_assert_double_eq_tol(atof(strstr(out, "AER ") + 4), 100 - script, 0.011);
    testdir_remove(dir);
}
END_TEST

Suite *aer_suite(void)
{
    Suite *s = suite_create("aer");
    TCase *tc = tcase_create("aer");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hand_computed_example);
    tcase_add_test(tc, bad_links_are_named);
    tcase_add_test(tc, files_are_counted);
    tcase_add_test(tc, recall_is_align_accuracy_fraction);
    suite_add_tcase(s, tc);
    return s;
}
