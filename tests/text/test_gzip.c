/* gzip input: every text reader recognises gzip by its magic bytes (not by
 * the name), decompresses it on the fly, and names file and line in errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "text/corpus.h"
#include "testdir.h"
#include "testprog.h"

static char dir[128];

/* Writes text gzip-compressed to dir/name; the path goes to path. */
static void write_gz(char *path, size_t size, const char *name, const char *text)
{
    snprintf(path, size, "%s/%s", dir, name);
    gzFile gz = gzopen(path, "wb");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
    ck_assert_int_eq(gzclose(gz), Z_OK);
}

/* Lines long enough that the compressed file spans several reads. */
static char *many_lines(int count)
{
    char *text = malloc((size_t)count * 32);
    ck_assert_ptr_nonnull(text);
    size_t used = 0;
    for (int i = 0; i < count; i++)
        used += (size_t)sprintf(text + used, "line %d\tligne %d\n", i, i * 7);
    return text;
}

START_TEST(gzip_is_read_whatever_its_name)
{
    char path[256];
    rs_error err = {{0}};
    testdir_make(dir, "rs_gzip");
    char *text = many_lines(20000);
    /* No .gz in the name: the magic bytes decide. */
    write_gz(path, sizeof path, "pairs.tsv", text);
    rs_pairs pairs;
    ck_assert_msg(!rs_pairs_read_tsv(path, 0, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 20000);
    ck_assert_str_eq(pairs.src[0], "line 0");
    ck_assert_str_eq(pairs.tgt[19999], "ligne 139993");
    rs_pairs_free(&pairs);

    rs_lines lines;
    ck_assert_msg(!rs_lines_read(path, &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 20000);
    ck_assert_str_eq(lines.lines[12345], "line 12345\tligne 86415");
    rs_lines_free(&lines);
    free(text);
    testdir_remove(dir);
}
END_TEST

START_TEST(concatenated_members_and_plain_0x1f)
{
    char a[256], b[256], both[300], cmd[1024];
    rs_error err = {{0}};
    testdir_make(dir, "rs_gzip");
    write_gz(a, sizeof a, "a.gz", "one\ntwo\n");
    write_gz(b, sizeof b, "b.gz", "three\n");
    snprintf(both, sizeof both, "%s/both.gz", dir);
    snprintf(cmd, sizeof cmd, "cat %s %s > %s", a, b, both);
    ck_assert_int_eq(system(cmd), 0);
    rs_lines lines;
    ck_assert_msg(!rs_lines_read(both, &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 3);
    ck_assert_str_eq(lines.lines[2], "three");
    rs_lines_free(&lines);

    /* Plain text that starts with byte 0x1f (not followed by 0x8b) stays text. */
    snprintf(a, sizeof a, "%s/plain.txt", dir);
    testfile_write(a, (const unsigned char *)"\x1fx\ny\n", 5);
    ck_assert_msg(!rs_lines_read(a, &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 2);
    ck_assert_str_eq(lines.lines[0], "\x1fx");
    rs_lines_free(&lines);
    testfile_write(a, (const unsigned char *)"\x1f", 1);
    ck_assert_msg(!rs_lines_read(a, &lines, &err), "%s", err.msg);
    ck_assert_int_eq(lines.count, 1);
    ck_assert_str_eq(lines.lines[0], "\x1f");
    rs_lines_free(&lines);
    testdir_remove(dir);
}
END_TEST

START_TEST(damaged_gzip_names_file_and_line)
{
    char path[256], want[300];
    rs_error err = {{0}};
    testdir_make(dir, "rs_gzip");
    char *text = many_lines(20000);
    write_gz(path, sizeof path, "cut.gz", text);
    free(text);
    size_t size;
    unsigned char *data = testfile_read(path, &size);

    /* Truncated: the lines before the cut are read, then the error. */
    testfile_write(path, data, size / 2);
    rs_lines lines;
    ck_assert_int_eq(rs_lines_read(path, &lines, &err), -1);
    ck_assert_int_eq(lines.count, 0);
    snprintf(want, sizeof want, "%s:", path);
    ck_assert_msg(strstr(err.msg, want) == err.msg && strstr(err.msg, ": truncated gzip data"),
                  "%s", err.msg);
    long line = strtol(err.msg + strlen(want), NULL, 10);
    ck_assert_msg(line > 1000 && line < 20000, "%s", err.msg);

    /* Corrupted in the middle. */
    for (size_t i = size / 2; i < size / 2 + 64; i++)
        data[i] ^= 0x55;
    testfile_write(path, data, size);
    ck_assert_int_eq(rs_lines_read(path, &lines, &err), -1);
    ck_assert_msg(strstr(err.msg, want) == err.msg && strstr(err.msg, "corrupt gzip data"), "%s",
                  err.msg);
    free(data);

    /* Decompressed text is checked as any text is. */
    write_gz(path, sizeof path, "bad.gz", "good\nbad \xff byte\n");
    ck_assert_int_eq(rs_lines_read(path, &lines, &err), -1);
    snprintf(want, sizeof want, "%s:2: ", path);
    ck_assert_msg(strstr(err.msg, want) == err.msg, "%s", err.msg);
    testdir_remove(dir);
}
END_TEST

/* The commands read gzip files and gzip on standard input. */
/* 64 MiB of NUL bytes in 64 KiB of gzip: refused at the first NUL, naming
 * file, line and byte, having held at most one bounded line in memory. */
START_TEST(nul_bytes_are_refused_as_they_arrive)
{
    char path[256];
    testdir_make(dir, "rs_gzip_nul");
    snprintf(path, sizeof path, "%s/zeros.gz", dir);
    gzFile gz = gzopen(path, "wb");
    ck_assert_ptr_nonnull(gz);
    static char zeros[1 << 16];
    ck_assert_int_eq(gzwrite(gz, "ok line\n", 8), 8);
    for (int i = 0; i < 1024; i++)
        ck_assert_int_eq(gzwrite(gz, zeros, sizeof zeros), (int)sizeof zeros);
    ck_assert_int_eq(gzclose(gz), Z_OK);
    rs_line_reader r;
    rs_error err = {{0}};
    char *line;
    size_t len;
    ck_assert_msg(!rs_line_reader_open(&r, path, &err), "%s", err.msg);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), 1);
    ck_assert_int_eq(rs_line_reader_next(&r, &line, &len, &err), -1);
    char want[300];
    snprintf(want, sizeof want, "%s:2: NUL byte at byte 1", path);
    ck_assert_str_eq(err.msg, want);
    ck_assert_uint_le(r.cap, 2 * RS_LINE_MAX_BYTES);
    rs_line_reader_close(&r);
    testdir_remove(dir);
}
END_TEST

START_TEST(commands_read_gzip)
{
    char hyp[256], ref[256], args[1024], out[4096];
    testdir_make(dir, "rs_gzip");
    write_gz(hyp, sizeof hyp, "hyp.gz", "the cat sat on the mat\na dog\n");
    write_gz(ref, sizeof ref, "ref.txt.gz", "the cat sat on the mat\na dog\n");
    snprintf(args, sizeof args, "bleu --metric bleu %s %s 2>/dev/null", hyp, ref);
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    ck_assert_msg(strncmp(out, "BLEU = 100.00", 13) == 0, "%s", out);

    snprintf(args, sizeof args, "tokenize < %s", hyp);
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    ck_assert_str_eq(out, "the cat sat on the mat\na dog\n");
    testdir_remove(dir);
}
END_TEST

Suite *gzip_suite(void)
{
    Suite *s = suite_create("gzip");
    TCase *tc = tcase_create("gzip");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, gzip_is_read_whatever_its_name);
    tcase_add_test(tc, concatenated_members_and_plain_0x1f);
    tcase_add_test(tc, damaged_gzip_names_file_and_line);
    tcase_add_test(tc, nul_bytes_are_refused_as_they_arrive);
    tcase_add_test(tc, commands_read_gzip);
    suite_add_tcase(s, tc);
    return s;
}
