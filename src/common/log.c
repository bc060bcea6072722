#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

static FILE *log_file;
static int mid_line; /* the last write did not end its line */

int rs_log_open(const char *path, rs_error *err)
{
    rs_log_close();
    /* A regular file, not through a link: a FIFO would block here for ever,
     * and a link could point anywhere. */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        const int e = fd < 0 ? errno : 0;
        if (fd >= 0)
            close(fd);
        return rs_fail(err, "%s: cannot open the log for appending: %s", path,
                       e == ELOOP ? "a symbolic link"
                       : e        ? strerror(e)
                                  : "not a regular file");
    }
    if (!(log_file = fdopen(fd, "a"))) {
        close(fd);
        return rs_fail(err, "%s: cannot open the log for appending: %s", path, strerror(errno));
    }
    return 0;
}

void rs_log_close(void)
{
    if (log_file)
        fclose(log_file);
    log_file = NULL;
}

FILE *rs_log_capture_begin(rs_log_capture *c)
{
    c->text = NULL;
    c->size = 0;
    return c->f = open_memstream(&c->text, &c->size);
}

void rs_log_capture_end(rs_log_capture *c)
{
    if (c->f && !fclose(c->f) && c->text)
        rs_log("%s", c->text);
    free(c->text);
    c->f = NULL;
    c->text = NULL;
}

void rs_log_timestamp(char buf[21])
{
    time_t now = time(NULL);
    struct tm utc;
    if (!gmtime_r(&now, &utc) || !strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &utc))
        memcpy(buf, "0000-00-00T00:00:00Z", 21);
}

static void write_both(const char *s, size_t n)
{
    fwrite(s, 1, n, stderr);
    if (log_file)
        fwrite(s, 1, n, log_file);
}

void rs_log(const char *fmt, ...)
{
    char small[512], *text = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof small) {
        if (!(text = malloc((size_t)n + 1)))
            return;
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    char stamp[21];
    rs_log_timestamp(stamp);
    for (const char *p = text; *p;) {
        if (!mid_line) {
            write_both(stamp, strlen(stamp));
            write_both(" ", 1);
        }
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
        write_both(p, len);
        mid_line = !eol;
        p += len;
    }
    if (log_file)
        fflush(log_file);
    if (text != small)
        free(text);
}
