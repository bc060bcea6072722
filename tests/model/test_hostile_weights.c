/* A checkpoint of huge but finite weights (3e38: products overflow into
 * infinities and NaN) is refused when it is loaded, naming the file, the
 * tensor and the bound (model/params.h RS_PARAM_MAX_ABS), by every command
 * that loads one: score printed "nan" and exited 0, n-best lines "F0= -nan",
 * alignments rows of zeros. At the bound itself every result is a finite
 * number and every alignment row sums to 1. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/byteorder.h"
#include "common/crc32.h"
#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"
#include "tinymodel.h"

/* path: every weight of `model` replaced by `value` in the file itself (the
 * writer refuses such weights): saved with a value found nowhere else, whose
 * bytes are replaced, and the CRC-32 made again. */
static void save_with_every_weight(rs_model *model, const char *path, float value)
{
    const float marker = 0.8125f; /* 0x3F500000 */
    for (size_t k = 0; k < model->layout.total; k++)
        model->params[k] = marker;
    rs_error err;
    ck_assert_msg(!rs_checkpoint_save(path, model, NULL, &err), "%s", err.msg);
    size_t size;
    unsigned char *data = testfile_read(path, &size), from[4], to[4];
    rs_put_le32(from, rs_f32_bits(marker));
    rs_put_le32(to, rs_f32_bits(value));
    size_t replaced = 0;
    for (size_t i = 0; i + 4 <= size - 4; i++)
        if (!memcmp(data + i, from, 4)) {
            memcpy(data + i, to, 4);
            replaced++;
            i += 3;
        }
    ck_assert_uint_eq(replaced, model->layout.total);
    rs_put_le32(data + size - 4, rs_crc32_update(0, data, size - 4));
    testfile_write(path, data, size);
    free(data);
}

/* Every command that reads the model refuses it, exit 1, naming the file,
 * the tensor and the bound; nothing is printed on standard output. */
START_TEST(weights_of_3e38_are_refused_by_every_command)
{
    char dir[64], path[128], input[160], cmd[1024];
    testdir_make(dir, "rnnsearch-hostile");
    snprintf(path, sizeof path, "%s/huge.ckpt", dir);
    snprintf(input, sizeof input, "%s/pairs.tsv", dir);
    testfile_put(dir, "pairs.tsv", "das das\tthe\n");
    rs_model m;
    tiny_model_with_words(&m, 4, "haus", 1);
    rs_error err;
    save_with_every_weight(&m, path, NAN); /* and what is not a number at all */
    rs_model back;
    ck_assert_int_eq(rs_checkpoint_load(path, &back, NULL, &err), -1);
    ck_assert_msg(strstr(err.msg, "holds NaN at entry 0: a model's weights are finite"), "%s",
                  err.msg);
    save_with_every_weight(&m, path, 3e38f);
    rs_model_free(&m);
    ck_assert_int_eq(rs_checkpoint_load(path, &m, NULL, &err), -1);
    ck_assert_msg(strstr(err.msg, "holds 3e+38 at entry 0: a model's weights are at most 1e+06 in "
                                  "magnitude"),
                  "%s", err.msg);
    const char *const commands[] = {
        "score -m %s %s",
        "translate -m %s --beam 2 --n-best 2 %s",
        "align -m %s --pairs -f tsv %s",
        "translate -m %s --beam 2 %s",
        "explain -m %s das --step 1",
        "info -m %s",
    };
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char args[512], out[4096];
        snprintf(args, sizeof args, commands[i], path, input);
        snprintf(cmd, sizeof cmd, "%s 2>/dev/null", args);
        ck_assert_msg(testprog_run(cmd, out, sizeof out) == 1, "%s", args);
        ck_assert_msg(out[0] == 0, "%s printed: %s", args, out);
        ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
        ck_assert_msg(strstr(out, path) && strstr(out, "holds 3e+38") &&
                          strstr(out, "at most 1e+06"),
                      "%s: %s", args, out);
    }
    testdir_remove(dir);
}
END_TEST

/* Weights of ±1e6, the bound: a score, n-best scores and alignment rows
 * that are numbers, each row summing to 1. */
START_TEST(weights_at_the_bound_give_numbers)
{
    char dir[64], path[128], cmd[1024], out[8192];
    testdir_make(dir, "rnnsearch-bound");
    snprintf(path, sizeof path, "%s/bound.ckpt", dir);
    testfile_put(dir, "pairs.tsv", "das das haus\tthe the\n");
    rs_model m;
    tiny_model_with_words(&m, 4, "haus", 1);
    for (size_t k = 0; k < m.layout.total; k++)
        m.params[k] = k % 3 ? RS_PARAM_MAX_ABS : -RS_PARAM_MAX_ABS;
    rs_error err;
    ck_assert_msg(!rs_checkpoint_save(path, &m, NULL, &err), "%s", err.msg);
    m.params[7] = nextafterf(RS_PARAM_MAX_ABS, INFINITY);
    ck_assert_int_eq(rs_checkpoint_save(path, &m, NULL, &err), -1);
    ck_assert_msg(strstr(err.msg, "cannot save: tensor") && strstr(err.msg, "at entry 7"), "%s",
                  err.msg);
    rs_model_free(&m);

    snprintf(cmd, sizeof cmd, "score -m %s %s/pairs.tsv", path, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    const double score = strtod(out, NULL);
    ck_assert_msg(isfinite(score) && score <= 0, "%s", out);
    snprintf(cmd, sizeof cmd, "translate -m %s --beam 3 --n-best 3 --max-src-len 10 %s/pairs.tsv",
             path, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    int lines = 0;
    for (const char *f = out; (f = strstr(f, "F0= ")); f += 4, lines++)
        ck_assert_msg(isfinite(strtod(f + 4, NULL)), "%s", out);
    ck_assert_msg(lines >= 1 && !strstr(out, "nan") && !strstr(out, "inf"), "%s", out);
    snprintf(cmd, sizeof cmd, "align -m %s --pairs -f tsv %s/pairs.tsv", path, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    /* sentence, tgt_index, tgt_token, src_index, src_token, weight */
    double row[8] = {0};
    int rows = 0;
    for (char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int tgt;
        double w;
        ck_assert_msg(sscanf(line + 1, "%*d\t%d\t%*s\t%*d\t%*s\t%lf", &tgt, &w) == 2, "%s", line);
        ck_assert(tgt >= 0 && tgt < 8 && isfinite(w) && w >= 0);
        row[tgt] += w;
        rows = tgt + 1 > rows ? tgt + 1 : rows;
    }
    ck_assert_int_eq(rows, 3); /* the, the, </s> */
    for (int i = 0; i < rows; i++)
        ck_assert_msg(fabs(row[i] - 1) < 1e-5, "row %d sums to %g:\n%s", i, row[i], out);
    testdir_remove(dir);
}
END_TEST

Suite *hostile_weights_suite(void)
{
    Suite *s = suite_create("hostile_weights");
    TCase *tc = tcase_create("hostile_weights");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, weights_of_3e38_are_refused_by_every_command);
    tcase_add_test(tc, weights_at_the_bound_give_numbers);
    suite_add_tcase(s, tc);
    return s;
}
