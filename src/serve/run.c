/* A training run's log and watched alignments as JSON (run.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "serve/run.h"
#include "serve/serve_page.h"
#include "train/watch.h"

/* The answer so far in memory (its input was read within cap bytes, so it
 * stays near that size); longer than cap: refused as a whole. */
static FILE *open_answer(char **text, size_t *size)
{
    *text = NULL;
    return open_memstream(text, size);
}

static char *close_answer(FILE *f, char **answer, const size_t *size, size_t cap, size_t *len,
                          rs_error *err)
{
    int bad = fclose(f) != 0;
    char *text = *answer; /* set by fclose */
    if (bad || !text || *size > cap) {
        free(text);
        if (bad || !text)
            rs_fail(err, "out of memory");
        else
            rs_fail(err, "the answer would be larger than %zu bytes (the server's --max-answer)",
                    cap);
        return NULL;
    }
    *len = *size;
    return text;
}

/* One TSV cell: a number, null when empty, else a string. */
static void write_cell(FILE *out, const char *cell, size_t n)
{
    char buf[64], *end;
    if (n == 0) {
        fputs("null", out);
        return;
    }
    if (n < sizeof buf) {
        memcpy(buf, cell, n);
        buf[n] = '\0';
        double v = strtod(buf, &end);
        if (end == buf + n && isfinite(v)) {
            fprintf(out, "%.10g", v);
            return;
        }
    }
    char *s = strndup(cell, n);
    rs_json_write_string(out, s ? s : "");
    free(s);
}

/* The size of the whole lines of path now (0 when missing). */
static uint64_t whole_size(const char *path, uint64_t *size)
{
    struct stat st;
    *size = stat(path, &st) ? 0 : (uint64_t)st.st_size;
    return *size;
}

char *rs_run_log_json(const char *dir, size_t cap, size_t *len, rs_error *err)
{
    char path[4200], *log;
    size_t log_len;
    uint64_t next, watch_size;
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    if (rs_watch_read(path, 0, cap, &log, &log_len, &next, err))
        return NULL;
    char *text;
    size_t size;
    FILE *f = open_answer(&text, &size);
    if (!f) {
        free(log);
        rs_fail(err, "out of memory");
        return NULL;
    }
    fputs("{\"dir\":", f);
    rs_json_write_string(f, dir);
    fputs(",\"columns\":[", f);
    int line = 0;
    for (char *p = log, *eol; (eol = strchr(p, '\n')); p = eol + 1, line++) {
        if (line == 1)
            fputs("],\"rows\":[", f);
        fputs(line > 1 ? ",[" : line == 1 ? "[" : "", f);
        for (char *cell = p; cell <= eol;) {
            size_t n = strcspn(cell, "\t\n");
            if (line == 0) {
                char *name = strndup(cell, n);
                rs_json_write_string(f, name ? name : "");
                free(name);
            } else {
                write_cell(f, cell, n);
            }
            cell += n + 1;
            if (cell <= eol)
                putc(',', f);
        }
        if (line > 0)
            putc(']', f);
    }
    fputs(line <= 1 ? "],\"rows\":[" : "", f);
    snprintf(path, sizeof path, "%s/" RS_WATCH_FILE, dir);
    fprintf(f, "],\"watch_bytes\":%llu}\n", (unsigned long long)whole_size(path, &watch_size));
    free(log);
    return close_answer(f, &text, &size, cap, len, err);
}

char *rs_run_watch_json(const char *dir, uint64_t from, size_t cap, size_t *len, rs_error *err)
{
    char path[4200], *data;
    size_t data_len;
    uint64_t next, size;
    snprintf(path, sizeof path, "%s/" RS_WATCH_FILE, dir);
    whole_size(path, &size);
    /* Records take what the answer's frame leaves. */
    if (rs_watch_read(path, from, cap > 256 ? cap - 256 : 1, &data, &data_len, &next, err))
        return NULL;
    char *text;
    size_t text_size;
    FILE *f = open_answer(&text, &text_size);
    if (!f) {
        free(data);
        rs_fail(err, "out of memory");
        return NULL;
    }
    fprintf(f, "{\"from\":%llu,\"next\":%llu,\"size\":%llu,\"records\":[", (unsigned long long)from,
            (unsigned long long)next, (unsigned long long)size);
    int n = 0;
    for (char *p = data, *eol; (eol = strchr(p, '\n')); p = eol + 1) {
        rs_error bad;
        rs_json *obj = rs_json_parse(p, (size_t)(eol - p), &bad);
        if (obj && obj->type == RS_JSON_OBJECT) {
            fputs(n++ ? "," : "", f);
            fwrite(p, 1, (size_t)(eol - p), f);
        }
        rs_json_free(obj);
    }
    fputs("]}\n", f);
    free(data);
    return close_answer(f, &text, &text_size, cap, len, err);
}

/* JSON inside <script>: every '<' (only ever inside strings) as \u003c, so
 * no token can close the script element. */
static void write_script_json(FILE *out, const char *json, size_t len)
{
    while (len > 0 && json[len - 1] == '\n')
        len--;
    for (size_t k = 0; k < len; k++) {
        if (json[k] == '<')
            fputs("\\u003c", out);
        else
            putc(json[k], out);
    }
}

int rs_run_write_replay(FILE *out, const char *dir, rs_error *err)
{
    static const char slot[] = "<script id=\"replay-data\" type=\"application/json\"></script>";
    char path[4200];
    snprintf(path, sizeof path, "%s/" RS_WATCH_FILE, dir);
    struct stat st;
    if (stat(path, &st))
        return rs_fail(err,
                       "%s: %s (a training writes it at each evaluation when it has a dev set "
                       "or --watch)",
                       path, strerror(errno));
    const char *page = (const char *)rs_serve_page, *at = strstr(page, slot);
    if (!at)
        return rs_fail(err, "the explorer page has no place for the replay's data");
    const size_t cap = (size_t)1 << 30;
    size_t log_len, watch_len;
    char *log = rs_run_log_json(dir, cap, &log_len, err);
    char *watch = log ? rs_run_watch_json(dir, 0, cap, &watch_len, err) : NULL;
    if (!watch) {
        free(log);
        return -1;
    }
    const size_t open_len = sizeof slot - 1 - strlen("</script>");
    fwrite(page, 1, (size_t)(at - page) + open_len, out);
    fputs("{\"log\":", out);
    write_script_json(out, log, log_len);
    fputs(",\"watch\":", out);
    write_script_json(out, watch, watch_len);
    fputs("}", out);
    fputs(at + open_len, out);
    free(log);
    free(watch);
    return ferror(out) ? rs_fail(err, "write failed") : 0;
}
