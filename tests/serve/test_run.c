/* serve/run.c: a training run's directory as the JSON of the training view
 * (GET /api/run, GET /api/run/watch) and as the replay page: the log's
 * cells as numbers, null or strings, thinning past RS_RUN_MAX_ROWS, the
 * watch records from a byte offset, what is refused (a link out of the
 * directory) and what a run without alignments says. (The HTTP side is
 * test_run_view.c's.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "serve/run.h"
#include "testdir.h"

#define LOG_HEAD "step\tepoch\ttrain_loss\tdev_loss\tdev_metric_name\n"
/* A watch record as training writes it (train/watch.h), at step STEP. */
#define RECORD(STEP)                                                                               \
    "{\"step\":" #STEP ",\"sentence\":0,\"kind\":\"dev\",\"source\":[\"here\",\"</s>\"],"          \
    "\"target\":[\"</s>\"],\"alignment\":[[0.25,0.75]]}\n"

static rs_json *parse_answer(char *text, size_t len)
{
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(strlen(text), len);
    rs_error err;
    rs_json *j = rs_json_parse(text, len, &err);
    ck_assert_msg(j != NULL, "%s: %s", err.msg, text);
    ck_assert_int_eq(j->type, RS_JSON_OBJECT);
    free(text);
    return j;
}

static double number(const rs_json *obj, const char *key)
{
    const rs_json *v = rs_json_get(obj, key);
    ck_assert_msg(v && v->type == RS_JSON_NUMBER, "'%s' is not a number", key);
    return v->number;
}

static int is_true(const rs_json *obj, const char *key)
{
    const rs_json *v = rs_json_get(obj, key);
    ck_assert_msg(v && (v->type == RS_JSON_TRUE || v->type == RS_JSON_FALSE), "'%s'", key);
    return v->type == RS_JSON_TRUE;
}

static rs_json *log_json(const char *dir)
{
    size_t len;
    int status = 0;
    rs_error err;
    char *text = rs_run_log_json(dir, 1 << 20, &len, &status, &err);
    ck_assert_msg(text != NULL, "%d %s", status, err.msg);
    return parse_answer(text, len);
}

static rs_json *watch_json(const char *dir, uint64_t from)
{
    size_t len;
    int status = 0;
    rs_error err;
    char *text = rs_run_watch_json(dir, from, 1 << 20, &len, &status, &err);
    ck_assert_msg(text != NULL, "%d %s", status, err.msg);
    return parse_answer(text, len);
}

START_TEST(the_log_gives_its_columns_and_cells_as_numbers_null_or_strings)
{
    char dir[128];
    testdir_make(dir, "run");
    static const char log[] = LOG_HEAD "100\t1\t4.5\t\tbleu\n"
                                       "200\t1\t3.25\t3.5\tbleu\n";
    testfile_put(dir, "train.log.tsv", log);
    testfile_put(dir, "watch.jsonl", RECORD(100));
    rs_json *j = log_json(dir);
    const rs_json *cols = rs_json_get(j, "columns");
    ck_assert(cols && cols->type == RS_JSON_ARRAY && cols->count == 5);
    ck_assert_str_eq(cols->items[0].string, "step");
    ck_assert_str_eq(cols->items[4].string, "dev_metric_name");
    const rs_json *rows = rs_json_get(j, "rows");
    ck_assert(rows && rows->count == 2);
    const rs_json *first = &rows->items[0];
    ck_assert(first->type == RS_JSON_ARRAY && first->count == 5);
    ck_assert(first->items[0].type == RS_JSON_NUMBER && first->items[0].number == 100);
    ck_assert(first->items[2].type == RS_JSON_NUMBER && first->items[2].number == 4.5);
    ck_assert_int_eq(first->items[3].type, RS_JSON_NULL); /* no dev loss yet */
    ck_assert(first->items[4].type == RS_JSON_STRING && !strcmp(first->items[4].string, "bleu"));
    ck_assert(rows->items[1].items[3].number == 3.5);
    ck_assert(number(j, "log_rows") == 2);
    ck_assert(is_true(j, "log_rows_exact"));
    ck_assert(!is_true(j, "thinned"));
    ck_assert(number(j, "log_bytes") == sizeof log - 1);
    ck_assert(number(j, "watch_bytes") == strlen(RECORD(100)));
    ck_assert_ptr_null(rs_json_get(j, "no_alignment"));
    const rs_json *d = rs_json_get(j, "dir");
    ck_assert(d && d->type == RS_JSON_STRING && !strcmp(d->string, dir));
    rs_json_free(j);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_run_without_a_log_has_no_columns_and_one_without_attention_says_why)
{
    char dir[128];
    testdir_make(dir, "run");
    rs_json *j = log_json(dir);
    ck_assert_uint_eq(rs_json_get(j, "columns")->count, 0);
    ck_assert_uint_eq(rs_json_get(j, "rows")->count, 0);
    ck_assert(number(j, "log_rows") == 0);
    rs_json_free(j);

    testfile_put(dir, "train.log", "configuration: emb=8 attention=none hidden=8\n");
    j = log_json(dir);
    const rs_json *why = rs_json_get(j, "no_alignment");
    ck_assert(why && why->type == RS_JSON_STRING && why->len > 0);
    rs_json_free(j);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_long_log_is_thinned_to_its_first_last_and_evenly_between)
{
    char dir[128], path[256];
    testdir_make(dir, "run");
    const int n = RS_RUN_MAX_ROWS * 3 + 1;
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(LOG_HEAD, f);
    for (int i = 1; i <= n; i++)
        fprintf(f, "%d\t1\t2.0\t2.5\tbleu\n", i);
    ck_assert_int_eq(fclose(f), 0);
    rs_json *j = log_json(dir);
    const rs_json *rows = rs_json_get(j, "rows");
    ck_assert_uint_eq(rows->count, RS_RUN_MAX_ROWS);
    ck_assert(rows->items[0].items[0].number == 1);
    ck_assert(rows->items[rows->count - 1].items[0].number == n);
    for (size_t k = 1; k < rows->count; k++)
        ck_assert(rows->items[k].items[0].number > rows->items[k - 1].items[0].number);
    ck_assert(is_true(j, "thinned"));
    ck_assert(number(j, "log_rows") == n);
    ck_assert(is_true(j, "log_rows_exact")); /* read whole: under the cap */
    rs_json_free(j);
    testdir_remove(dir);
}
END_TEST

START_TEST(watch_records_are_read_from_an_offset_in_whole_lines)
{
    char dir[128];
    testdir_make(dir, "run");
    /* A record, a line that is no JSON, one whose alignment row is too short
     * for its source, and a record. */
    static const char all[] =
        RECORD(1) "not json\n"
                  "{\"step\":2,\"sentence\":0,\"kind\":\"dev\",\"source\":[\"a\",\"b\"],"
                  "\"target\":[\"x\"],\"alignment\":[[1]]}\n" RECORD(3);
    testfile_put(dir, "watch.jsonl", all);
    const uint64_t size = strlen(all);

    rs_json *j = watch_json(dir, 0);
    const rs_json *rec = rs_json_get(j, "records");
    ck_assert(rec && rec->count == 2); /* what is not a record is left out */
    ck_assert(number(&rec->items[0], "step") == 1);
    ck_assert(number(&rec->items[1], "step") == 3);
    ck_assert(number(j, "unreadable") == 2);
    ck_assert(number(j, "skipped") == 0);
    ck_assert(number(j, "from") == 0);
    ck_assert(number(j, "next") == size);
    ck_assert(number(j, "size") == size);
    rs_json_free(j);

    /* An offset inside the first line reads from the next one. */
    j = watch_json(dir, 3);
    rec = rs_json_get(j, "records");
    ck_assert(rec->count == 1 && number(&rec->items[0], "step") == 3);
    ck_assert(number(j, "next") == size);
    rs_json_free(j);

    /* Nothing new: next stays where it was asked. */
    j = watch_json(dir, size);
    ck_assert_uint_eq(rs_json_get(j, "records")->count, 0);
    ck_assert(number(j, "next") == size);
    rs_json_free(j);

    /* Asked past the end (a resumed run truncated it): size says so. */
    j = watch_json(dir, size + 100);
    ck_assert(number(j, "size") < number(j, "from"));
    rs_json_free(j);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_link_out_of_the_run_directory_is_refused_with_403)
{
    char dir[128], outside[128], target[256], link[256];
    testdir_make(dir, "run");
    testdir_make(outside, "elsewhere");
    testfile_put(outside, "secret.tsv", LOG_HEAD "1\t1\t1\t1\tbleu\n");
    snprintf(target, sizeof target, "%s/secret.tsv", outside);
    snprintf(link, sizeof link, "%s/train.log.tsv", dir);
    ck_assert_int_eq(symlink(target, link), 0);
    size_t len;
    int status = 0;
    rs_error err;
    ck_assert_ptr_null(rs_run_log_json(dir, 1 << 20, &len, &status, &err));
    ck_assert_int_eq(status, 403);
    ck_assert_msg(strstr(err.msg, "leads out of the run directory"), "%s", err.msg);
    testdir_remove(dir);
    testdir_remove(outside);
}
END_TEST

START_TEST(the_replay_page_embeds_the_log_and_the_watch_records)
{
    char dir[128], path[256];
    testdir_make(dir, "run");
    rs_error err;
    FILE *out = tmpfile();
    ck_assert_ptr_nonnull(out);
    /* No watch.jsonl: nothing to replay, naming the file. */
    ck_assert(rs_run_write_replay(out, dir, &err));
    ck_assert_msg(strstr(err.msg, "watch.jsonl"), "%s", err.msg);
    fclose(out);

    testfile_put(dir, "train.log.tsv", LOG_HEAD "100\t1\t4.5\t4.75\tbleu\n");
    testfile_put(dir, "watch.jsonl", RECORD(100));
    snprintf(path, sizeof path, "%s/replay.html", dir);
    out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(!rs_run_write_replay(out, dir, &err), "%s", err.msg);
    ck_assert_int_eq(fclose(out), 0);
    size_t size;
    char *page = (char *)testfile_read(path, &size);
    const char *data =
        strstr(page, "<script id=\"replay-data\" type=\"application/json\">{\"log\":");
    ck_assert_msg(data != NULL, "no replay data in the page");
    ck_assert_ptr_nonnull(strstr(data, "\"watch\":"));
    ck_assert_ptr_nonnull(strstr(data, "4.75"));
    ck_assert_ptr_nonnull(strstr(data, "here"));
    ck_assert_ptr_nonnull(strstr(page, "</html>"));
    free(page);
    testdir_remove(dir);
}
END_TEST

/* serve -m MODEL shows the run of the checkpoint's directory when it has a
 * log or watch file; one anyone may write to is named apart, not shown. */
START_TEST(a_model_names_its_run_directory_unless_anyone_may_write_there)
{
    char dir[256], model[300], run[300] = "", shared[300] = "";
    testdir_make(dir, "rnnsearch-run-of-model");
    testfile_put(dir, "m.ckpt", "x");
    snprintf(model, sizeof model, "%s/m.ckpt", dir);
    rs_run_dir_of_model(model, run, sizeof run, shared);
    ck_assert_str_eq(run, "");
    ck_assert_str_eq(shared, "");
    testfile_put(dir, "watch.jsonl", "");
    rs_run_dir_of_model(model, run, sizeof run, shared);
    ck_assert_str_eq(run, dir);
    ck_assert_str_eq(shared, "");
    run[0] = 0;
    ck_assert_int_eq(chmod(dir, 0777), 0);
    rs_run_dir_of_model(model, run, sizeof run, shared);
    ck_assert_str_eq(run, "");
    ck_assert_str_eq(shared, dir);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    testdir_remove(dir);
}
END_TEST

Suite *run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, the_log_gives_its_columns_and_cells_as_numbers_null_or_strings);
    tcase_add_test(tc, a_run_without_a_log_has_no_columns_and_one_without_attention_says_why);
    tcase_add_test(tc, a_long_log_is_thinned_to_its_first_last_and_evenly_between);
    tcase_add_test(tc, watch_records_are_read_from_an_offset_in_whole_lines);
    tcase_add_test(tc, a_link_out_of_the_run_directory_is_refused_with_403);
    tcase_add_test(tc, the_replay_page_embeds_the_log_and_the_watch_records);
    tcase_add_test(tc, a_model_names_its_run_directory_unless_anyone_may_write_there);
    suite_add_tcase(s, tc);
    return s;
}
