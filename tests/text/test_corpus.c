/* Reading TSV pair files, line-aligned parallel files and plain lines, and
 * the file:line of every error. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text/corpus.h"

/* Writes len bytes to a new file under /tmp; its path in path[32]. */
static void write_temp(char *path, const char *data, size_t len)
{
    strcpy(path, "/tmp/rs_corpus_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    ck_assert_int_eq(close(fd), 0);
}

static void write_temp_str(char *path, const char *data)
{
    write_temp(path, data, strlen(data));
}

/* Expects reading the TSV text to fail with "<path>:<want>". */
static void check_tsv_error_len(const char *data, size_t len, const char *want)
{
    char path[32], expected[256];
    write_temp(path, data, len);
    rs_error err = {{0}};
    rs_pairs pairs;
    ck_assert_int_eq(rs_pairs_read_tsv(path, 0, &pairs, &err), -1);
    ck_assert_int_eq(pairs.count, 0);
    ck_assert_ptr_null(pairs.src);
    snprintf(expected, sizeof expected, "%s:%s", path, want);
    ck_assert_str_eq(err.msg, expected);
    unlink(path);
}

static void check_tsv_error(const char *data, const char *want)
{
    check_tsv_error_len(data, strlen(data), want);
}

START_TEST(test_tsv)
{
    char path[32];
    write_temp_str(path,
                   "Hallo.\tHello.\n"
                   "Wie geht's?\tHow are you?\tCC-BY 2.0 (France) Attribution: tatoeba.org\r\n"
                   "Danke!\tThanks!");
    rs_error err = {{0}};
    rs_pairs pairs;
    ck_assert_msg(!rs_pairs_read_tsv(path, 0, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 3);
    ck_assert_str_eq(pairs.src[0], "Hallo.");
    ck_assert_str_eq(pairs.tgt[0], "Hello.");
    ck_assert_str_eq(pairs.src[1], "Wie geht's?");
    ck_assert_str_eq(pairs.tgt[1], "How are you?");
    ck_assert_str_eq(pairs.src[2], "Danke!");
    ck_assert_str_eq(pairs.tgt[2], "Thanks!");
    rs_pairs_free(&pairs);
    ck_assert_int_eq(pairs.count, 0);

    ck_assert_msg(!rs_pairs_read_tsv(path, 1, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 3);
    ck_assert_str_eq(pairs.src[1], "How are you?");
    ck_assert_str_eq(pairs.tgt[1], "Wie geht's?");
    rs_pairs_free(&pairs);
    unlink(path);
}
END_TEST

START_TEST(test_tsv_bom_and_unicode)
{
    char path[32];
    write_temp_str(path, "\xEF\xBB\xBFПривет\t你好\nшкола\t学校\n");
    rs_error err = {{0}};
    rs_pairs pairs;
    ck_assert_msg(!rs_pairs_read_tsv(path, 0, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 2);
    ck_assert_str_eq(pairs.src[0], "Привет");
    ck_assert_str_eq(pairs.tgt[1], "学校");
    rs_pairs_free(&pairs);
    unlink(path);
}
END_TEST

START_TEST(test_tsv_long_lines)
{
    /* Lines far longer than any fixed buffer, and more of them than the
     * first allocation holds. */
    size_t word = 200000, lines = 3000, size = word + 3 + lines * 4 + 1;
    char *data = malloc(size);
    ck_assert_ptr_nonnull(data);
    memset(data, 'x', word);
    memcpy(data + word, "\ty\n", 3);
    size_t n = word + 3;
    for (size_t i = 0; i < lines; i++, n += 4)
        memcpy(data + n, "a\tb\n", 4);
    char path[32];
    write_temp(path, data, n);
    free(data);
    rs_error err = {{0}};
    rs_pairs pairs;
    ck_assert_msg(!rs_pairs_read_tsv(path, 0, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, (int)lines + 1);
    ck_assert_uint_eq(strlen(pairs.src[0]), word);
    ck_assert_str_eq(pairs.tgt[0], "y");
    ck_assert_str_eq(pairs.src[(int)lines], "a");
    rs_pairs_free(&pairs);
    unlink(path);
}
END_TEST

/* A line over RS_LINE_MAX_BYTES is an error naming file and line, found
 * before more than about that much is held; one at the limit is read. */
START_TEST(test_line_length_is_bounded)
{
    size_t size = 3 * (size_t)RS_LINE_MAX_BYTES;
    char *data = malloc(size);
    ck_assert_ptr_nonnull(data);
    memset(data, 'x', size);
    data[RS_LINE_MAX_BYTES] = '\n';
    char path[32];
    write_temp(path, data, size);
    free(data);
    rs_line_reader r;
    rs_error err = {{0}};
    char *line;
    size_t len;
    ck_assert_msg(!rs_line_reader_open(&r, path, &err), "%s", err.msg);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 1);
    ck_assert_uint_eq(len, RS_LINE_MAX_BYTES);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), -1);
    char want[128];
    snprintf(want, sizeof want, "%s:2: line longer than %d bytes (the most a line may hold)", path,
             RS_LINE_MAX_BYTES);
    ck_assert_str_eq(err.msg, want);
    ck_assert_uint_le(r.cap, 2 * (size_t)RS_LINE_MAX_BYTES + 2);
    rs_line_reader_close(&r);
    unlink(path);
}
END_TEST

START_TEST(test_tsv_errors)
{
    check_tsv_error("a\tb\nc\td\nno tab here\n", "3: no tab between source and target");
    check_tsv_error("a\tb\n\nc\td\n", "2: empty line");
    check_tsv_error("a\tb\n\r\n", "2: empty line");
    check_tsv_error("a\tb\nc\td\n\n", "3: empty line");
    check_tsv_error("a\tb\n\tb\n", "2: empty sentence in column 1");
    check_tsv_error("a\tb\na\t\tnote\n", "2: empty sentence in column 2");
    check_tsv_error("a\tb\nc\td\ne\tf\xC3(\n", "3: invalid UTF-8 at byte 4");
    check_tsv_error("ok\tok\nabcd\xFF\tx\n", "2: invalid UTF-8 at byte 5");
    check_tsv_error_len("a\0b\tc\n", 6, "1: NUL byte at byte 2");
    /* White space only is as empty as nothing (no-break space and ideographic space too). */
    check_tsv_error("a\tb\n   \tb\n", "2: the sentence in column 1 is only white space");
    check_tsv_error("a\tb\nc\t \xC2\xA0\xE3\x80\x80 \tnote\n",
                    "2: the sentence in column 2 is only white space");
}
END_TEST

/* Old Mac files end lines at a lone "\r": 100 pairs, not one line of 100. */
START_TEST(test_cr_line_ends)
{
    char path[32], data[4096] = "";
    for (int i = 0; i < 100; i++)
        sprintf(data + strlen(data), "src %d\ttgt %d\r", i, i);
    write_temp_str(path, data);
    rs_error err = {{0}};
    rs_pairs pairs;
    ck_assert_msg(!rs_pairs_read_tsv(path, 0, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 100);
    ck_assert_str_eq(pairs.tgt[0], "tgt 0");
    ck_assert_str_eq(pairs.src[99], "src 99");
    rs_pairs_free(&pairs);
    unlink(path);

    /* Mixed: "\r\n" is one line end, "\r\r" two (an empty line between). */
    write_temp_str(path, "a\r\nb\rc\nd\r\re\r");
    rs_lines lines;
    ck_assert_msg(!rs_lines_read(path, &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 6);
    static const char *const want[] = {"a", "b", "c", "d", "", "e"};
    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(lines.lines[i], want[i]);
    rs_lines_free(&lines);
    unlink(path);
}
END_TEST

START_TEST(test_missing_file)
{
    rs_error err = {{0}};
    rs_pairs pairs;
    rs_lines lines;
    ck_assert_int_eq(rs_pairs_read_tsv("/nonexistent/x.tsv", 0, &pairs, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/x.tsv: "));
    ck_assert_int_eq(rs_lines_read("/nonexistent/y.txt", &lines, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/y.txt: "));
    ck_assert_int_eq(rs_pairs_read_parallel("/nonexistent/a.de", "/nonexistent/a.en", &pairs, &err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/a.de: "));
    ck_assert_int_eq(rs_pairs_read_parallel("-", "-", &pairs, &err), -1);
}
END_TEST

START_TEST(test_parallel)
{
    char de[32], en[32];
    write_temp_str(de, "Guten Morgen.\r\nDanke.\nTschüss!");
    write_temp_str(en, "Good morning.\nThank you.\nBye!\n");
    rs_error err = {{0}};
    rs_pairs pairs;
    ck_assert_msg(!rs_pairs_read_parallel(de, en, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 3);
    ck_assert_str_eq(pairs.src[0], "Guten Morgen.");
    ck_assert_str_eq(pairs.tgt[0], "Good morning.");
    ck_assert_str_eq(pairs.src[2], "Tschüss!");
    ck_assert_str_eq(pairs.tgt[2], "Bye!");
    rs_pairs_free(&pairs);
    unlink(de);
    unlink(en);
}
END_TEST

/* A pair reader with empty_target takes an empty target (a translation may
 * be empty, and score reads so) from TSV, swapped too, and parallel files;
 * an empty source is still refused. */
static int read_scored_tsv(const char *path, int swap, rs_pairs *pairs, rs_error *err)
{
    rs_pair_reader r;
    memset(pairs, 0, sizeof *pairs);
    if (rs_pair_reader_open_tsv(&r, path, swap, 1, err))
        return -1;
    const int n = rs_pair_reader_read(&r, 1000, NULL, pairs, err);
    rs_pair_reader_close(&r);
    return n < 0 ? -1 : 0;
}

static int read_scored_parallel(const char *src, const char *tgt, rs_pairs *pairs, rs_error *err)
{
    rs_pair_reader r;
    memset(pairs, 0, sizeof *pairs);
    if (rs_pair_reader_open_parallel(&r, src, tgt, 1, err))
        return -1;
    const int n = rs_pair_reader_read(&r, 1000, NULL, pairs, err);
    rs_pair_reader_close(&r);
    return n < 0 ? -1 : 0;
}

START_TEST(test_scored_pairs_take_an_empty_target)
{
    char tsv[32], de[32], en[32], expected[256];
    rs_error err = {{0}};
    rs_pairs pairs;
    write_temp_str(tsv, "a b\t\nc\t \nd\te\n");
    ck_assert_msg(!read_scored_tsv(tsv, 0, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 3);
    ck_assert_str_eq(pairs.src[0], "a b");
    ck_assert_str_eq(pairs.tgt[0], "");
    ck_assert_str_eq(pairs.tgt[1], " ");
    ck_assert_str_eq(pairs.tgt[2], "e");
    rs_pairs_free(&pairs);
    ck_assert_int_eq(rs_pairs_read_tsv(tsv, 0, &pairs, &err), -1); /* training's reader */
    ck_assert_int_eq(read_scored_tsv(tsv, 1, &pairs, &err), -1);
    snprintf(expected, sizeof expected, "%s:1: empty sentence in column 2", tsv);
    ck_assert_str_eq(err.msg, expected);
    unlink(tsv);
    write_temp_str(tsv, "\tx\n");
    ck_assert_msg(!read_scored_tsv(tsv, 1, &pairs, &err), "%s", err.msg);
    ck_assert(pairs.count == 1 && !strcmp(pairs.src[0], "x") && !strcmp(pairs.tgt[0], ""));
    rs_pairs_free(&pairs);
    ck_assert_int_eq(read_scored_tsv(tsv, 0, &pairs, &err), -1);
    unlink(tsv);

    write_temp_str(de, "a\nb\n");
    write_temp_str(en, "x\n\n");
    ck_assert_msg(!read_scored_parallel(de, en, &pairs, &err), "%s", err.msg);
    ck_assert(pairs.count == 2 && !strcmp(pairs.tgt[1], ""));
    rs_pairs_free(&pairs);
    ck_assert_int_eq(read_scored_parallel(en, de, &pairs, &err), -1);
    snprintf(expected, sizeof expected, "%s:2: empty line", en);
    ck_assert_str_eq(err.msg, expected);
    unlink(de);
    unlink(en);
}
END_TEST

/* A pair reader reads a batch at a time: batches of two give the pairs of
 * the whole-file reader, each batch's `first` counting the pairs before it;
 * parallel files that end apart are named with both lengths at the end. */
START_TEST(test_pair_reader_batches)
{
    char tsv[32], de[32], en[32], expected[256];
    rs_error err = {{0}};
    write_temp_str(tsv, "a\tA\nb\tB\nc\tC\nd\tD\ne\tE\n");
    rs_pair_reader r;
    ck_assert(!rs_pair_reader_open_tsv(&r, tsv, 1, 0, &err));
    const char *want[] = {"A", "B", "C", "D", "E"};
    int seen = 0, n;
    rs_pairs pairs = {0};
    while ((n = rs_pair_reader_read(&r, 2, NULL, &pairs, &err)) > 0) {
        ck_assert_int_eq(pairs.first, seen);
        ck_assert_int_eq(n, seen < 4 ? 2 : 1);
        for (int i = 0; i < n; i++)
            ck_assert_str_eq(pairs.src[i], want[seen + i]); /* swapped */
        seen += n;
        rs_pairs_free(&pairs);
    }
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(seen, 5);
    rs_pair_reader_close(&r);
    unlink(tsv);

    write_temp_str(de, "a\nb\nc\nd\ne\n");
    write_temp_str(en, "x\ny\n");
    ck_assert(!rs_pair_reader_open_parallel(&r, de, en, 0, &err));
    ck_assert_int_eq(rs_pair_reader_read(&r, 2, NULL, &pairs, &err), 2);
    rs_pairs_free(&pairs);
    ck_assert_int_eq(rs_pair_reader_read(&r, 2, NULL, &pairs, &err), -1);
    snprintf(expected, sizeof expected, "%s has 5 lines but %s has 2", de, en);
    ck_assert_str_eq(err.msg, expected);
    ck_assert_int_eq(pairs.count, 0);
    rs_pair_reader_close(&r);
    unlink(de);
    unlink(en);
}
END_TEST

START_TEST(test_parallel_errors)
{
    char de[32], en[32], expected[256];
    rs_error err = {{0}};
    rs_pairs pairs;

    write_temp_str(de, "a\nb\nc\n");
    write_temp_str(en, "x\ny\n");
    ck_assert_int_eq(rs_pairs_read_parallel(de, en, &pairs, &err), -1);
    snprintf(expected, sizeof expected, "%s has 3 lines but %s has 2", de, en);
    ck_assert_str_eq(err.msg, expected);
    ck_assert_int_eq(pairs.count, 0);
    unlink(de);
    unlink(en);

    write_temp_str(de, "a\nb\nc\n");
    write_temp_str(en, "x\n\nz\n");
    ck_assert_int_eq(rs_pairs_read_parallel(de, en, &pairs, &err), -1);
    snprintf(expected, sizeof expected, "%s:2: empty line", en);
    ck_assert_str_eq(err.msg, expected);
    unlink(en);

    write_temp_str(en, "x\n \t \nz\n");
    ck_assert_int_eq(rs_pairs_read_parallel(de, en, &pairs, &err), -1);
    snprintf(expected, sizeof expected, "%s:2: the line is only white space", en);
    ck_assert_str_eq(err.msg, expected);
    unlink(en);

    write_temp_str(en, "x\ny\n\xE2\x82\n");
    ck_assert_int_eq(rs_pairs_read_parallel(de, en, &pairs, &err), -1);
    snprintf(expected, sizeof expected, "%s:3: invalid UTF-8 at byte 1", en);
    ck_assert_str_eq(err.msg, expected);
    unlink(de);
    unlink(en);
}
END_TEST

START_TEST(test_lines)
{
    char path[32];
    write_temp_str(path, "first\r\n\nthird line\n");
    rs_error err = {{0}};
    rs_lines lines;
    ck_assert_msg(!rs_lines_read(path, &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 3);
    ck_assert_str_eq(lines.lines[0], "first");
    ck_assert_str_eq(lines.lines[1], "");
    ck_assert_str_eq(lines.lines[2], "third line");
    rs_lines_free(&lines);
    ck_assert_int_eq(lines.count, 0);
    unlink(path);

    write_temp_str(path, "");
    ck_assert_msg(!rs_lines_read(path, &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 0);
    rs_lines_free(&lines);
    unlink(path);

    write_temp_str(path, "ok\n\xC3\xA9\xC3\n");
    ck_assert_int_eq(rs_lines_read(path, &lines, &err), -1);
    char expected[256];
    snprintf(expected, sizeof expected, "%s:2: invalid UTF-8 at byte 3", path);
    ck_assert_str_eq(err.msg, expected);
    unlink(path);
}
END_TEST

/* "-" reads standard input and names it "<stdin>". */
START_TEST(test_stdin)
{
    char path[32];
    write_temp_str(path, "eins\tone\nzwei\n");
    ck_assert_ptr_nonnull(freopen(path, "r", stdin));
    rs_error err = {{0}};
    rs_pairs pairs;
    ck_assert_int_eq(rs_pairs_read_tsv("-", 0, &pairs, &err), -1);
    ck_assert_str_eq(err.msg, "<stdin>:2: no tab between source and target");

    ck_assert_ptr_nonnull(freopen(path, "r", stdin));
    rs_lines lines;
    ck_assert_msg(!rs_lines_read("-", &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 2);
    ck_assert_str_eq(lines.lines[0], "eins\tone");
    rs_lines_free(&lines);
    unlink(path);
}
END_TEST

START_TEST(test_line_reader)
{
    char path[32];
    write_temp_str(path, "\xEF\xBB\xBF"
                         "a\r\n\nc");
    rs_error err = {{0}};
    rs_line_reader r;
    ck_assert_int_eq(rs_line_reader_open(&r, path, &err), 0);
    char *line;
    size_t len;
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 1);
    ck_assert_str_eq(line, "a");
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 1);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 1);
    ck_assert_str_eq(line, "c");
    ck_assert_int_eq(r.line, 3);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 0);
    rs_line_reader_close(&r);
    unlink(path);
}
END_TEST

/* A line from a pipe is returned as soon as it ends (also at a lone "\r"),
 * without waiting for more input: the writer stays open while we read. */
START_TEST(test_pipe_line_arrives_at_once)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], "first\nsecond\r", 13), 13);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    rs_line_reader r;
    rs_error err = {{0}};
    ck_assert_msg(!rs_line_reader_open(&r, path, &err), "%s", err.msg);
    char *line;
    size_t len;
    ck_assert_int_eq(rs_line_reader_ready(&r), 1); /* the pipe has data */
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 1);
    ck_assert_str_eq(line, "first");
    ck_assert_int_eq(rs_line_reader_ready(&r), 1); /* "second" is buffered */
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 1);
    ck_assert_str_eq(line, "second");
    ck_assert_int_eq(rs_line_reader_ready(&r), 0); /* nothing there: reading would wait */
    /* The "\n" of a "\r\n" split across writes still ends one line only. */
    ck_assert_int_eq(write(fds[1], "\nthird\n", 7), 7);
    ck_assert_int_eq(rs_line_reader_ready(&r), 1);
    ck_assert_msg(rs_line_reader_next(&r, &line, &len, &err) == 1, "%s", err.msg);
    ck_assert_str_eq(line, "third");
    ck_assert_int_eq(close(fds[1]), 0);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 0);
    rs_line_reader_close(&r);
    close(fds[0]);
}
END_TEST

Suite *corpus_suite(void)
{
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("corpus");
    tcase_add_test(tc, test_tsv);
    tcase_add_test(tc, test_tsv_bom_and_unicode);
    tcase_add_test(tc, test_tsv_long_lines);
    tcase_add_test(tc, test_line_length_is_bounded);
    tcase_add_test(tc, test_tsv_errors);
    tcase_add_test(tc, test_cr_line_ends);
    tcase_add_test(tc, test_pipe_line_arrives_at_once);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_parallel);
    tcase_add_test(tc, test_parallel_errors);
    tcase_add_test(tc, test_scored_pairs_take_an_empty_target);
    tcase_add_test(tc, test_pair_reader_batches);
    tcase_add_test(tc, test_lines);
    tcase_add_test(tc, test_stdin);
    tcase_add_test(tc, test_line_reader);
    suite_add_tcase(s, tc);
    return s;
}
