/* The training view over HTTP (serve/run.c, read by jobs.c's reader): a run
 * followed while training appends to it; what is refused (files that could
 * block, links out of the run directory, a directory anyone may write);
 * malformed and overlong watch records; long logs thinned; answers that are
 * UTF-8 and bounded. The JSON itself is test_run.c's. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "search/forced.h"
#include "common/json.h"
#include "serve/serve.h"
#include "serve/run.h"
#include "serveclient.h"
#include "testdir.h"
#include "testnetns.h"
#include "testprog.h"
#include "testskip.h"
#include "search/translate.h"

/* The training view of a run with --attention none says there are no
 * watched alignments and why; its replay is refused with the same words. */
START_TEST(the_run_view_of_a_model_without_attention_says_why_nothing_is_watched)
{
    char run[128];
    testdir_make(run, "rs_none_run");
    testfile_put(run, "train.log",
                 "2026-11-26T00:00:00Z configuration: src_vocab=9 tgt_vocab=9 attention=none "
                 "tie_embeddings=0\n");
    testfile_put(run, "train.log.tsv", "step\tepoch\ttrain_loss\n10\t1\t2.5\n");
    size_t len;
    int status;
    rs_error err;
    char *json = rs_run_log_json(run, 1 << 20, &len, &status, &err);
    ck_assert_msg(json != NULL, "%s", err.msg);
    rs_json *j = rs_json_parse(json, len, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(str(j, "no_alignment"), "--attention none"));
    rs_json_free(j);
    free(json);
    FILE *out = tmpfile();
    ck_assert_int_eq(rs_run_write_replay(out, run, &err), -1);
    ck_assert_msg(strstr(err.msg, "no watch.jsonl to replay: a model with --attention none"), "%s",
                  err.msg);
    fclose(out);
    /* An attentive run's answer has no such member. */
    testfile_put(run, "train.log", "configuration: attention=additive\n");
    json = rs_run_log_json(run, 1 << 20, &len, &status, &err);
    ck_assert_ptr_null(strstr(json, "no_alignment"));
    free(json);
    testdir_remove(run);
}
END_TEST

/* The training view follows a run in progress: a training appends to
 * watch.jsonl while a client polls GET /api/run/watch?from=NEXT; every answer
 * is whole JSON (no torn record), the records come in order, some arrive
 * while the training still runs, and all of them together are the file. */
START_TEST(the_run_view_reads_a_watch_file_while_training_appends)
{
    char dir[64], cmd[1024], run[128];
    testdir_make(dir, "rnnsearch-serve-run");
    snprintf(run, sizeof run, "%s/run", dir);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_answer = 32 * 1024; /* the records come in several answers */
    opt.run_dir = run;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    /* Nothing trained yet: an empty run. */
    request(port, "GET", "/api/run/watch?from=0", NULL, a);
    ck_assert_int_eq(a->status, 200);
    rs_json *j = json_of(a);
    ck_assert_uint_eq(rs_json_get(j, "records")->count, 0);
    rs_json_free(j);

    snprintf(cmd, sizeof cmd,
             "head -n 3000 corpora/reorder/train.tsv > %s/train.tsv && exec %s train --train "
             "%s/train.tsv --dev corpora/reorder/dev.tsv --out %s --epochs 1 --eval-every 4 "
             "--emb 16 --hidden 32 --att 16 --maxout 8 --quiet 2> %s/stderr",
             dir, testprog_path(), dir, run, dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    uint64_t next = 0;
    int records = 0, while_running = 0, finished = 0, last_step = 0;
    while (!finished) {
        int status;
        finished = waitpid(pid, &status, WNOHANG) == pid;
        if (finished)
            ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the training failed");
        /* After the end, read until nothing is left. */
        for (int more = 1; more;) {
            char path[64];
            snprintf(path, sizeof path, "/api/run/watch?from=%llu", (unsigned long long)next);
            request(port, "GET", path, NULL, a);
            ck_assert_int_eq(a->status, 200);
            j = json_of(a);
            const rs_json *recs = rs_json_get(j, "records");
            uint64_t from, to;
            ck_assert(rs_json_to_u64(rs_json_get(j, "from"), &from) == 0 && from == next);
            ck_assert(rs_json_to_u64(rs_json_get(j, "next"), &to) == 0 && to >= next);
            for (size_t k = 0; k < recs->count; k++) {
                const int step = (int)num(&recs->items[k], "step");
                ck_assert_int_ge(step, last_step);
                last_step = step;
                ck_assert(rs_json_get(&recs->items[k], "alignment") != NULL);
            }
            records += (int)recs->count;
            while_running += !finished && recs->count > 0 && next > 0;
            more = finished && to > next;
            next = to;
            rs_json_free(j);
        }
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ck_assert_msg(while_running > 0, "no record was read while the training ran");
    char path[256];
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    size_t size;
    char *file = (char *)testfile_read(path, &size);
    int lines = 0;
    for (char *p = file; (p = strchr(p, '\n')); p++)
        lines++;
    free(file);
    ck_assert_uint_eq(next, size);
    ck_assert_int_eq(records, lines);
    ck_assert_int_gt(last_step, 0);

    /* The log as columns and rows. */
    request(port, "GET", "/api/run", NULL, a);
    ck_assert_int_eq(a->status, 200);
    j = json_of(a);
    const rs_json *cols = rs_json_get(j, "columns"), *rows = rs_json_get(j, "rows");
    ck_assert_str_eq(item(cols, 0)->string, "step");
    ck_assert_uint_ge(rows->count, 2);
    ck_assert_int_eq((int)item(item(rows, rows->count - 1), 0)->number, last_step);
    rs_json_free(j);
    request(port, "POST", "/api/run", "{}", a);
    expect_error(a, 405, "GET", "POST /api/run");
    request(port, "GET", "/api/run/watch?from=-1", NULL, a);
    expect_error(a, 400, "byte offset", "negative offset");
    with_headers(port, "GET", "/api/run/watch",
                 "Host: localhost\r\nOrigin: http://evil.example\r\n", NULL, a);
    expect_error(a, 403, "cross-origin", "foreign page reading the run");
    rs_server_stop(s);

    /* Without a run: 404 saying how to give one; with a token, it is needed. */
    opt.run_dir = NULL;
    s = start_with(&opt);
    request(rs_server_port(s), "GET", "/api/run", NULL, a);
    expect_error(a, 404, "--run DIR", "no run");
    rs_server_stop(s);
    opt.run_dir = run;
    opt.token = "secret-token";
    s = start_with(&opt);
    request(rs_server_port(s), "GET", "/api/run/watch", NULL, a);
    expect_error(a, 401, "token", "run without the token");
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* A GET answered within `wait` seconds (else the test fails). */
static void get_within(int port, const char *path, double wait, answer *a)
{
    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
    const double start = now();
    int fd = connect_to(port);
    send_all(fd, req, (size_t)n);
    read_answer(fd, a, start, wait);
    close(fd);
}

/* A FIFO (or any file that is not regular) in the run directory would block
 * whoever opens or reads it: refused at once, and the server goes on
 * answering; the program still ends on SIGTERM. */
START_TEST(run_files_that_could_block_are_refused)
{
    char dir[64], path[256], options[128];
    testdir_make(dir, "rnnsearch-serve-fifo");
    snprintf(path, sizeof path, "%s/watch.jsonl", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    get_within(port, "/api/run/watch?from=0", 3.0, a);
    expect_error(a, 403, "watch.jsonl is not a regular file", "a FIFO as watch.jsonl");
    ck_assert_msg(a->seconds < 1.0, "refusing the FIFO took %.2f s", a->seconds);
    get_within(port, "/api/run", 3.0, a);
    expect_error(a, 403, "train.log.tsv is not a regular file", "a FIFO as train.log.tsv");
    get_within(port, "/", 3.0, a);
    ck_assert_msg(a->status == 200 && a->seconds < 1.0, "%.200s", a->text);
    get_within(port, "/api/models", 3.0, a);
    ck_assert_msg(a->status == 200 && a->seconds < 1.0, "%.200s", a->text);
    double t = now();
    rs_server_stop(s);
    ck_assert_msg(now() - t < 3.0, "stopping took %.2f s", now() - t);
    /* A FIFO only as watch.jsonl: the log is still read, its size left unknown. */
    unlink(path);
    testfile_write(path, (const unsigned char *)"step\tdev_loss\n1\t2.5\n", 20);
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"rows\":[[1,2.5]]") &&
                      strstr(a->body, "\"watch_bytes\":null"),
                  "%.300s", a->text);
    rs_server_stop(s);

    server_process p;
    snprintf(options, sizeof options, "--run %s", dir);
    spawn_server(&p, options);
    get_within(p.port, "/api/run/watch?from=0", 3.0, a);
    expect_error(a, 403, "not a regular file", "the program, a FIFO as watch.jsonl");
    get_within(p.port, "/api/models", 3.0, a);
    ck_assert_int_eq(a->status, 200);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    testdir_remove(dir);
}
END_TEST

/* Polls /api/run/watch from `from` until `next` stops moving (at most 20
 * answers, each within 2 s): the records' "sentence" numbers in order into
 * ids, the skipped records and bytes summed; returns the last next. */
static uint64_t poll_watch(int port, uint64_t from, int *ids, int *n_ids, int *skipped,
                           uint64_t *skipped_bytes)
{
    answer *a = &answers[1];
    for (int k = 0; k < 20; k++) {
        char path[96];
        snprintf(path, sizeof path, "/api/run/watch?from=%llu", (unsigned long long)from);
        get_within(port, path, 2.0, a);
        ck_assert_msg(a->status == 200, "from %llu: %.300s", (unsigned long long)from, a->text);
        rs_json *j = json_of(a);
        const rs_json *recs = rs_json_get(j, "records");
        for (size_t r = 0; r < recs->count; r++)
            ids[(*n_ids)++] = (int)num(&recs->items[r], "sentence");
        uint64_t next, bytes, skips;
        ck_assert(rs_json_to_u64(rs_json_get(j, "next"), &next) == 0 && next >= from);
        ck_assert(rs_json_to_u64(rs_json_get(j, "skipped"), &skips) == 0);
        ck_assert(rs_json_to_u64(rs_json_get(j, "skipped_bytes"), &bytes) == 0);
        *skipped += (int)skips;
        *skipped_bytes += bytes;
        rs_json_free(j);
        if (next == from)
            return next;
        from = next;
    }
    ck_abort_msg("the watch answers did not stop moving in 20 polls");
    return from;
}

static void append_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* A watch record as training writes it (train/watch.h), of one word. */
#define WATCH_RECORD(step, sentence)                                                               \
    "{\"step\":" #step ",\"sentence\":" #sentence                                                  \
    ",\"kind\":\"greedy\",\"source\":[\"a\"],\"target\":[\"b\"],\"alignment\":[[1]]}\n"

/* Only records as training writes them reach the page (one that lacked
 * its matrix made the replay page draw nothing at all): others are counted
 * as unreadable. */
START_TEST(malformed_watch_records_are_unreadable)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-records");
    snprintf(path, sizeof path, "%s/watch.jsonl", dir);
    const char *text = WATCH_RECORD(
        1,
        0) "{\"step\":700}\n{}\n[1,2]\n"
           "{\"step\":1,\"sentence\":0,\"kind\":\"greedy\",\"source\":[\"a\"],\"target\":[\"b\"],"
           "\"alignment\":[[1,2]]}\n"
           "{\"step\":1,\"sentence\":0,\"kind\":\"greedy\",\"source\":\"abc\",\"target\":[\"b\"],"
           "\"alignment\":[[1]]}\n"
           "{\"step\":1,\"sentence\":\"0\",\"kind\":\"greedy\",\"source\":[\"a\"],\"target\":[\"b\"],"
           "\"alignment\":[[\"1\"]]}\n" WATCH_RECORD(2, 0);
    testfile_write(path, (const unsigned char *)text, strlen(text));
    size_t len;
    int status;
    rs_error err;
    char *json = rs_run_watch_json(dir, 0, 1 << 20, &len, &status, &err);
    ck_assert_msg(json, "%s", err.msg);
    ck_assert_msg(strstr(json, "\"unreadable\":6") && strstr(json, "\"step\":2,"), "%s", json);
    ck_assert_msg(!strstr(json, "\"step\":700"), "%s", json);
    free(json);
    testdir_remove(dir);
}
END_TEST

/* A watch record longer than an answer may be is skipped with a count, not
 * refused on every poll: a 3 MiB line still without its newline, then once
 * it ends, the records after it; the same for a whole record of 40 KB.
 * Every answer comes within 2 s and the other endpoints answer meanwhile. */
START_TEST(watch_records_too_long_are_skipped)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-long");
    snprintf(path, sizeof path, "%s/watch.jsonl", dir);
    const char *two = WATCH_RECORD(0, 1) WATCH_RECORD(0, 2);
    testfile_write(path, (const unsigned char *)two, strlen(two));
    const size_t big = (size_t)3 << 20;
    char *line = malloc(big);
    ck_assert_ptr_nonnull(line);
    memset(line, 'x', big);
    memcpy(line, "{\"step\":1,\"sentence\":9,\"pad\":\"", 31);
    append_file(path, line, big);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_answer = 16384;
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    int ids[16], n = 0, skipped = 0;
    uint64_t bytes = 0;
    uint64_t next = poll_watch(port, 0, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ids[0] * 10 + ids[1], 12);
    ck_assert_int_eq(skipped, 1);
    ck_assert_uint_eq(bytes, big);
    ck_assert_uint_eq(next, strlen(two) + big);
    answer *a = &answers[0];
    get_within(port, "/api/models", 2.0, a);
    ck_assert_int_eq(a->status, 200);
    /* The line ends; a whole record of 40 KB follows, then a small one. */
    const char *third = "\"}\n" WATCH_RECORD(1, 3);
    append_file(path, third, strlen(third));
    memcpy(line + 40000, "\"}\n", 3);
    append_file(path, line, 40003);
    const char *last = WATCH_RECORD(1, 4);
    append_file(path, last, strlen(last));
    n = 0;
    skipped = 0;
    bytes = 0;
    next = poll_watch(port, next, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ids[0] * 10 + ids[1], 34);
    ck_assert_int_eq(skipped, 1);
    ck_assert_uint_eq(bytes, 3 + 40003);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(next, (uint64_t)st.st_size);
    /* From 0 in one go: the four small records, two skipped. */
    n = 0;
    skipped = 0;
    bytes = 0;
    poll_watch(port, 0, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(skipped, 2);
    /* An offset inside a line reads from the next one. */
    n = 0;
    poll_watch(port, 5, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(ids[0], 2);
    rs_server_stop(s);
    free(line);
    testdir_remove(dir);
}
END_TEST

/* A symbolic link in the run directory that leads out of it is refused (a
 * run directory may be /tmp, where anyone can make one); one that stays
 * inside is followed, and so is a run directory that is itself a link. */
START_TEST(symlinks_out_of_the_run_directory_are_refused)
{
    char dir[64], run[128], path[256], target[256];
    testdir_make(dir, "rnnsearch-serve-links");
    snprintf(run, sizeof run, "%s/run", dir);
    ck_assert_int_eq(mkdir(run, 0700), 0);
    snprintf(path, sizeof path, "%s/secret", dir);
    const char *secret = "step\tpassword\n1\thunter2\n";
    testfile_write(path, (const unsigned char *)secret, strlen(secret));
    snprintf(path, sizeof path, "%s/train.log.tsv", run);
    ck_assert_int_eq(symlink("../secret", path), 0);
    snprintf(target, sizeof target, "%s/secret", dir);
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    ck_assert_int_eq(symlink(target, path), 0);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = run;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    get_within(port, "/api/run", 3.0, a);
    expect_error(a, 403, "leads out of the run directory", "a log linked to a file outside");
    ck_assert_ptr_null(strstr(a->text, "hunter2"));
    ck_assert_ptr_null(strstr(a->text, "secret"));
    get_within(port, "/api/run/watch", 3.0, a);
    expect_error(a, 403, "leads out of the run directory", "watch.jsonl linked outside");
    /* Through a directory link: run/sub -> .. */
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", run);
    ck_assert_int_eq(symlink("..", path), 0);
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    ck_assert_int_eq(symlink("sub/secret", path), 0);
    get_within(port, "/api/run/watch", 3.0, a);
    expect_error(a, 403, "leads out of the run directory", "a link through a directory link");
    rs_server_stop(s);
    /* Links that stay inside, and a run directory reached through a link. */
    snprintf(path, sizeof path, "%s/train.log.tsv", run);
    unlink(path);
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    unlink(path);
    snprintf(path, sizeof path, "%s/log.real", run);
    testfile_write(path, (const unsigned char *)"step\tloss\n7\t1.5\n", 16);
    snprintf(path, sizeof path, "%s/train.log.tsv", run);
    ck_assert_int_eq(symlink("log.real", path), 0);
    char link[128];
    snprintf(link, sizeof link, "%s/run-link", dir);
    ck_assert_int_eq(symlink("run", link), 0);
    opt.run_dir = link;
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"rows\":[[7,1.5]]"), "%.300s", a->text);
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* A log of `rows` rows, steps 1…rows, about 75 bytes a row. */
static void write_log(const char *path, int rows)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\t"
          "dev_metric_name\taer\talign_precision\talign_recall\n",
          f);
    for (int k = 1; k <= rows; k++)
        fprintf(f, "%d\t%d\t%.9f\t%.9f\t%.4f\t115000.0\t0.002\t%.3f\tbleu\t\t\t\n", k, 1 + k / 100,
                3.0 / (1 + k * 0.001), 3.1 / (1 + k * 0.001), 0.01 * k, 0.08 * k);
    ck_assert_int_eq(fclose(f), 0);
}

/* The steps of an /api/run answer's rows, checked to rise; their count. */
static size_t log_steps(const rs_json *j, int *steps, size_t max)
{
    const rs_json *rows = rs_json_get(j, "rows");
    ck_assert_ptr_nonnull(rows);
    ck_assert_uint_le(rows->count, max);
    for (size_t k = 0; k < rows->count; k++) {
        steps[k] = (int)item(item(rows, k), 0)->number;
        ck_assert_uint_eq(item(rows, k)->count, 12);
        if (k)
            ck_assert_int_gt(steps[k], steps[k - 1]);
    }
    return rows->count;
}

/* A 30 000-row log is larger than an answer: thinned to RS_RUN_MAX_ROWS rows
 * sampled evenly, the first and the last kept, and the page told so; a
 * log read whole is thinned exactly; a small --max-answer gets fewer rows. */
START_TEST(long_logs_are_thinned)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-thin");
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    write_log(path, 30000);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    rs_serve_options opt = test_options(1, 4, 10);
    rs_serve_options_default(&opt); /* the default --max-answer, 2 MiB */
    opt.port = 0;
    ck_assert_uint_gt((uint64_t)st.st_size, opt.max_answer);
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    answer *a = &answers[0];
    static int steps[RS_RUN_MAX_ROWS];
    for (int poll_no = 0; poll_no < 3; poll_no++) { /* every poll, not only the first */
        get_within(rs_server_port(s), "/api/run", 5.0, a);
        ck_assert_msg(a->status == 200, "%.300s", a->text);
        rs_json *j = json_of(a);
        size_t n = log_steps(j, steps, RS_RUN_MAX_ROWS);
        ck_assert_uint_ge(n, RS_RUN_MAX_ROWS * 9 / 10);
        ck_assert_int_eq(steps[0], 1);
        ck_assert_int_eq(steps[n - 1], 30000);
        for (size_t k = 1; k < n; k++) /* evenly: no gap over twice the mean */
            ck_assert_int_le(steps[k] - steps[k - 1], 2 * 30000 / (int)n + 2);
        ck_assert(rs_json_get(j, "thinned")->type == RS_JSON_TRUE);
        ck_assert(rs_json_get(j, "log_rows_exact")->type == RS_JSON_FALSE);
        const double rows = num(j, "log_rows");
        ck_assert_msg(fabs(rows - 30000) < 1500, "estimated %g rows", rows);
        rs_json_free(j);
    }
    rs_server_stop(s);
    /* 5 000 rows, read whole: exactly the rows k·4999/1999. */
    write_log(path, 5000);
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_uint_eq(log_steps(j, steps, RS_RUN_MAX_ROWS), RS_RUN_MAX_ROWS);
    for (int k = 0; k < RS_RUN_MAX_ROWS; k++)
        ck_assert_int_eq(steps[k], 1 + k * 4999 / (RS_RUN_MAX_ROWS - 1));
    ck_assert_int_eq((int)num(j, "log_rows"), 5000);
    ck_assert(rs_json_get(j, "log_rows_exact")->type == RS_JSON_TRUE);
    ck_assert(rs_json_get(j, "thinned")->type == RS_JSON_TRUE);
    rs_json_free(j);
    rs_server_stop(s);
    /* A small --max-answer: fewer rows, the last still there. */
    opt.max_answer = 16384;
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200 && strlen(a->body) <= 16384, "%.300s", a->text);
    j = json_of(a);
    size_t n = log_steps(j, steps, RS_RUN_MAX_ROWS);
    ck_assert_uint_ge(n, 20);
    ck_assert_int_eq(steps[n - 1], 5000);
    rs_json_free(j);
    rs_server_stop(s);
    /* A short log is sent whole. */
    write_log(path, 3);
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    j = json_of(a);
    ck_assert_uint_eq(log_steps(j, steps, 3), 3);
    ck_assert(rs_json_get(j, "thinned")->type == RS_JSON_FALSE);
    rs_json_free(j);
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* Found by attacking the server: /api/run passed the log's bytes through
 * (invalid UTF-8 in cells and column names, a NUL cutting a cell); a 2 MB
 * row of control bytes took seconds (escaped 6x larger, rewritten up to 12
 * times); an answer too large got 500, not 413; a missing log was "thinned". */
static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(run_answers_are_utf8_and_bounded)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-utf8");
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = dir;
    opt.max_answer = 1 << 21;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    /* No log: nothing was left out. */
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_msg(rs_json_get(j, "thinned")->type == RS_JSON_FALSE, "%.300s", a->body);
    rs_json_free(j);
    static const char bad[] = "step\tx\xff\n1\t\xff\xfe\n2\ta\0b\n";
    write_bytes(path, bad, sizeof bad - 1);
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    j = json_of(a); /* json_of fails on invalid UTF-8 */
    const rs_json *rows = rs_json_get(j, "rows");
    ck_assert_uint_eq(rows->count, 2);
    ck_assert_str_eq(item(item(rows, 0), 1)->string, "\xEF\xBF\xBD\xEF\xBF\xBD");
    ck_assert_str_eq(item(item(rows, 1), 1)->string, "a\xEF\xBF\xBD"
                                                     "b"); /* the NUL */
    ck_assert_str_eq(item(rs_json_get(j, "columns"), 1)->string, "x\xEF\xBF\xBD");
    rs_json_free(j);
    /* A 2 MB row of control bytes, and many such rows: answered quickly. */
    const size_t big = 2000000;
    char *text = malloc(big + 64);
    ck_assert_ptr_nonnull(text);
    int n = snprintf(text, 64, "step\tx\n1\t");
    memset(text + n, 0x01, big);
    text[n + big] = '\n';
    write_bytes(path, text, (size_t)n + big + 1);
    double t0 = now();
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(now() - t0 < 0.5, "a 2 MB row of control bytes took %.2f s", now() - t0);
    rs_json_free(json_of(a));
    /* Rows of tabs (a cell each): fewer rows, and quickly. */
    n = snprintf(text, 64, "step\tx\n");
    for (size_t at = (size_t)n; at + 4096 < big; at += 4096) {
        memset(text + at, '\t', 4095);
        text[at + 4095] = '\n';
        n = (int)(at + 4096);
    }
    write_bytes(path, text, (size_t)n);
    t0 = now();
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(now() - t0 < 1.0, "rows of tabs took %.2f s", now() - t0);
    rs_json_free(json_of(a));
    rs_server_stop(s);
    /* A header that cannot fit any answer: 413, as documented. */
    opt.max_answer = 16384;
    s = start_with(&opt);
    memset(text, 'c', 20000);
    memcpy(text + 20000, "\n1\n", 3);
    for (int k = 0; k < 20000; k += 10)
        text[k] = '\t';
    write_bytes(path, text, 20003);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    expect_error(a, 413, "larger than", "a header over --max-answer");
    rs_server_stop(s);
    free(text);
    testdir_remove(dir);
}
END_TEST

/* Found by using the server carelessly: `-m /tmp/x.ckpt` made /tmp the run
 * directory, so anyone could put there the files the page shows. A default
 * run directory that everyone may write to is left out, saying so; --run
 * names it deliberately. */
START_TEST(a_run_directory_anyone_may_write_is_not_shown_by_default)
{
    char dir[64], path[256], model_arg[256], options[128];
    testdir_make(dir, "rnnsearch-serve-shared");
    snprintf(path, sizeof path, "%s/m/last.ckpt", model_dir);
    size_t size;
    unsigned char *ckpt = testfile_read(path, &size);
    snprintf(model_arg, sizeof model_arg, "%s/x.ckpt", dir);
    testfile_write(model_arg, ckpt, size);
    free(ckpt);
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    testfile_write(path, (const unsigned char *)"step\tloss\n1\t2\n", 14);
    ck_assert_int_eq(chmod(dir, 01777), 0);
    server_process p;
    answer *a = &answers[0];
    spawn_server_with(&p, model_arg, "");
    char *log = read_log(&p);
    ck_assert_msg(strstr(log, "no training view of") && strstr(log, "anyone may write there") &&
                      !strstr(log, "serve: training view of"),
                  "%s", log);
    free(log);
    get_within(p.port, "/api/run", 3.0, a);
    expect_error(a, 404, "--run DIR", "a default run directory anyone may write to");
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    snprintf(options, sizeof options, "--run %s", dir);
    spawn_server_with(&p, model_arg, options);
    get_within(p.port, "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"rows\":[[1,2]]"), "%.300s", a->text);
    /* The log says where the view is: the page has no tabs. */
    log = read_log(&p);
    ck_assert_msg(strstr(log, "serve: training view of") && strstr(log, "below the explorer") &&
                      !strstr(log, "Training tab"),
                  "%s", log);
    free(log);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    spawn_server_with(&p, model_arg, "");
    get_within(p.port, "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    testdir_remove(dir);
}
END_TEST

Suite *serve_run_view_suite(void)
{
    Suite *s = suite_create("serve_run_view");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_run_view_of_a_model_without_attention_says_why_nothing_is_watched);
    tcase_add_test(tc, the_run_view_reads_a_watch_file_while_training_appends);
    tcase_add_test(tc, run_files_that_could_block_are_refused);
    tcase_add_test(tc, watch_records_too_long_are_skipped);
    tcase_add_test(tc, malformed_watch_records_are_unreadable);
    tcase_add_test(tc, symlinks_out_of_the_run_directory_are_refused);
    tcase_add_test(tc, long_logs_are_thinned);
    tcase_add_test(tc, a_run_directory_anyone_may_write_is_not_shown_by_default);
    tcase_add_test(tc, run_answers_are_utf8_and_bounded);
    suite_add_tcase(s, tc);
    return s;
}
