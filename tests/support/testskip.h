/* A test that cannot run here (a dependency or a data set is missing) says
 * so through test_skip, which the runner counts: its summary line prints how
 * many were skipped and why, and with RNNSEARCH_NO_SKIPS=1 (as CI sets it,
 * having installed everything) a skip fails the run instead of passing
 * silently. */
#ifndef RS_TEST_TESTSKIP_H
#define RS_TEST_TESTSKIP_H

/* Records "why" (one line) as a skip of the calling test; the test then returns. */
void test_skip(const char *why);

/* For the runner: the skips recorded since test_skip_begin, printed; their count. */
void test_skip_begin(void);
int test_skip_report(void);

#endif
