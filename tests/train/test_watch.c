/* Watching a training: watch.jsonl records (whole lines, one per watched
 * sentence, kind and evaluation, steps those of the log), its truncation on
 * resume and its reader that never returns a torn line, and the dev AER
 * columns of train.log.tsv with --dev-align. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "testdir.h"
#include "testprog.h"
#include "train/rundir.h"
#include "train/watch.h"

START_TEST(truncation_and_whole_line_reads)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-watch-file");
    snprintf(path, sizeof path, "%s/" RS_WATCH_FILE, dir);
    const char *text = "{\"step\":0,\"a\":1}\n{\"step\":5,\"a\":2}\n{\"step\":10,\"a\":3}\n"
                       "{\"step\":15,\"a\"";
    testfile_write(path, (const unsigned char *)text, strlen(text));
    char *data;
    size_t len;
    uint64_t next;
    rs_error err;
    /* Whole lines only: the torn last one is left out, and a small budget
     * stops at a line's end (one longer line is read whole). */
    ck_assert_int_eq(rs_watch_read(path, 0, 1 << 20, &data, &len, &next, &err), 0);
    ck_assert_str_eq(data, "{\"step\":0,\"a\":1}\n{\"step\":5,\"a\":2}\n{\"step\":10,\"a\":3}\n");
    ck_assert_uint_eq(next, len);
    free(data);
    ck_assert_int_eq(rs_watch_read(path, 0, 20, &data, &len, &next, &err), 0);
    ck_assert_str_eq(data, "{\"step\":0,\"a\":1}\n");
    free(data);
    ck_assert_int_eq(rs_watch_read(path, 0, 5, &data, &len, &next, &err), 0);
    ck_assert_str_eq(data, "{\"step\":0,\"a\":1}\n");
    free(data);
    ck_assert_int_eq(rs_watch_read(path, 17, 1 << 20, &data, &len, &next, &err), 0);
    ck_assert_str_eq(data, "{\"step\":5,\"a\":2}\n{\"step\":10,\"a\":3}\n");
    ck_assert_uint_eq(next, 17 + len);
    free(data);
    /* Past the end (a file truncated under the reader): nothing. */
    ck_assert_int_eq(rs_watch_read(path, 10000, 1 << 20, &data, &len, &next, &err), 0);
    ck_assert_uint_eq(len, 0);
    free(data);
    /* Resumed at step 5: the records after it and the torn line go. */
    ck_assert_int_eq(rs_rundir_truncate_rows(path, 0, "{\"step\":", 5, &err), 0);
    testfile_expect(path, "{\"step\":0,\"a\":1}\n{\"step\":5,\"a\":2}\n");
    snprintf(path, sizeof path, "%s/missing.jsonl", dir);
    ck_assert_int_eq(rs_watch_read(path, 0, 100, &data, &len, &next, &err), 0);
    ck_assert_uint_eq(len, 0);
    free(data);
    testdir_remove(dir);
}
END_TEST

/* Every line of the file: a JSON object, into objs[] (at most max). */
static int parse_lines(char *text, rs_json **objs, int max)
{
    int n = 0;
    for (char *line = text, *eol; (eol = strchr(line, '\n')); line = eol + 1) {
        rs_error err;
        ck_assert_int_lt(n, max);
        objs[n] = rs_json_parse(line, (size_t)(eol - line), &err);
        ck_assert_msg(objs[n], "line %d: %s", n + 1, err.msg);
        n++;
    }
    return n;
}

static double number(const rs_json *o, const char *key)
{
    const rs_json *v = rs_json_get(o, key);
    ck_assert_msg(v && v->type == RS_JSON_NUMBER, "no number '%s'", key);
    return v->number;
}

START_TEST(training_records_watched_sentences_and_aer)
{
    char dir[64], cmd[2048], out[4096], path[256];
    testdir_make(dir, "rnnsearch-watch-train");
    snprintf(cmd, sizeof cmd,
             "head -n 200 corpora/reorder/train.tsv > %s/train.tsv && "
             "head -n 20 corpora/reorder/dev.tsv > %s/dev.tsv && "
             "head -n 20 corpora/reorder/dev.align > %s/dev.align && "
             "printf 'my horse sees the dog\\nthis dog waits\\tvardo sei stepat\\n' > %s/watch",
             dir, dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "train --train %s/train.tsv --dev %s/dev.tsv --out %s/m --epochs 2 --eval-every 10 "
             "--emb 16 --hidden 16 --att 16 --maxout 8 --batch-size 16 --quiet --watch %s/watch "
             "--dev-align %s/dev.align 2>&1",
             dir, dir, dir, dir, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "dev AER"), "%s", out);

    /* The log: 26 steps, evaluated at 10, 20 and the end; AER columns filled. */
    snprintf(path, sizeof path, "%s/m/train.log.tsv", dir);
    size_t size;
    char *log = (char *)testfile_read(path, &size);
    ck_assert_msg(strstr(log, "\taer\talign_precision\talign_recall\n"), "%s", log);
    int steps[8], rows = 0;
    for (char *p = strchr(log, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
        ck_assert_int_lt(rows, 8);
        steps[rows++] = atoi(p);
        const char *cell = p;
        for (int k = 0; k < 9; k++)
            cell = strchr(cell, '\t') + 1;
        double aer = atof(cell);
        ck_assert_msg(cell[0] != '\t' && aer >= 0 && aer <= 100, "row %d: %s", rows, p);
    }
    ck_assert_int_eq(rows, 3);
    free(log);
    /* plot draws the AER curve: a point per evaluation. */
    snprintf(cmd, sizeof cmd, "plot %s/m -o - 2>/dev/null | grep -c 'AER at step'", dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_int_eq(atoi(out), rows);

    /* watch.jsonl: step 0 then each evaluation; per step sentence 0 greedy,
     * sentence 1 greedy and forced (it has a target), rows summing to 1. */
    snprintf(path, sizeof path, "%s/m/" RS_WATCH_FILE, dir);
    char *text = (char *)testfile_read(path, &size);
    /* Watched sentences from a --watch file are not dev pairs: no gold links. */
    ck_assert_msg(!strstr(text, "\"gold\""), "%s", text);
    rs_json *objs[64];
    int n = parse_lines(text, objs, 64);
    ck_assert_int_eq(n, 3 * (rows + 1));
    for (int k = 0; k < n; k++) {
        const int eval = k / 3, sentence = k % 3 ? 1 : 0;
        ck_assert_int_eq((int)number(objs[k], "step"), eval ? steps[eval - 1] : 0);
        ck_assert_int_eq((int)number(objs[k], "sentence"), sentence);
        ck_assert_str_eq(rs_json_get(objs[k], "kind")->string, k % 3 == 2 ? "forced" : "greedy");
        const rs_json *src = rs_json_get(objs[k], "source"), *a = rs_json_get(objs[k], "alignment");
        ck_assert_str_eq(src->items[0].string, sentence ? "this" : "my");
        ck_assert_str_eq(src->items[src->count - 1].string, "</s>");
        if (k % 3 == 2)
            ck_assert_str_eq(rs_json_get(objs[k], "target")->items[1].string, "sei");
        ck_assert_uint_eq(a->count, rs_json_get(objs[k], "target")->count);
        for (size_t i = 0; i < a->count; i++) {
            double sum = 0;
            ck_assert_uint_eq(a->items[i].count, src->count);
            for (size_t j = 0; j < a->items[i].count; j++)
                sum += a->items[i].items[j].number;
            ck_assert_double_eq_tol(sum, 1.0, 1e-5);
        }
        rs_json_free(objs[k]);
    }
    free(text);

    /* Without --watch the first dev pairs are watched, their forced records
     * with the pairs' gold links (the first pair's last link made possible);
     * --no-watch: no file. */
    snprintf(cmd, sizeof cmd, "sed '1s/3-5$/3?5/' %s/dev.align > %s/possible.align", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "train --train %s/train.tsv --dev %s/dev.tsv --out %s/d --max-steps 3 --emb 8 "
             "--hidden 8 --att 8 --maxout 4 --quiet --dev-align %s/possible.align 2>&1 && "
             "%s train --train %s/train.tsv --dev %s/dev.tsv --out %s/n --max-steps 3 --emb 8 "
             "--hidden 8 --att 8 --maxout 4 --quiet --no-watch 2>&1",
             dir, dir, dir, dir, testprog_path(), dir, dir, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    snprintf(path, sizeof path, "%s/d/" RS_WATCH_FILE, dir);
    text = (char *)testfile_read(path, &size);
    n = parse_lines(text, objs, 64);
    ck_assert_int_eq(n, 2 * RS_WATCH_DEFAULT_COUNT * 2); /* steps 0 and 3, greedy and forced */
    int gold = 0;
    for (int k = 0; k < n; k++) {
        const rs_json *g = rs_json_get(objs[k], "gold");
        const int forced = !strcmp(rs_json_get(objs[k], "kind")->string, "forced");
        ck_assert_msg(forced == (g != NULL), "record %d: gold links only on forced records", k);
        gold += forced && number(objs[k], "sentence") == 0;
        rs_json_free(objs[k]);
    }
    ck_assert_int_eq(gold, 2);
    ck_assert_msg(strstr(text, "\"sentence\":0,\"kind\":\"forced\",\"gold\":{\"sure\":[[2,0],[1,1],"
                               "[0,2],[5,3],[4,4]],\"possible\":[[3,5]]},"),
                  "%s", text);
    free(text);
    snprintf(path, sizeof path, "%s/n/" RS_WATCH_FILE, dir);
    ck_assert_msg(access(path, F_OK) != 0, "--no-watch wrote %s", path);
    testdir_remove(dir);
}
END_TEST

START_TEST(bad_watch_and_gold_files_are_named)
{
    char dir[64], cmd[2048], out[4096];
    testdir_make(dir, "rnnsearch-watch-bad");
    snprintf(cmd, sizeof cmd,
             "head -n 50 corpora/reorder/train.tsv > %s/train.tsv && "
             "head -n 5 corpora/reorder/dev.tsv > %s/dev.tsv && "
             "head -n 4 corpora/reorder/dev.align > %s/four.align && "
             "printf '0-0\\n0-1\\n1-1 x\\n0-0\\n0-0\\n' > %s/bad.align && "
             "printf 'a b\\n\\tonly target\\n' > %s/watch",
             dir, dir, dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"--dev-align %s/four.align", "four.align has 4 lines of gold links but the dev set has 5"},
        {"--dev-align %s/bad.align", "bad.align:3: column 5: 'x'"},
        {"--watch %s/watch", "watch:2: the source (before the tab) is empty"},
        {"--watch %s/none", "none"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char extra[256];
        snprintf(extra, sizeof extra, cases[k].args, dir);
        snprintf(cmd, sizeof cmd,
                 "train --train %s/train.tsv --dev %s/dev.tsv --out %s/m%zu --max-steps 2 "
                 "--emb 8 --hidden 8 --att 8 --maxout 4 --quiet %s",
                 dir, dir, dir, k, extra);
        ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 1);
        ck_assert_msg(strstr(out, cases[k].says), "%s: %s", extra, out);
    }
    /* Contradictions are usage errors, found before the model directory is made. */
    snprintf(cmd, sizeof cmd,
             "train --train %s/train.tsv --out %s/u1 --dev-align %s/four.align --quiet", dir, dir,
             dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--dev-align needs a dev set"), "%s", out);
    snprintf(cmd, sizeof cmd,
             "train --train %s/train.tsv --dev %s/dev.tsv --out %s/u2 --watch %s/watch --no-watch",
             dir, dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "contradict"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s/u1", dir);
    ck_assert_msg(access(cmd, F_OK) != 0, "a refused run made %s", cmd);
    testdir_remove(dir);
}
END_TEST

/* A SentencePiece model's watched alignments are in words, merged as
 * `align --words` merges them. */
START_TEST(pieces_are_recorded_as_words)
{
    char dir[64], cmd[1024], path[256];
    testdir_make(dir, "rnnsearch-watch-spm");
    snprintf(cmd, sizeof cmd,
             "train --train corpora/reorder/dev.tsv --dev corpora/reorder/dev.tsv --out %s/m "
             "--subwords 60 --max-steps 2 --emb 8 --hidden 8 --att 8 --maxout 4 --quiet 2>&1",
             dir);
    char out[4096];
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    snprintf(path, sizeof path, "%s/m/" RS_WATCH_FILE, dir);
    size_t size;
    char *text = (char *)testfile_read(path, &size);
    ck_assert_msg(strstr(text, "\"kind\":\"forced\",\"id\":0,\"source\":[\"my\",\"young\","
                               "\"teacher\",\"sees\",\"the\",\"horse\",\"</s>\"],\"target\":["
                               "\"lehro\",\"yelo\",\"mimi\",\"ferro\",\"ka\",\"vidat\",\"</s>\"]"),
                  "%.400s", text);
    ck_assert_ptr_null(strstr(text, "\xE2\x96\x81"));
    free(text);
    testdir_remove(dir);
}
END_TEST

Suite *watch_suite(void)
{
    Suite *s = suite_create("watch");
    TCase *tc = tcase_create("watch");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, truncation_and_whole_line_reads);
    tcase_add_test(tc, training_records_watched_sentences_and_aer);
    tcase_add_test(tc, bad_watch_and_gold_files_are_named);
    tcase_add_test(tc, pieces_are_recorded_as_words);
    suite_add_tcase(s, tc);
    return s;
}
