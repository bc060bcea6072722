/* Scratch directories and whole-file reads and writes for tests. */
#ifndef RS_TEST_TESTDIR_H
#define RS_TEST_TESTDIR_H

/* Creates a fresh directory /tmp/PREFIX_XXXXXX; its name goes to dir (≥ 64 bytes). */
void testdir_make(char *dir, const char *prefix);

/* Removes the tree under dir (files and directories only). */
void testdir_remove(const char *dir);

#include <stddef.h>

/* The whole file, followed by a NUL not counted in *size (failing the test
 * if it cannot be read); free() it. */
unsigned char *testfile_read(const char *path, size_t *size);

/* Fails the test unless the file holds exactly `text`. */
void testfile_expect(const char *path, const char *text);

/* Writes size bytes to path, failing the test on any error. */
void testfile_write(const char *path, const unsigned char *data, size_t size);

/* dir/name: written to hold text; whether it exists. */
void testfile_put(const char *dir, const char *name, const char *text);
int testfile_exists(const char *dir, const char *name);

#endif
