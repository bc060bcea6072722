#include <stdlib.h>
#include <string.h>

#include "text/corpus.h"
#include "text/settings_file.h"

/* The lines joined by '\n', as rs_settings_parse takes them: its line
 * numbers are then the reader's. */
static int read_text(const char *path, char **text, size_t *size, rs_error *err)
{
    rs_line_reader r;
    if (rs_line_reader_open(&r, path, err))
        return -1;
    char *buf = NULL;
    size_t used = 0, cap = 0;
    char *line;
    size_t len;
    int rc;
    while ((rc = rs_line_reader_next(&r, &line, &len, err)) == 1) {
        /* Bounded as the lines arrive, so that an endless pipe is refused;
         * each line end before this line counts one byte, a last one none. */
        if (used + len > RS_SETTINGS_MAX_BYTES) {
            rc = rs_fail(err, "%s:%ld: more than %d bytes: a configuration file is at most that",
                         r.name, r.line, RS_SETTINGS_MAX_BYTES);
            break;
        }
        if (used + len + 1 > cap) {
            size_t grown_cap = cap ? cap : 4096;
            while (grown_cap < used + len + 1)
                grown_cap *= 2;
            char *grown = realloc(buf, grown_cap);
            if (!grown) {
                rc = rs_fail(err, "%s: out of memory", r.name);
                break;
            }
            buf = grown, cap = grown_cap;
        }
        memcpy(buf + used, line, len);
        used += len;
        buf[used++] = '\n';
    }
    rs_line_reader_close(&r);
    if (rc < 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    *size = used;
    return 0;
}

int rs_settings_read(const char *path, rs_settings *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    char *text;
    size_t size;
    if (read_text(path, &text, &size, err))
        return -1;
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    int status = rs_settings_parse(name, (const unsigned char *)(text ? text : ""), size, out, err);
    if (status) {
        free(text);
        return status;
    }
    out->text = text; /* kept: a run's copy of its --config file is this text */
    out->text_size = size;
    return 0;
}
