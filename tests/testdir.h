/* Scratch directories for tests that write files. */
#ifndef RS_TEST_TESTDIR_H
#define RS_TEST_TESTDIR_H

/* Creates a fresh directory /tmp/PREFIX_XXXXXX; its name goes to dir (≥ 64 bytes). */
void testdir_make(char *dir, const char *prefix);

/* Removes the tree under dir (files and directories only). */
void testdir_remove(const char *dir);

#endif
