#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testskip.h"

/* Tests run in forked children: a file, named in the environment, gathers
 * what they skip (one line each, appended whole). */
#define SKIP_LOG_ENV "RNNSEARCH_SKIP_LOG"

static char log_path[64];

void test_skip(const char *why)
{
    fprintf(stderr, "SKIP %s\n", why);
    const char *path = getenv(SKIP_LOG_ENV);
    int fd = path ? open(path, O_WRONLY | O_APPEND) : -1;
    if (fd < 0)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "%s\n", why);
    if (n > 0 && write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
        fprintf(stderr, "cannot record the skip in %s\n", path);
    close(fd);
}

void test_skip_begin(void)
{
    snprintf(log_path, sizeof log_path, "/tmp/rnnsearch-skips-XXXXXX");
    int fd = mkstemp(log_path);
    if (fd < 0) {
        log_path[0] = '\0';
        return;
    }
    close(fd);
    setenv(SKIP_LOG_ENV, log_path, 1);
}

int test_skip_report(void)
{
    if (!log_path[0])
        return 0;
    FILE *f = fopen(log_path, "r");
    int count = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (count++ == 0)
            printf("skipped:\n");
        printf("  %s", line);
    }
    if (f)
        fclose(f);
    unlink(log_path);
    printf("%d skipped\n", count);
    return count;
}
