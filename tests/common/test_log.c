/* Training's timed log (src/common/log.c): every line on standard error starts
 * with the time in ISO 8601, UTC ("YYYY-MM-DDTHH:MM:SSZ "), once however many
 * calls write it; the log file receives the same bytes, appended and flushed
 * line by line; a log that cannot be opened names its path; text printed to a
 * capture stream is logged as lines of its own. Standard error is redirected
 * to a file while a test logs, and restored before anything is asserted. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "testdir.h"

typedef struct {
    int saved;
    char path[128];
} stderr_capture;

static void capture_begin(stderr_capture *c, const char *dir)
{
    snprintf(c->path, sizeof c->path, "%s/stderr", dir);
    int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    c->saved = dup(STDERR_FILENO);
    ck_assert_int_ge(c->saved, 0);
    ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    close(fd);
}

/* What was written to standard error since capture_begin (free it). */
static char *capture_end(stderr_capture *c)
{
    fflush(stderr);
    ck_assert_int_eq(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
    close(c->saved);
    size_t size;
    return (char *)testfile_read(c->path, &size);
}

/* The time t as the log writes it, formatted here field by field. */
static void utc_stamp(time_t t, char buf[80])
{
    struct tm tm;
    ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
    snprintf(buf, 80, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Whether stamp (20 characters) is the UTC time of a second in [from, to]. */
static int stamp_within(const char *stamp, time_t from, time_t to)
{
    for (time_t t = from; t <= to; t++) {
        char want[80];
        utc_stamp(t, want);
        if (!strncmp(stamp, want, 20))
            return 1;
    }
    return 0;
}

/* The text with the stamp at the start of each line removed, after checking
 * that every line has one, of a time in [from, to]; *lines counts them. */
static char *without_stamps(const char *text, time_t from, time_t to, int *lines)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    *lines = 0;
    for (const char *p = text; *p; (*lines)++) {
        ck_assert_msg(strlen(p) > 21 && p[20] == ' ' && stamp_within(p, from, to),
                      "line %d has no stamp of the time it was written: '%s'", *lines + 1, p);
        p += 21;
        const char *eol = strchr(p, '\n');
        const size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
        memcpy(o, p, len);
        o += len;
        p += len;
    }
    *o = 0;
    return out;
}

START_TEST(timestamp_is_iso_8601_utc_whatever_the_time_zone)
{
    /* A zone 5 h 45 min east of UTC (POSIX form: no tz database needed). */
    const char *tz = getenv("TZ");
    char saved_tz[256] = "";
    if (tz)
        snprintf(saved_tz, sizeof saved_tz, "%s", tz);
    setenv("TZ", "XYZ-5:45", 1);
    tzset();
    char stamp[21], stamp2[21];
    const time_t before = time(NULL);
    rs_log_timestamp(stamp);
    const time_t after = time(NULL);
    ck_assert_uint_eq(strlen(stamp), 20);
    for (int i = 0; i < 20; i++) {
        const char c = stamp[i];
        const char want = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':' : 'Z';
        if (i == 4 || i == 7 || i == 10 || i == 13 || i == 16 || i == 19)
            ck_assert_msg(c == want, "'%s': '%c' at %d", stamp, want, i);
        else
            ck_assert_msg(c >= '0' && c <= '9', "'%s': a digit at %d", stamp, i);
    }
    ck_assert_msg(stamp_within(stamp, before, after), "'%s' is not the UTC time", stamp);
    /* Not local time: 5:45 apart, the minutes differ. */
    struct tm local;
    ck_assert_ptr_nonnull(localtime_r(&before, &local));
    char here[32];
    snprintf(here, sizeof here, "%02d:%02d", local.tm_hour, local.tm_min);
    ck_assert_msg(strncmp(stamp + 11, here, 5), "'%s' is local time", stamp);
    rs_log_timestamp(stamp2);
    ck_assert_msg(strcmp(stamp2, stamp) >= 0, "'%s' after '%s'", stamp2, stamp);
    if (tz)
        setenv("TZ", saved_tz, 1);
    else
        unsetenv("TZ");
    tzset();
}
END_TEST

START_TEST(each_line_gets_one_stamp_however_it_is_written)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-log-lines");
    char long_line[1500];
    memset(long_line, 'w', sizeof long_line - 1);
    long_line[sizeof long_line - 1] = 0;
    stderr_capture c;
    const time_t before = time(NULL);
    capture_begin(&c, dir);
    rs_log("one\n");
    rs_log("two %d ", 2); /* a line in several calls */
    rs_log("%s", "");
    rs_log("parts");
    rs_log("\n");
    rs_log("three\nfour\n"); /* several lines in one call */
    rs_log("five\nsi");      /* one ending, the next begun */
    rs_log("x\n");
    rs_log("%s|%d\n", long_line, 7); /* longer than the formatting buffer */
    char *text = capture_end(&c);
    const time_t after = time(NULL);
    int lines;
    char *plain = without_stamps(text, before, after, &lines);
    char want[2048];
    snprintf(want, sizeof want, "one\ntwo 2 parts\nthree\nfour\nfive\nsix\n%s|7\n", long_line);
    ck_assert_str_eq(plain, want);
    ck_assert_int_eq(lines, 7);
    free(plain);
    free(text);
    testdir_remove(dir);
}
END_TEST

START_TEST(the_log_file_gets_what_standard_error_gets)
{
    char dir[64], path[128], other[128];
    testdir_make(dir, "rnnsearch-log-file");
    snprintf(path, sizeof path, "%s/train.log", dir);
    snprintf(other, sizeof other, "%s/other.log", dir);
    testfile_write(path, (const unsigned char *)"an earlier run\n", 15);
    rs_error err = {{0}};
    stderr_capture c;
    const time_t before = time(NULL);
    capture_begin(&c, dir);
    const int opened = rs_log_open(path, &err);
    rs_log("epoch %d | step %d", 1, 10);
    rs_log(" | dev loss %.2f\n", 1.5);
    rs_log("saved %s\n", "last.ckpt");
    /* Written through, not kept in a buffer: the file holds it already. */
    size_t size_open;
    unsigned char *while_open = testfile_read(path, &size_open);
    rs_log_close();
    rs_log("after closing\n");
    char *text = capture_end(&c);
    const time_t after = time(NULL);
    ck_assert_msg(opened == 0, "%s", err.msg);
    size_t size;
    char *file = (char *)testfile_read(path, &size);
    ck_assert_uint_eq(size, size_open);
    ck_assert(!memcmp(file, while_open, size));
    /* Appended after what was there; then the same bytes, stamps included. */
    ck_assert_int_eq(strncmp(file, "an earlier run\n", 15), 0);
    const char *logged = file + 15;
    ck_assert_msg(!strncmp(text, logged, strlen(logged)), "stderr '%s', file '%s'", text, logged);
    int lines;
    char *plain = without_stamps(logged, before, after, &lines);
    ck_assert_str_eq(plain, "epoch 1 | step 10 | dev loss 1.50\nsaved last.ckpt\n");
    free(plain);
    plain = without_stamps(text, before, after, &lines);
    ck_assert_str_eq(plain, "epoch 1 | step 10 | dev loss 1.50\nsaved last.ckpt\nafter closing\n");
    free(plain);
    free(text);
    free(file);
    free(while_open);

    /* Opening another log leaves the first. */
    capture_begin(&c, dir);
    const int first = rs_log_open(path, &err);
    rs_log("to the first\n");
    const int second = rs_log_open(other, &err);
    rs_log("to the second\n");
    rs_log_close();
    free(capture_end(&c));
    ck_assert(first == 0 && second == 0);
    file = (char *)testfile_read(path, &size);
    ck_assert_msg(strstr(file, "to the first\n") && !strstr(file, "to the second"), "%s", file);
    free(file);
    file = (char *)testfile_read(other, &size);
    plain = without_stamps(file, before, time(NULL), &lines);
    ck_assert_str_eq(plain, "to the second\n");
    free(plain);
    free(file);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_log_that_cannot_be_opened_names_its_path)
{
    char dir[64], path[128];
    testdir_make(dir, "rnnsearch-log-open");
    rs_error err = {{0}};
    snprintf(path, sizeof path, "%s/no/such/dir/train.log", dir);
    ck_assert_int_ne(rs_log_open(path, &err), 0);
    ck_assert_msg(strstr(err.msg, path), "%s", err.msg);
    /* A directory is not a file to append to. */
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(rs_log_open(dir, &err), 0);
    ck_assert_msg(strstr(err.msg, dir), "%s", err.msg);
    /* Standard error goes on. */
    stderr_capture c;
    capture_begin(&c, dir);
    rs_log("still shown\n");
    char *text = capture_end(&c);
    ck_assert_msg(strstr(text, "Z still shown\n"), "%s", text);
    free(text);
    testdir_remove(dir);
}
END_TEST

START_TEST(captured_text_is_logged_as_lines)
{
    char dir[64], path[128];
    testdir_make(dir, "rnnsearch-log-capture");
    snprintf(path, sizeof path, "%s/train.log", dir);
    rs_error err = {{0}};
    stderr_capture c;
    const time_t before = time(NULL);
    capture_begin(&c, dir);
    const int opened = rs_log_open(path, &err);
    /* Nothing printed: nothing logged. */
    rs_log_capture empty;
    FILE *f0 = rs_log_capture_begin(&empty);
    rs_log_capture_end(&empty);
    /* What a function prints to the stream, logged when the capture ends: its
     * first line continues the line begun before. */
    rs_log("to continue: ");
    rs_log_capture cap;
    FILE *f = rs_log_capture_begin(&cap);
    if (f)
        fprintf(f, "rnnsearch train --resume %s\n  (with a larger --epochs %d)\n", "m", 4);
    size_t size;
    char *before_end = (char *)testfile_read(c.path, &size);
    rs_log_capture_end(&cap);
    rs_log_close();
    char *text = capture_end(&c);
    const time_t after = time(NULL);
    ck_assert_msg(opened == 0, "%s", err.msg);
    ck_assert(f0 != NULL && f != NULL);
    ck_assert_msg(strstr(before_end, "to continue: ") && !strstr(before_end, "--resume"),
                  "before the capture ended: '%s'", before_end);
    free(before_end);
    ck_assert(cap.f == NULL && cap.text == NULL && empty.f == NULL);
    int lines;
    char *plain = without_stamps(text, before, after, &lines);
    ck_assert_str_eq(plain,
                     "to continue: rnnsearch train --resume m\n  (with a larger --epochs 4)\n");
    ck_assert_int_eq(lines, 2);
    free(plain);
    testfile_expect(path, text);
    free(text);
    testdir_remove(dir);
}
END_TEST

Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("timed log");
    tcase_add_test(tc, timestamp_is_iso_8601_utc_whatever_the_time_zone);
    tcase_add_test(tc, each_line_gets_one_stamp_however_it_is_written);
    tcase_add_test(tc, the_log_file_gets_what_standard_error_gets);
    tcase_add_test(tc, a_log_that_cannot_be_opened_names_its_path);
    tcase_add_test(tc, captured_text_is_logged_as_lines);
    suite_add_tcase(s, tc);
    return s;
}
