/* A training run's log and watched alignments as JSON (run.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/utf8.h"
#include "model/locate.h"
#include "serve/run.h"
#include "serve/serve_page.h"
#include "train/rundir.h"
#include "train/watch.h"

/* How far one call scans past a watch record too long to send, looking for
 * its end: a 300 MB line costs five answers, none of them more than this. */
#define SKIP_SCAN ((uint64_t)64 << 20)
/* The longest header line of train.log.tsv, and the window read at each
 * sampled offset of a long log (a row must fit in it to be sampled). */
#define HEAD_MAX ((size_t)64 << 10)
#define PROBE ((size_t)4 << 10)

/* ---- reading run files ---- */

/* A run file, open for reading; fd -1: it does not exist (reads as empty). */
typedef struct {
    int fd;
    uint64_t size;
    char name[PATH_MAX + 64]; /* DIR/NAME as given, for messages */
} run_file;

static void close_run_file(run_file *rf)
{
    if (rf->fd >= 0)
        close(rf->fd);
    rf->fd = -1;
}

/* Whether the resolved path lies below the resolved directory. */
static int inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return !strncmp(path, dir, n) && path[n] == '/';
}

static int refuse_outside(run_file *rf, int *status, rs_error *err)
{
    close_run_file(rf);
    *status = 403;
    return rs_fail(err,
                   "%s leads out of the run directory (a symbolic link): the server reads only "
                   "files inside it",
                   rf->name);
}

static int refuse_special(run_file *rf, int *status, rs_error *err)
{
    close_run_file(rf);
    *status = 403;
    return rs_fail(err, "%s is not a regular file: the server reads only regular files", rf->name);
}

/* Opens DIR/NAME for reading when it is a regular file inside DIR once every
 * link is resolved. The path is resolved and checked before it is opened (so
 * no FIFO or device outside is ever opened), and the descriptor is checked
 * again (/proc/self/fd names where it really leads, even if a directory on
 * the way was swapped for a link in between). O_NONBLOCK: even a FIFO that
 * slipped through would not block the open or a read. */
static int open_run_file(const char *dir, const char *name, run_file *rf, int *status,
                         rs_error *err)
{
    char real_dir[PATH_MAX], path[PATH_MAX + 64], real[PATH_MAX];
    struct stat st;
    rf->fd = -1;
    rf->size = 0;
    snprintf(rf->name, sizeof rf->name, "%s/%s", dir, name);
    *status = 500;
    if (!realpath(dir, real_dir))
        return errno == ENOENT ? 0 : rs_fail(err, "%s: %s", dir, strerror(errno));
    snprintf(path, sizeof path, "%s/%s", strcmp(real_dir, "/") ? real_dir : "", name);
    if (!realpath(path, real))
        return errno == ENOENT ? 0 : rs_fail(err, "%s: %s", rf->name, strerror(errno));
    if (!inside(real, real_dir))
        return refuse_outside(rf, status, err);
    if (stat(real, &st))
        return errno == ENOENT ? 0 : rs_fail(err, "%s: %s", rf->name, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return refuse_special(rf, status, err);
    rf->fd = open(real, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (rf->fd < 0) {
        if (errno == ENOENT)
            return 0;
        if (errno == ELOOP) /* made a link since it was resolved */
            return refuse_outside(rf, status, err);
        return rs_fail(err, "%s: cannot open: %s", rf->name, strerror(errno));
    }
    if (fstat(rf->fd, &st) || !S_ISREG(st.st_mode))
        return refuse_special(rf, status, err);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", rf->fd);
    ssize_t n = readlink(proc, real, sizeof real - 1);
    if (n > 0) { /* without /proc, the check before opening stands alone */
        real[n] = '\0';
        if (!inside(real, real_dir))
            return refuse_outside(rf, status, err);
    }
    rf->size = (uint64_t)st.st_size;
    return 0;
}

/* Up to n bytes at offset off into buf (fewer at the end of the file). */
static int read_at(const run_file *rf, char *buf, size_t n, uint64_t off, size_t *got,
                   rs_error *err)
{
    *got = 0;
    while (*got < n) {
        ssize_t r = pread(rf->fd, buf + *got, n - *got, (off_t)(off + *got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return rs_fail(err, "%s: cannot read: %s", rf->name, strerror(errno));
        if (r == 0)
            break;
        *got += (size_t)r;
    }
    return 0;
}

/* Scans from `at` for the newline that ends the line there, SKIP_SCAN bytes
 * at most: *end is just past it (*found 1), or where the scan stopped (the
 * end of the file or the bound; *found 0). */
static int skip_line(const run_file *rf, uint64_t at, uint64_t *end, int *found, rs_error *err)
{
    static const size_t chunk_size = 64 << 10;
    char *chunk = malloc(chunk_size);
    if (!chunk)
        return rs_fail(err, "out of memory");
    const uint64_t limit = rf->size - at > SKIP_SCAN ? at + SKIP_SCAN : rf->size;
    uint64_t pos = at;
    *found = 0;
    while (pos < limit && !*found) {
        size_t want = limit - pos < chunk_size ? (size_t)(limit - pos) : chunk_size, got;
        if (read_at(rf, chunk, want, pos, &got, err)) {
            free(chunk);
            return -1;
        }
        const char *nl = memchr(chunk, '\n', got);
        pos += nl ? (uint64_t)(nl - chunk) + 1 : got;
        *found = nl != NULL;
        if (got < want)
            break;
    }
    free(chunk);
    *end = pos;
    return 0;
}

/* ---- answers ---- */

/* The answer so far in memory (its input was read within cap bytes, so it
 * stays near that size); longer than cap: refused as a whole. */
/* An array of `count` items of type t (count 0: any length but 0). */
static int array_of(const rs_json *a, rs_json_type t, size_t count)
{
    if (!a || a->type != RS_JSON_ARRAY || !a->count || (count && a->count != count))
        return 0;
    for (size_t i = 0; i < a->count; i++)
        if (a->items[i].type != t)
            return 0;
    return 1;
}

/* Whether obj is a record as training writes it (train/watch.h): numbers
 * step and sentence, a string kind, source and target tokens, and a
 * [target, source] matrix of numbers. Anything else is counted as
 * unreadable rather than handed to the page, which draws only records. */
static int is_watch_record(const rs_json *obj)
{
    if (!obj || obj->type != RS_JSON_OBJECT)
        return 0;
    const rs_json *step = rs_json_get(obj, "step"), *sentence = rs_json_get(obj, "sentence"),
                  *kind = rs_json_get(obj, "kind"), *src = rs_json_get(obj, "source"),
                  *tgt = rs_json_get(obj, "target"), *al = rs_json_get(obj, "alignment");
    if (!step || step->type != RS_JSON_NUMBER || !sentence || sentence->type != RS_JSON_NUMBER ||
        !kind || kind->type != RS_JSON_STRING || !array_of(src, RS_JSON_STRING, 0) ||
        !array_of(tgt, RS_JSON_STRING, 0) || !array_of(al, RS_JSON_ARRAY, tgt->count))
        return 0;
    for (size_t i = 0; i < al->count; i++)
        if (!array_of(&al->items[i], RS_JSON_NUMBER, src->count))
            return 0;
    return 1;
}

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

/* A log cell or column name as a JSON string, valid UTF-8 whatever the
 * file holds: a byte that is not part of valid UTF-8, and a NUL, is written
 * U+FFFD, another control byte \u00XX, and only the first CELL_MAX bytes of a
 * cell are written (then "…"), so a cell costs at most 6 x CELL_MAX bytes. */
#define CELL_MAX ((size_t)1024)
static void write_text(FILE *out, const char *cell, size_t n)
{
    const unsigned char *p = (const unsigned char *)cell, *end = p + (n < CELL_MAX ? n : CELL_MAX);
    putc('"', out);
    while (p < end) {
        if (*p < 0x80) {
            if (*p == '\0')
                fputs("\xEF\xBF\xBD", out); /* U+FFFD: readers refuse \u0000 */
            else if (*p == '"' || *p == '\\')
                fprintf(out, "\\%c", *p);
            else if (*p < 0x20 || *p == 0x7F)
                fprintf(out, "\\u%04x", *p);
            else
                putc(*p, out);
            p++;
            continue;
        }
        size_t k = rs_utf8_sequence(p, end);
        if (k) {
            fwrite(p, 1, k, out);
            p += k;
        } else {
            fputs("\xEF\xBF\xBD", out); /* U+FFFD */
            p++;
        }
    }
    if (n > CELL_MAX)
        fputs("\xE2\x80\xA6", out); /* … */
    putc('"', out);
}

/* One TSV cell: a number, null when empty, else a string. */
static void write_cell(FILE *out, const char *cell, size_t n)
{
    char buf[64], *end;
    if (n == 0) {
        fputs("null", out);
        return;
    }
    if (n < sizeof buf && !memchr(cell, '\0', n)) {
        memcpy(buf, cell, n);
        buf[n] = '\0';
        double v = strtod(buf, &end);
        if (end == buf + n && isfinite(v)) {
            fprintf(out, "%.10g", v);
            return;
        }
    }
    write_text(out, cell, n);
}

/* One TSV line (without its newline) as a JSON array of cells, or of names;
 * -1 as soon as the answer passes cap bytes (the rest is not written). */
static int write_row(FILE *out, const char *p, size_t n, int names, size_t cap)
{
    putc('[', out);
    for (size_t at = 0;;) {
        const char *tab = memchr(p + at, '\t', n - at);
        size_t cell = tab ? (size_t)(tab - (p + at)) : n - at;
        if (names)
            write_text(out, p + at, cell);
        else
            write_cell(out, p + at, cell);
        if (ftell(out) > (long)cap)
            return -1;
        if (!tab)
            break;
        putc(',', out);
        at += cell + 1;
    }
    putc(']', out);
    return 0;
}

/* ---- GET /api/run ---- */

/* The rows the log answer may choose from: lines of `text`, each ending in
 * a newline, in the order of the file. */
typedef struct {
    char *text;
    size_t len;
    size_t *start; /* [count] offsets into text */
    size_t count;
    uint64_t rows; /* rows in the log: counted, or estimated from a sample */
    int exact;     /* 1: rows counted, every row is among these */
} log_rows;

static int index_rows(log_rows *lr, rs_error *err)
{
    size_t n = 0;
    for (size_t k = 0; k < lr->len; k++)
        n += lr->text[k] == '\n';
    if (!(lr->start = rs_calloc(n + 1, sizeof *lr->start, err)))
        return -1;
    for (size_t k = 0, at = 0; k < lr->len; k++)
        if (lr->text[k] == '\n') {
            lr->start[lr->count++] = at;
            at = k + 1;
        }
    return 0;
}

/* A log of at most cap bytes past its header: every whole row. */
static int read_all_rows(const run_file *rf, uint64_t head, log_rows *lr, rs_error *err)
{
    size_t want = (size_t)(rf->size - head), got;
    if (!(lr->text = rs_calloc(want + 1, 1, err)) || read_at(rf, lr->text, want, head, &got, err))
        return -1;
    while (got > 0 && lr->text[got - 1] != '\n') /* a row still being written */
        got--;
    lr->len = got;
    if (index_rows(lr, err))
        return -1;
    lr->rows = lr->count;
    lr->exact = 1;
    return 0;
}

/* A longer log: the row at or after each of RS_RUN_MAX_ROWS evenly spaced
 * offsets, and the last whole row. */
static int sample_rows(const run_file *rf, uint64_t head, log_rows *lr, rs_error *err)
{
    char *probe = malloc(PROBE + 1);
    FILE *f = open_memstream(&lr->text, &lr->len);
    if (!probe || !f) {
        free(probe);
        if (f)
            fclose(f);
        return rs_fail(err, "out of memory");
    }
    int rc = 0;
    const uint64_t span = rf->size - head, n = RS_RUN_MAX_ROWS;
    uint64_t last = UINT64_MAX, sampled = 0, sampled_bytes = 0, end = head;
    size_t got;
    /* The last whole row first: it bounds the others, and is always sent. */
    const uint64_t tail = rf->size - head > PROBE ? rf->size - PROBE : head;
    char *last_row = NULL;
    size_t last_len = 0;
    if ((rc = read_at(rf, probe, PROBE, tail, &got, err)) == 0) {
        size_t e = got;
        while (e > 0 && probe[e - 1] != '\n')
            e--;
        size_t b = e > 0 ? e - 1 : 0;
        while (b > 0 && probe[b - 1] != '\n')
            b--;
        if (e > 0 && (b > 0 || tail == head)) {
            last_row = probe + b;
            last_len = e - b;
            end = tail + e;
        } else if (e > 0) {
            end = tail + e; /* the last row is longer than a probe: left out */
        }
    }
    char *keep = last_row ? strndup(last_row, last_len) : NULL;
    if (last_row && !keep)
        rc = rs_fail(err, "out of memory");
    for (uint64_t k = 0; k < n && rc == 0; k++) {
        const uint64_t o = head + (span / n) * k + ((span % n) * k) / n;
        if (o >= end)
            break;
        /* From the byte before o: a row starts at o when that byte ends a line. */
        const uint64_t at = o > head ? o - 1 : head;
        if ((rc = read_at(rf, probe, PROBE + 1, at, &got, err)))
            break;
        const char *p = probe, *stop = probe + got;
        if (o > head) {
            const char *nl = memchr(probe, '\n', got);
            if (!nl)
                continue;
            p = nl + 1;
        }
        const char *eol = memchr(p, '\n', (size_t)(stop - p));
        const uint64_t start = at + (uint64_t)(p - probe);
        if (!eol || start == last || start + (uint64_t)(eol - p) + 1 > end ||
            (keep && start + (uint64_t)(eol - p) + 1 == end))
            continue;
        fwrite(p, 1, (size_t)(eol - p) + 1, f);
        last = start;
        sampled++;
        sampled_bytes += (uint64_t)(eol - p) + 1;
    }
    if (keep) {
        fwrite(keep, 1, last_len, f);
        sampled++;
        sampled_bytes += last_len;
    }
    free(keep);
    free(probe);
    if (fclose(f) || !lr->text)
        return rc ? rc : rs_fail(err, "out of memory");
    if (rc || index_rows(lr, err))
        return -1;
    lr->rows =
        sampled ? (uint64_t)((double)(end - head) * (double)sampled / (double)sampled_bytes + 0.5)
                : 0;
    lr->exact = 0;
    return 0;
}

/* Whether the run trains a model with --attention none, which has no
 * alignment to watch: the configuration line its train.log opens with says
 * attention=none (read as the other run files are; a log that cannot be read
 * says nothing). */
static int run_has_no_alignment(const char *dir)
{
    run_file log;
    rs_error ignored;
    int status, found = 0;
    char head[16384];
    size_t got = 0;
    if (!open_run_file(dir, "train.log", &log, &status, &ignored) && log.fd >= 0 &&
        !read_at(&log, head, sizeof head - 1, 0, &got, &ignored)) {
        head[got] = '\0';
        found = strstr(head, " attention=none ") != NULL;
    }
    close_run_file(&log);
    return found;
}

/* What the log's answer is made of: the run directory, the log's header
 * line (NULL while it is being written), its rows, and the two files. */
typedef struct {
    const char *dir;
    const char *head;
    size_t head_len;
    const log_rows *lr;
    const run_file *log, *watch;
    int watch_refused; /* watch.jsonl cannot be served: its size is null */
} log_answer;

/* The log's answer with at most max_rows rows chosen evenly from a->lr, the
 * first and the last among them. Writing stops as soon as the answer passes
 * cap bytes: -1, with *fitted the rows written whole by then (so no attempt
 * writes much more than cap bytes, however large the rows). */
static int write_log(FILE *f, const log_answer *a, size_t max_rows, size_t cap, size_t *fitted)
{
    const char *dir = a->dir, *head = a->head;
    const size_t head_len = a->head_len;
    const log_rows *lr = a->lr;
    const run_file *log = a->log, *watch = a->watch;
    const int watch_refused = a->watch_refused;
    *fitted = 0;
    fputs("{\"dir\":", f);
    rs_json_write_string(f, dir);
    fputs(",\"columns\":", f);
    if (head) {
        if (write_row(f, head, head_len, 1, cap))
            return -1;
    } else {
        fputs("[]", f);
    }
    fputs(",\"rows\":[", f);
    const size_t m = lr->count < max_rows ? lr->count : max_rows;
    for (size_t k = 0; k < m; k++) {
        size_t i = m == 1 ? lr->count - 1 : k * (lr->count - 1) / (m - 1);
        size_t from = lr->start[i], to = from;
        while (lr->text[to] != '\n')
            to++;
        if (k)
            putc(',', f);
        if (write_row(f, lr->text + from, to - from, 0, cap))
            return -1;
        *fitted = k + 1;
    }
    fprintf(f, "],\"log_rows\":%llu,\"log_rows_exact\":%s,\"thinned\":%s,\"log_bytes\":%llu",
            (unsigned long long)lr->rows, lr->exact ? "true" : "false",
            !lr->exact || m < lr->count ? "true" : "false", (unsigned long long)log->size);
    if (watch_refused)
        fputs(",\"watch_bytes\":null", f);
    else
        fprintf(f, ",\"watch_bytes\":%llu", (unsigned long long)watch->size);
    if (run_has_no_alignment(dir)) {
        fputs(",\"no_alignment\":", f);
        rs_json_write_string(f, RS_NO_ALIGNMENT_WHY);
    }
    fputs("}\n", f);
    return 0;
}

char *rs_run_log_json(const char *dir, size_t cap, size_t *len, int *status, rs_error *err)
{
    run_file log, watch;
    rs_error ignored;
    int watch_status;
    if (open_run_file(dir, RS_TRAIN_LOG, &log, status, err))
        return NULL;
    const int watch_refused = open_run_file(dir, RS_WATCH_FILE, &watch, &watch_status, &ignored);
    close_run_file(&watch);
    *status = 500;
    char *head = NULL, *text = NULL;
    size_t head_len = 0, got, size;
    log_rows lr = {0};
    lr.exact = 1; /* a missing or empty log: 0 rows, exactly, none left out */
    if (log.fd >= 0 && log.size > 0) {
        if (!(head = rs_calloc(HEAD_MAX + 1, 1, err)) ||
            read_at(&log, head, HEAD_MAX, 0, &got, err))
            goto fail;
        const char *nl = memchr(head, '\n', got);
        if (!nl && got == HEAD_MAX) {
            rs_fail(err, "%s: the first line is longer than %zu bytes: not a training log",
                    log.name, HEAD_MAX);
            goto fail;
        }
        head_len = nl ? (size_t)(nl - head) : 0;
        if (!nl) { /* the header is still being written */
            free(head);
            head = NULL;
        } else if (log.size - (head_len + 1) <= cap ? read_all_rows(&log, head_len + 1, &lr, err)
                                                    : sample_rows(&log, head_len + 1, &lr, err)) {
            goto fail;
        }
    }
    /* Fewer rows until the answer fits: at most half as many as before, and
     * no more than fitted whole the last time. */
    for (size_t max_rows = RS_RUN_MAX_ROWS, fitted;;) {
        FILE *f = open_answer(&text, &size);
        if (!f) {
            rs_fail(err, "out of memory");
            goto fail;
        }
        const log_answer a = {dir, head, head_len, &lr, &log, &watch, watch_refused};
        write_log(f, &a, max_rows, cap, &fitted);
        char *answer = close_answer(f, &text, &size, cap, len, err);
        if (answer || max_rows == 0 || size <= cap) {
            if (!answer && size > cap)
                *status = 413;
            close_run_file(&log);
            free(head);
            free(lr.text);
            free(lr.start);
            return answer;
        }
        max_rows = fitted < max_rows / 2 ? fitted : max_rows / 2;
    }
fail:
    close_run_file(&log);
    free(head);
    free(lr.text);
    free(lr.start);
    return NULL;
}

/* ---- GET /api/run/watch ---- */

char *rs_run_watch_json(const char *dir, uint64_t from, size_t cap, size_t *len, int *status,
                        rs_error *err)
{
    run_file rf;
    if (open_run_file(dir, RS_WATCH_FILE, &rf, status, err))
        return NULL;
    *status = 500;
    /* Records take what the answer's frame leaves. */
    const size_t budget = cap > 512 ? cap - 512 : 1;
    uint64_t pos = from, next = from, skipped_bytes = 0;
    int skipped = 0, found = 1;
    char *buf = NULL;
    size_t got = 0, whole = 0;
    if (rf.fd >= 0 && from < rf.size) {
        /* Inside a line (the rest of one skipped before, or an offset that is
         * not a line's start): on from the next line. */
        char before = '\n';
        size_t one;
        if (from > 0 && read_at(&rf, &before, 1, from - 1, &one, err))
            goto fail;
        if (before != '\n') {
            if (skip_line(&rf, from, &pos, &found, err))
                goto fail;
            skipped_bytes += pos - from;
        }
        next = pos;
        if (found && pos < rf.size) {
            const size_t want = rf.size - pos < budget ? (size_t)(rf.size - pos) : budget;
            if (!(buf = rs_calloc(want + 1, 1, err)) || read_at(&rf, buf, want, pos, &got, err))
                goto fail;
            whole = got;
            while (whole > 0 && buf[whole - 1] != '\n')
                whole--;
            next = pos + whole;
            if (whole == 0 && got == budget) {
                /* One record longer than an answer can be: passed over. */
                skipped++;
                if (skip_line(&rf, pos + got, &next, &found, err))
                    goto fail;
                skipped_bytes += next - pos;
            }
        }
    }
    char *text;
    size_t text_size;
    FILE *f = open_answer(&text, &text_size);
    if (!f) {
        rs_fail(err, "out of memory");
        goto fail;
    }
    int n = 0, unreadable = 0;
    fprintf(f, "{\"from\":%llu,\"next\":%llu,\"size\":%llu,\"records\":[", (unsigned long long)from,
            (unsigned long long)next, (unsigned long long)rf.size);
    for (size_t at = 0; at < whole;) {
        const char *p = buf + at, *eol = memchr(p, '\n', whole - at);
        rs_error bad;
        rs_json *obj = rs_json_parse(p, (size_t)(eol - p), &bad);
        if (is_watch_record(obj)) {
            fputs(n++ ? "," : "", f);
            fwrite(p, 1, (size_t)(eol - p), f);
        } else {
            unreadable++;
        }
        rs_json_free(obj);
        at += (size_t)(eol - p) + 1;
    }
    fprintf(f, "],\"skipped\":%d,\"skipped_bytes\":%llu,\"unreadable\":%d}\n", skipped,
            (unsigned long long)skipped_bytes, unreadable);
    free(buf);
    close_run_file(&rf);
    return close_answer(f, &text, &text_size, cap, len, err);
fail:
    free(buf);
    close_run_file(&rf);
    return NULL;
}

/* ---- the replay page ---- */

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
    if (stat(path, &st) && run_has_no_alignment(dir))
        return rs_fail(err, "%s: no watch.jsonl to replay: %s", dir, RS_NO_ALIGNMENT_WHY);
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
    int status;
    char *log = rs_run_log_json(dir, cap, &log_len, &status, err);
    char *watch = log ? rs_run_watch_json(dir, 0, cap, &watch_len, &status, err) : NULL;
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

void rs_run_dir_of_model(const char *model_arg, char *dir, size_t size, char *shared)
{
    rs_error err;
    char path[4096], file[4200];
    if (rs_model_locate(model_arg, path, sizeof path, &err))
        return;
    char *slash = strrchr(path, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(path, sizeof path, ".");
    snprintf(file, sizeof file, "%s/" RS_TRAIN_LOG, path);
    int found = access(file, F_OK) == 0;
    snprintf(file, sizeof file, "%s/" RS_WATCH_FILE, path);
    struct stat st;
    if (!found && access(file, F_OK) != 0)
        return;
    if (stat(path, &st) == 0 && (st.st_mode & S_IWOTH))
        snprintf(shared, size, "%s", path);
    else
        snprintf(dir, size, "%s", path);
}
