#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "testdir.h"

void testdir_make(char *dir, const char *prefix)
{
    snprintf(dir, 64, "/tmp/%s_XXXXXX", prefix);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

void testdir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (!lstat(path, &st) && S_ISDIR(st.st_mode))
            testdir_remove(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

unsigned char *testfile_read(const char *path, size_t *size)
{
    unsigned char *data;
    rs_error err = {{0}};
    ck_assert_msg(!rs_read_file(path, &data, size, &err), "%s", err.msg);
    return data;
}

void testfile_expect(const char *path, const char *text)
{
    size_t size;
    unsigned char *data = testfile_read(path, &size);
    ck_assert_msg(size == strlen(text) && !memcmp(data, text, size), "%s does not hold '%s'", path,
                  text);
    free(data);
}

void testfile_write(const char *path, const unsigned char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, size, f), size);
    ck_assert_int_eq(fclose(f), 0);
}

void testfile_put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    testfile_write(path, (const unsigned char *)text, strlen(text));
}

int testfile_exists(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}
