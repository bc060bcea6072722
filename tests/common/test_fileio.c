/* File utilities: mkdir -p, atomic replacement, whole-file reads. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "testdir.h"

static char dir[64];

static void path_in(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

START_TEST(test_make_parent_dirs)
{
    char path[256];
    rs_error err = {{0}};
    testdir_make(dir, "rs_fileio");
    path_in(path, sizeof path, "a/b/c/file.txt");
    ck_assert_msg(!rs_make_parent_dirs(path, &err), "%s", err.msg);
    path_in(path, sizeof path, "a/b/c");
    struct stat st;
    ck_assert(!stat(path, &st) && S_ISDIR(st.st_mode));
    /* Existing directories are fine; a file in the way is not. */
    path_in(path, sizeof path, "a/b/c/file.txt");
    ck_assert_msg(!rs_make_parent_dirs(path, &err), "%s", err.msg);
    testfile_write(path, (const unsigned char *)"x", 1);
    path_in(path, sizeof path, "a/b/c/file.txt/inner");
    ck_assert_int_eq(rs_make_parent_dirs(path, &err), -1);
    ck_assert_msg(strstr(err.msg, "file.txt"), "%s", err.msg);
    /* No directory part: nothing to do. */
    ck_assert(!rs_make_parent_dirs("plain-name", &err));
    testdir_remove(dir);
}
END_TEST

/* Names in dir other than "." and "..". */
static int count_entries(const char *d)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", d);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    int n = -1;
    ck_assert_int_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

START_TEST(test_atomic_replace)
{
    char path[256], sub[256];
    rs_error err = {{0}};
    rs_atomic_file af;
    size_t size;
    testdir_make(dir, "rs_fileio");
    path_in(path, sizeof path, "sub/out.bin");
    path_in(sub, sizeof sub, "sub");
    /* A new file, in a directory made for it. */
    ck_assert_msg(!rs_atomic_open(&af, path, &err), "%s", err.msg);
    fputs("first", af.f);
    ck_assert_msg(!rs_atomic_commit(&af, &err), "%s", err.msg);
    unsigned char *data = testfile_read(path, &size);
    ck_assert_uint_eq(size, 5);
    ck_assert(!memcmp(data, "first", 5));
    ck_assert_uint_eq(data[5], 0); /* the NUL after the data */
    free(data);
    /* Aborted: the old contents stay and no temporary file is left. */
    ck_assert_msg(!rs_atomic_open(&af, path, &err), "%s", err.msg);
    fputs("second, longer", af.f);
    ck_assert_int_eq(count_entries(sub), 2);
    rs_atomic_abort(&af);
    ck_assert_int_eq(count_entries(sub), 1);
    testfile_expect(path, "first");
    /* A recorded write error fails the commit, names the file, keeps the old one. */
    ck_assert_msg(!rs_atomic_open(&af, path, &err), "%s", err.msg);
    fputs("third", af.f);
    af.errnum = 28; /* ENOSPC */
    ck_assert_int_eq(rs_atomic_commit(&af, &err), -1);
    ck_assert_msg(strstr(err.msg, "out.bin"), "%s", err.msg);
    ck_assert_int_eq(count_entries(sub), 1);
    testfile_expect(path, "first");
    /* Replaced. */
    ck_assert_msg(!rs_atomic_open(&af, path, &err), "%s", err.msg);
    fputs("fourth!", af.f);
    ck_assert_msg(!rs_atomic_commit(&af, &err), "%s", err.msg);
    testfile_expect(path, "fourth!");
    ck_assert_int_eq(count_entries(sub), 1);
    testdir_remove(dir);
}
END_TEST

/* Saving must never rename over a link, FIFO, device or directory. */
START_TEST(test_atomic_refuses_special_targets)
{
    char fifo[256], link[256], target[256], sub[256];
    rs_error err = {{0}};
    rs_atomic_file af;
    struct stat st;
    testdir_make(dir, "rs_fileio");
    path_in(fifo, sizeof fifo, "fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(rs_atomic_open(&af, fifo, &err), -1);
    ck_assert_msg(strstr(err.msg, fifo) && strstr(err.msg, "FIFO"), "%s", err.msg);
    ck_assert(!lstat(fifo, &st) && S_ISFIFO(st.st_mode));

    path_in(target, sizeof target, "target.txt");
    testfile_write(target, (const unsigned char *)"keep", 4);
    path_in(link, sizeof link, "link");
    ck_assert_int_eq(symlink("target.txt", link), 0);
    ck_assert_int_eq(rs_atomic_open(&af, link, &err), -1);
    ck_assert_msg(strstr(err.msg, link) && strstr(err.msg, "symbolic link"), "%s", err.msg);
    ck_assert(!lstat(link, &st) && S_ISLNK(st.st_mode));

    path_in(sub, sizeof sub, "subdir");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_int_eq(rs_atomic_open(&af, sub, &err), -1);
    ck_assert_msg(strstr(err.msg, "directory"), "%s", err.msg);
    ck_assert_int_eq(rs_atomic_open(&af, "/dev/null", &err), -1);
    ck_assert_msg(strstr(err.msg, "/dev/null is a character device"), "%s", err.msg);

    /* A link that appears while the file is written is not replaced either. */
    char late[256];
    path_in(late, sizeof late, "late");
    ck_assert_msg(!rs_atomic_open(&af, late, &err), "%s", err.msg);
    fputs("new", af.f);
    ck_assert_int_eq(symlink("target.txt", late), 0);
    ck_assert_int_eq(rs_atomic_commit(&af, &err), -1);
    ck_assert_msg(strstr(err.msg, "symbolic link"), "%s", err.msg);
    ck_assert(!lstat(late, &st) && S_ISLNK(st.st_mode));
    testfile_expect(target, "keep");
    /* Nothing but what the test made. */
    ck_assert_int_eq(count_entries(dir), 5);
    testdir_remove(dir);
}
END_TEST

/* The replaced file's mode is kept; a new one gets 0666 less the umask. */
START_TEST(test_atomic_keeps_the_mode)
{
    char path[256], fresh[256];
    rs_error err = {{0}};
    rs_atomic_file af;
    struct stat st;
    testdir_make(dir, "rs_fileio");
    path_in(path, sizeof path, "kept");
    testfile_write(path, (const unsigned char *)"old", 3);
    ck_assert_int_eq(chmod(path, 0604), 0);
    ck_assert_msg(!rs_atomic_open(&af, path, &err), "%s", err.msg);
    fputs("new", af.f);
    ck_assert_msg(!rs_atomic_commit(&af, &err), "%s", err.msg);
    ck_assert(!stat(path, &st));
    ck_assert_int_eq(st.st_mode & 07777, 0604);
    testfile_expect(path, "new");
    const mode_t mask = umask(027);
    path_in(fresh, sizeof fresh, "fresh");
    ck_assert_msg(!rs_atomic_open(&af, fresh, &err), "%s", err.msg);
    ck_assert_msg(!rs_atomic_commit(&af, &err), "%s", err.msg);
    umask(mask);
    ck_assert(!stat(fresh, &st));
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    testdir_remove(dir);
}
END_TEST

/* Without RS_ATOMIC_MAKE_DIRS a missing directory is an error, not made;
 * a name of the longest length allowed still gets its temporary file. */
START_TEST(test_atomic_directories_and_long_names)
{
    char path[512], sub[256], name[256];
    rs_error err = {{0}};
    rs_atomic_file af;
    testdir_make(dir, "rs_fileio");
    path_in(path, sizeof path, "missing/out.txt");
    ck_assert_int_eq(rs_atomic_open_with(&af, path, 0, &err), -1);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "directory does not exist"), "%s",
                  err.msg);
    path_in(sub, sizeof sub, "missing");
    ck_assert_int_eq(access(sub, F_OK), -1);
    memset(name, 'n', 255);
    name[255] = 0;
    path_in(path, sizeof path, name);
    ck_assert_msg(!rs_atomic_open_with(&af, path, 0, &err), "%s", err.msg);
    fputs("long", af.f);
    ck_assert_msg(!rs_atomic_commit(&af, &err), "%s", err.msg);
    testfile_expect(path, "long");
    ck_assert_int_eq(count_entries(dir), 1);
    testdir_remove(dir);
}
END_TEST

/* What a signal handler calls: every temporary file under way goes, the
 * target stays as it was, and the commit that follows fails without a trace. */
START_TEST(test_atomic_temporaries_removed)
{
    char a[256], b[256];
    rs_error err = {{0}};
    rs_atomic_file fa, fb;
    testdir_make(dir, "rs_fileio");
    path_in(a, sizeof a, "a.txt");
    path_in(b, sizeof b, "b.txt");
    testfile_write(a, (const unsigned char *)"old a", 5);
    ck_assert_msg(!rs_atomic_open(&fa, a, &err), "%s", err.msg);
    ck_assert_msg(!rs_atomic_open(&fb, b, &err), "%s", err.msg);
    fputs("new a", fa.f);
    fputs("new b", fb.f);
    ck_assert_int_eq(count_entries(dir), 3);
    rs_atomic_remove_temporaries();
    ck_assert_int_eq(count_entries(dir), 1);
    testfile_expect(a, "old a");
    ck_assert_int_eq(rs_atomic_commit(&fa, &err), -1);
    ck_assert_int_eq(rs_atomic_commit(&fb, &err), -1);
    testfile_expect(a, "old a");
    ck_assert_int_eq(count_entries(dir), 1);
    /* A committed file is no longer recorded: a later file of its temporary
     * name (another save's) is not removed. */
    ck_assert_msg(!rs_atomic_open(&fa, a, &err), "%s", err.msg);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s", fa.tmp);
    fputs("newer", fa.f);
    ck_assert_msg(!rs_atomic_commit(&fa, &err), "%s", err.msg);
    testfile_write(tmp, (const unsigned char *)"x", 1);
    rs_atomic_remove_temporaries();
    ck_assert_int_eq(access(tmp, F_OK), 0);
    testfile_expect(a, "newer");
    testdir_remove(dir);
}
END_TEST

/* RNNSEARCH_FAULT=enospc: the file's writes fail as on a full disk, and the
 * commit says so and keeps the old file. */
START_TEST(test_atomic_full_disk)
{
    char path[256];
    rs_error err = {{0}};
    rs_atomic_file af;
    testdir_make(dir, "rs_fileio");
    path_in(path, sizeof path, "out.txt");
    testfile_write(path, (const unsigned char *)"old", 3);
    setenv("RNNSEARCH_FAULT", "enospc", 1);
    ck_assert_msg(!rs_atomic_open(&af, path, &err), "%s", err.msg);
    unsetenv("RNNSEARCH_FAULT");
    for (int i = 0; i < 10000; i++)
        fputs("more than a buffer ", af.f);
    ck_assert_int_eq(rs_atomic_commit(&af, &err), -1);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "No space left on device"), "%s",
                  err.msg);
    testfile_expect(path, "old");
    ck_assert_int_eq(count_entries(dir), 1);
    testdir_remove(dir);
}
END_TEST

START_TEST(test_same_file)
{
    char a[256], b[256], sym[256], hard[256];
    rs_error err = {{0}};
    testdir_make(dir, "rs_fileio");
    path_in(a, sizeof a, "a.txt");
    path_in(b, sizeof b, "b.txt");
    path_in(sym, sizeof sym, "link.txt");
    path_in(hard, sizeof hard, "hard.txt");
    testfile_write(a, (const unsigned char *)"a", 1);
    testfile_write(b, (const unsigned char *)"a", 1);
    ck_assert_int_eq(symlink("a.txt", sym), 0);
    ck_assert_int_eq(link(a, hard), 0);
    ck_assert_int_eq(rs_same_file(a, a), 1);
    ck_assert_int_eq(rs_same_file(a, sym), 1);
    ck_assert_int_eq(rs_same_file(hard, a), 1);
    ck_assert_int_eq(rs_same_file(a, b), 0); /* same contents, other file */
    char missing[256];
    path_in(missing, sizeof missing, "missing");
    ck_assert_int_eq(rs_same_file(missing, missing), 0);
    ck_assert_int_eq(rs_same_file(a, NULL), 0);
    /* The message names both. */
    ck_assert_int_eq(rs_check_output_not_input(sym, a, &err), -1);
    ck_assert_msg(strstr(err.msg, sym) && strstr(err.msg, a) &&
                      strstr(err.msg, "is the same file as"),
                  "%s", err.msg);
    ck_assert_int_eq(rs_check_output_not_input(b, a, &err), 0);
    ck_assert_int_eq(rs_check_output_not_input(NULL, a, &err), 0);
    ck_assert_int_eq(rs_check_output_not_input("-", a, &err), 0);
    ck_assert_int_eq(rs_check_output_not_input(b, NULL, &err), 0);
    testdir_remove(dir);
}
END_TEST

START_TEST(test_is_directory)
{
    char file[256], dir_link[256], missing[256];
    testdir_make(dir, "rs_fileio");
    path_in(file, sizeof file, "a.txt");
    path_in(dir_link, sizeof dir_link, "dir-link");
    path_in(missing, sizeof missing, "missing");
    testfile_write(file, (const unsigned char *)"a", 1);
    ck_assert_int_eq(symlink(dir, dir_link), 0);
    ck_assert_int_eq(rs_is_directory(dir), 1);
    ck_assert_int_eq(rs_is_directory(dir_link), 1); /* links followed */
    ck_assert_int_eq(rs_is_directory(file), 0);
    ck_assert_int_eq(rs_is_directory(missing), 0);
    testdir_remove(dir);
}
END_TEST

START_TEST(test_read_file)
{
    char path[256];
    rs_error err = {{0}};
    unsigned char *data = (unsigned char *)"untouched";
    size_t size = 99;
    testdir_make(dir, "rs_fileio");
    path_in(path, sizeof path, "missing");
    ck_assert_int_eq(rs_read_file(path, &data, &size, &err), -1);
    ck_assert_ptr_null(data);
    ck_assert_msg(strstr(err.msg, path), "%s", err.msg);
    /* A directory is not a regular file. */
    ck_assert_int_eq(rs_read_file(dir, &data, &size, &err), -1);
    ck_assert_msg(strstr(err.msg, "not a regular file"), "%s", err.msg);
    path_in(path, sizeof path, "empty");
    testfile_write(path, (const unsigned char *)"", 0);
    ck_assert_msg(!rs_read_file(path, &data, &size, &err), "%s", err.msg);
    ck_assert_uint_eq(size, 0);
    ck_assert_uint_eq(data[0], 0);
    free(data);
    testdir_remove(dir);
}
END_TEST

Suite *fileio_suite(void)
{
    Suite *s = suite_create("fileio");
    TCase *tc = tcase_create("fileio");
    tcase_add_test(tc, test_make_parent_dirs);
    tcase_add_test(tc, test_atomic_replace);
    tcase_add_test(tc, test_atomic_refuses_special_targets);
    tcase_add_test(tc, test_atomic_keeps_the_mode);
    tcase_add_test(tc, test_atomic_directories_and_long_names);
    tcase_add_test(tc, test_atomic_temporaries_removed);
    tcase_add_test(tc, test_atomic_full_disk);
    tcase_add_test(tc, test_same_file);
    tcase_add_test(tc, test_is_directory);
    tcase_add_test(tc, test_read_file);
    suite_add_tcase(s, tc);
    return s;
}
