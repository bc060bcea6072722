#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "text/corpus.h"
#include "text/text.h"

static const char *display_name(const char *path)
{
    return strcmp(path, "-") ? path : "<stdin>";
}

int rs_line_reader_open(rs_line_reader *r, const char *path, rs_error *err)
{
    memset(r, 0, sizeof *r);
    r->name = display_name(path);
    if (!strcmp(path, "-")) {
        r->file = stdin;
        return 0;
    }
    r->file = fopen(path, "rb");
    if (!r->file)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    return 0;
}

enum { CHUNK = 1 << 16 };

/* Reads what is there (at most `room` bytes, at least one unless at the end:
 * read(2), not fread, so that a pipe's line is not held back waiting for a
 * full buffer). Returns the count, 0 at the end, -1 on an error. */
static ssize_t read_some(rs_line_reader *r, unsigned char *dst, size_t room, rs_error *err)
{
    for (;;) {
        ssize_t n = read(fileno(r->file), dst, room);
        if (n >= 0)
            return n;
        if (errno != EINTR)
            return rs_fail(err, "%s:%ld: read error: %s", r->name, r->line + 1, strerror(errno));
    }
}

/* Starts decompressing the gzip stream whose first bytes are in raw. */
static int gz_start(rs_line_reader *r, rs_error *err)
{
    z_stream *zs = calloc(1, sizeof *zs);
    r->text = malloc(CHUNK);
    if (!zs || !r->text) {
        free(zs);
        return rs_fail(err, "%s: out of memory for decompression", r->name);
    }
    /* 15 + 16: the largest window, gzip framing only. */
    if (inflateInit2(zs, 15 + 16) != Z_OK) {
        free(zs);
        return rs_fail(err, "%s: cannot start decompression", r->name);
    }
    r->gz = zs;
    zs->next_in = r->raw;
    zs->avail_in = (uInt)r->raw_len;
    r->raw_pos = r->raw_len;
    return 0;
}

/* Reads the first bytes and looks for the gzip magic 1f 8b. */
static int start(rs_line_reader *r, rs_error *err)
{
    r->started = 1;
    if (!(r->raw = malloc(CHUNK)))
        return rs_fail(err, "%s: out of memory", r->name);
    ssize_t n = read_some(r, r->raw, CHUNK, err);
    if (n < 0)
        return -1;
    r->raw_len = (size_t)n;
    /* A second byte is waited for only after a first 0x1f (not text anyone types). */
    while (r->raw_len == 1 && r->raw[0] == 0x1f) {
        if ((n = read_some(r, r->raw + 1, CHUNK - 1, err)) < 0)
            return -1;
        if (n == 0)
            break;
        r->raw_len += (size_t)n;
    }
    if (r->raw_len >= 2 && r->raw[0] == 0x1f && r->raw[1] == 0x8b)
        return gz_start(r, err);
    return 0;
}

/* Decompresses into text; returns 1, 0 at the end of the input, or -1. */
static int gz_fill(rs_line_reader *r, rs_error *err)
{
    z_stream *zs = r->gz;
    r->text_pos = r->text_len = 0;
    while (r->text_len == 0) {
        if (!zs->avail_in) {
            ssize_t n = read_some(r, r->raw, CHUNK, err);
            if (n < 0)
                return -1;
            if (n == 0) {
                if (r->gz_member_ended)
                    return 0;
                return rs_fail(err, "%s:%ld: truncated gzip data", r->name, r->line + 1);
            }
            zs->next_in = r->raw;
            zs->avail_in = (uInt)n;
        }
        if (r->gz_member_ended) {
            /* Another member follows (gzip files may be concatenated). */
            if (inflateReset(zs) != Z_OK)
                return rs_fail(err, "%s: cannot restart decompression", r->name);
            r->gz_member_ended = 0;
        }
        zs->next_out = r->text;
        zs->avail_out = CHUNK;
        int rc = inflate(zs, Z_NO_FLUSH);
        r->text_len = CHUNK - zs->avail_out;
        if (rc == Z_STREAM_END)
            r->gz_member_ended = 1;
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            return rs_fail(err, "%s:%ld: corrupt gzip data (%s)", r->name, r->line + 1,
                           zs->msg ? zs->msg : "inflate failed");
    }
    return 1;
}

/* Points *p at the next *n > 0 bytes of text (not consumed); returns 1, 0 at
 * the end of the input, or -1 on an error. */
static int peek_text(rs_line_reader *r, const unsigned char **p, size_t *n, rs_error *err)
{
    if (!r->started && start(r, err))
        return -1;
    if (r->gz) {
        if (r->text_pos == r->text_len) {
            int rc = gz_fill(r, err);
            if (rc <= 0)
                return rc;
        }
        *p = r->text + r->text_pos;
        *n = r->text_len - r->text_pos;
        return 1;
    }
    if (r->raw_pos == r->raw_len) {
        ssize_t got = read_some(r, r->raw, CHUNK, err);
        if (got <= 0)
            return (int)got;
        r->raw_pos = 0;
        r->raw_len = (size_t)got;
    }
    *p = r->raw + r->raw_pos;
    *n = r->raw_len - r->raw_pos;
    return 1;
}

static void consume_text(rs_line_reader *r, size_t n)
{
    if (r->gz)
        r->text_pos += n;
    else
        r->raw_pos += n;
}

/* Appends n bytes to the line being built (k bytes so far). */
static int append(rs_line_reader *r, size_t k, const unsigned char *p, size_t n, rs_error *err)
{
    if (k + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < k + n + 1 && cap <= SIZE_MAX / 2)
            cap *= 2;
        char *grown = cap >= k + n + 1 ? realloc(r->buf, cap) : NULL;
        if (!grown)
            return rs_fail(err, "%s:%ld: out of memory reading a line", r->name, r->line + 1);
        r->buf = grown;
        r->cap = cap;
    }
    memcpy(r->buf + k, p, n);
    return 0;
}

int rs_line_reader_next(rs_line_reader *r, char **line, size_t *len, rs_error *err)
{
    size_t k = 0;
    int ended = 0;
    while (!ended) {
        const unsigned char *p = NULL;
        size_t n = 0;
        int rc = peek_text(r, &p, &n, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            if (k == 0)
                return 0;
            break;
        }
        /* "\r\n" is one line end; deciding so here, not by reading ahead at
         * the "\r", keeps a "\r"-ended line from waiting for more input. */
        if (r->after_cr) {
            r->after_cr = 0;
            if (p[0] == '\n') {
                consume_text(r, 1);
                continue;
            }
        }
        size_t i = 0;
        while (i < n && p[i] != '\n' && p[i] != '\r')
            i++;
        /* Checked as the bytes arrive, so that a file of NUL bytes or one
         * endless line is refused after at most RS_LINE_MAX_BYTES, not held whole. */
        const unsigned char *nul = memchr(p, 0, i);
        if (nul)
            return rs_fail(err, "%s:%ld: NUL byte at byte %zu", r->name, r->line + 1,
                           k + (size_t)(nul - p) + 1);
        if (k + i > RS_LINE_MAX_BYTES)
            return rs_fail(err, "%s:%ld: line longer than %d bytes (the most a line may hold)",
                           r->name, r->line + 1, RS_LINE_MAX_BYTES);
        if (append(r, k, p, i, err))
            return -1;
        k += i;
        if (i < n) {
            r->after_cr = p[i] == '\r';
            ended = 1;
            i++;
        }
        consume_text(r, i);
    }
    r->line++;
    /* An empty first line has not allocated the buffer yet. */
    if (!r->buf && append(r, 0, (const unsigned char *)"", 0, err))
        return -1;
    char *s = r->buf;
    s[k] = '\0';
    /* Validated before the byte-order mark goes, so offsets count raw bytes. */
    rs_error why;
    if (rs_utf8_validate(s, k, &why))
        return rs_fail(err, "%s:%ld: %s", r->name, r->line, why.msg);
    if (r->line == 1 && k >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) {
        s += 3;
        k -= 3;
    }
    *line = s;
    *len = k;
    return 1;
}

int rs_line_reader_ready(const rs_line_reader *r)
{
    const int buffered = r->gz ? r->text_pos < r->text_len || ((const z_stream *)r->gz)->avail_in
                               : r->raw_pos < r->raw_len;
    if (buffered)
        return 1;
    struct stat st;
    if (!fstat(fileno(r->file), &st) && S_ISREG(st.st_mode))
        return 1;
    struct pollfd pfd = {.fd = fileno(r->file), .events = POLLIN};
    return poll(&pfd, 1, 0) > 0;
}

void rs_line_reader_close(rs_line_reader *r)
{
    if (r->file && r->file != stdin)
        fclose(r->file);
    if (r->gz) {
        inflateEnd(r->gz);
        free(r->gz);
    }
    free(r->raw);
    free(r->text);
    free(r->buf);
    memset(r, 0, sizeof *r);
}

static char *copy_bytes(const char *s, size_t len)
{
    char *copy = malloc(len + 1);
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

void rs_lines_free(rs_lines *lines)
{
    for (int i = 0; i < lines->count; i++)
        free(lines->lines[i]);
    free(lines->lines);
    memset(lines, 0, sizeof *lines);
}

void rs_pairs_free(rs_pairs *pairs)
{
    for (int i = 0; i < pairs->count; i++) {
        free(pairs->src[i]);
        free(pairs->tgt[i]);
    }
    free(pairs->src);
    free(pairs->tgt);
    memset(pairs, 0, sizeof *pairs);
}

/* Resizes an array of strings to capacity entries. */
static int grow_strings(char ***array, int capacity, rs_error *err)
{
    char **grown = realloc(*array, (size_t)capacity * sizeof *grown);
    if (!grown)
        return rs_fail(err, "out of memory growing a list of %d lines", capacity);
    *array = grown;
    return 0;
}

static int next_capacity(int capacity, const char *name, rs_error *err)
{
    if (capacity > INT_MAX / 2)
        return rs_fail(err, "%s: more lines than this program can hold", name);
    return capacity ? 2 * capacity : 1024;
}

int rs_lines_read(const char *path, rs_lines *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    rs_line_reader r;
    if (rs_line_reader_open(&r, path, err))
        return -1;
    char *line;
    size_t len;
    int rc;
    while ((rc = rs_line_reader_next(&r, &line, &len, err)) == 1) {
        if (out->count == out->capacity) {
            int capacity = next_capacity(out->capacity, r.name, err);
            if (capacity < 0 || grow_strings(&out->lines, capacity, err))
                break;
            out->capacity = capacity;
        }
        char *copy = copy_bytes(line, len);
        if (!copy) {
            rs_fail(err, "%s:%ld: out of memory", r.name, r.line);
            break;
        }
        out->lines[out->count++] = copy;
    }
    rs_line_reader_close(&r);
    if (rc != 0) {
        rs_lines_free(out);
        return -1;
    }
    return 0;
}

void rs_note_empty(FILE *out, const char *prog, const char *name, const char *what,
                   const char *done)
{
    if (out)
        fprintf(out, "%s: %s: no %s (an empty input): nothing %s\n", prog,
                strcmp(name, "-") ? name : "<stdin>", what, done);
}

static int push_pair(rs_pairs *p, const char *src, size_t src_len, const char *tgt, size_t tgt_len,
                     const char *name, rs_error *err)
{
    if (p->count == p->capacity) {
        int capacity = next_capacity(p->capacity, name, err);
        if (capacity < 0 || grow_strings(&p->src, capacity, err) ||
            grow_strings(&p->tgt, capacity, err))
            return -1;
        p->capacity = capacity;
    }
    char *s = copy_bytes(src, src_len), *t = copy_bytes(tgt, tgt_len);
    if (!s || !t) {
        free(s);
        free(t);
        return rs_fail(err, "%s: out of memory after %d sentence pairs", name, p->count);
    }
    p->src[p->count] = s;
    p->tgt[p->count] = t;
    p->count++;
    return 0;
}

/* Counts a pair left out; 0. */
static int skip_pair(rs_pairs_skipped *skipped, const char *file, long line)
{
    if (!skipped->count++) {
        skipped->first_line = line;
        skipped->first_file = file;
    }
    return 0;
}

/* Splits one TSV line into its first two columns and stores them; a pair
 * with an empty side is an error, or counted in skipped when that is given,
 * except an empty target when empty_target is set. */
static int add_tsv_line(rs_pairs *p, const char *line, size_t len, int swap, int empty_target,
                        const rs_line_reader *r, rs_pairs_skipped *skipped, rs_error *err)
{
    if (!len)
        return skipped ? skip_pair(skipped, r->name, r->line)
                       : rs_fail(err, "%s:%ld: empty line", r->name, r->line);
    const char *tab = memchr(line, '\t', len);
    if (!tab)
        return rs_fail(err, "%s:%ld: no tab between source and target", r->name, r->line);
    const char *first = line, *second = tab + 1;
    size_t first_len = (size_t)(tab - line);
    const char *end = memchr(second, '\t', len - first_len - 1);
    size_t second_len = end ? (size_t)(end - second) : len - first_len - 1;
    if (empty_target) {
        const char *src = swap ? second : first, *tgt = swap ? first : second;
        const size_t src_len = swap ? second_len : first_len,
                     tgt_len = swap ? first_len : second_len;
        /* An empty source with an empty target is the empty translation of
         * an empty line, as translate --n-best lists it. */
        if (rs_text_is_blank(src, src_len) && !rs_text_is_blank(tgt, tgt_len))
            return rs_fail(err,
                           src_len ? "%s:%ld: the sentence in column %d is only white space"
                                   : "%s:%ld: empty sentence in column %d",
                           r->name, r->line, swap ? 2 : 1);
        return push_pair(p, src, src_len, tgt, tgt_len, r->name, err);
    }
    const int blank1 = rs_text_is_blank(first, first_len),
              blank2 = rs_text_is_blank(second, second_len);
    if ((blank1 || blank2) && skipped)
        return skip_pair(skipped, r->name, r->line);
    if (!first_len || !second_len)
        return rs_fail(err, "%s:%ld: empty sentence in column %d", r->name, r->line,
                       first_len ? 2 : 1);
    if (blank1 || blank2)
        return rs_fail(err, "%s:%ld: the sentence in column %d is only white space", r->name,
                       r->line, blank1 ? 1 : 2);
    if (swap)
        return push_pair(p, second, second_len, first, first_len, r->name, err);
    return push_pair(p, first, first_len, second, second_len, r->name, err);
}

/* Every pair of reader r into out, r closed; opened: rs_pair_reader_open_*'s
 * status (nonzero: r is not open). */
static int read_whole(rs_pair_reader *r, int opened, rs_pairs_skipped *skipped, rs_pairs *out,
                      rs_error *err)
{
    memset(out, 0, sizeof *out);
    if (skipped)
        memset(skipped, 0, sizeof *skipped);
    if (opened)
        return -1;
    const int rc = rs_pair_reader_read(r, INT_MAX, skipped, out, err);
    rs_pair_reader_close(r);
    return rc < 0 ? -1 : 0;
}

int rs_pairs_read_tsv(const char *path, int swap, rs_pairs *out, rs_error *err)
{
    return rs_pairs_read_tsv_lenient(path, swap, NULL, out, err);
}

int rs_pairs_read_tsv_lenient(const char *path, int swap, rs_pairs_skipped *skipped, rs_pairs *out,
                              rs_error *err)
{
    rs_pair_reader r;
    return read_whole(&r, rs_pair_reader_open_tsv(&r, path, swap, 0, err), skipped, out, err);
}

int rs_pair_reader_open_tsv(rs_pair_reader *r, const char *path, int swap, int empty_target,
                            rs_error *err)
{
    memset(r, 0, sizeof *r);
    r->swap = swap, r->empty_target = empty_target;
    return rs_line_reader_open(&r->tsv, path, err);
}

int rs_pair_reader_open_parallel(rs_pair_reader *r, const char *src_path, const char *tgt_path,
                                 int empty_target, rs_error *err)
{
    memset(r, 0, sizeof *r);
    r->parallel = 1, r->empty_target = empty_target;
    if (!strcmp(src_path, "-") && !strcmp(tgt_path, "-"))
        return rs_fail(err, "cannot read both sides of a parallel corpus from stdin");
    if (rs_line_reader_open(&r->tsv, src_path, err))
        return -1;
    if (rs_line_reader_open(&r->tgt, tgt_path, err)) {
        rs_line_reader_close(&r->tsv);
        return -1;
    }
    return 0;
}

/* The lines left in a reader after its last one read, counted (for the
 * message of files of unequal length); -1 on a read error. */
static long lines_left(rs_line_reader *lr, rs_error *err)
{
    char *line;
    size_t len;
    long n = 0;
    int rc;
    while ((rc = rs_line_reader_next(lr, &line, &len, err)) == 1)
        n++;
    return rc < 0 ? -1 : n;
}

/* The error for a blank line of the parallel files (of the source when
 * in_src). Files of unequal length are named instead, having been read to
 * their ends: that misalignment explains any empty line it makes. */
static int refuse_blank(rs_pair_reader *r, int in_src, size_t len, rs_error *err)
{
    const long src_line = r->tsv.line, tgt_line = r->tgt.line;
    const long src_more = lines_left(&r->tsv, err);
    const long tgt_more = src_more < 0 ? -1 : lines_left(&r->tgt, err);
    if (tgt_more < 0)
        return -1;
    const long src_count = src_line + src_more, tgt_count = tgt_line + tgt_more;
    if (src_count != tgt_count)
        return rs_fail(err, "%s has %ld line%s but %s has %ld", r->tsv.name, src_count,
                       RS_S(src_count), r->tgt.name, tgt_count);
    return rs_fail(err, "%s:%ld: %s", in_src ? r->tsv.name : r->tgt.name,
                   in_src ? src_line : tgt_line,
                   len ? "the line is only white space" : "empty line");
}

/* One pair of the parallel files into out: 1, 0 at their end, -1. */
static int next_parallel_pair(rs_pair_reader *r, rs_pairs_skipped *skipped, rs_pairs *out,
                              rs_error *err)
{
    char *src, *tgt;
    size_t src_len, tgt_len;
    const int a = rs_line_reader_next(&r->tsv, &src, &src_len, err);
    if (a < 0)
        return -1;
    /* The source line is copied: the target's reader is another buffer, but a
     * pair is stored only once both are there. */
    char *src_copy = a ? copy_bytes(src, src_len) : NULL;
    if (a && !src_copy)
        return rs_fail(err, "%s:%ld: out of memory", r->tsv.name, r->tsv.line);
    const int b = rs_line_reader_next(&r->tgt, &tgt, &tgt_len, err);
    int rc = b < 0 ? -1 : 0;
    if (!rc && a != b) {
        /* Counting the longer file's rest moves its line number to its end. */
        rc = lines_left(a ? &r->tsv : &r->tgt, err) < 0
                 ? -1
                 : rs_fail(err, "%s has %ld line%s but %s has %ld", r->tsv.name, r->tsv.line,
                           RS_S(r->tsv.line), r->tgt.name, r->tgt.line);
    }
    if (!rc && a) {
        /* With empty targets, an empty source too when its target is empty
         * (the empty translation of an empty line, as translate gives it). */
        const int tgt_blank = rs_text_is_blank(tgt, tgt_len),
                  blank_src =
                      rs_text_is_blank(src_copy, src_len) && !(r->empty_target && tgt_blank),
                  blank_tgt = !r->empty_target && tgt_blank;
        if ((blank_src || blank_tgt) && skipped)
            rc = skip_pair(skipped, blank_src ? r->tsv.name : r->tgt.name,
                           blank_src ? r->tsv.line : r->tgt.line)
                     ? -1
                     : 1; /* a pair read, left out */
        else if (blank_src || blank_tgt)
            rc = refuse_blank(r, blank_src, blank_src ? src_len : tgt_len, err);
        else
            rc = push_pair(out, src_copy, src_len, tgt, tgt_len, r->tsv.name, err) ? -1 : 1;
    }
    free(src_copy);
    return rc;
}

int rs_pair_reader_read(rs_pair_reader *r, int max, rs_pairs_skipped *skipped, rs_pairs *out,
                        rs_error *err)
{
    const int before = out->count;
    if (!before)
        out->first = r->pairs;
    while (out->count - before < max) {
        int rc;
        if (r->parallel) {
            rc = next_parallel_pair(r, skipped, out, err);
        } else {
            char *line;
            size_t len;
            rc = rs_line_reader_next(&r->tsv, &line, &len, err);
            if (rc == 1 &&
                add_tsv_line(out, line, len, r->swap, r->empty_target, &r->tsv, skipped, err))
                rc = -1;
        }
        if (rc < 0) {
            rs_pairs_free(out);
            return -1;
        }
        if (rc == 0)
            break;
    }
    r->pairs += out->count - before;
    return out->count - before;
}

int rs_pair_reader_ready(const rs_pair_reader *r)
{
    return rs_line_reader_ready(&r->tsv) && (!r->parallel || rs_line_reader_ready(&r->tgt));
}

int rs_pair_reader_chunk(rs_pair_reader *r, int max, rs_pairs *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    int n = 0, got;
    while ((got = rs_pair_reader_read(r, 1, NULL, out, err)) == 1 && ++n < max &&
           rs_pair_reader_ready(r))
        ;
    return got < 0 ? -1 : n;
}

void rs_pair_reader_close(rs_pair_reader *r)
{
    rs_line_reader_close(&r->tsv);
    if (r->parallel)
        rs_line_reader_close(&r->tgt);
}

int rs_pairs_read_parallel(const char *src_path, const char *tgt_path, rs_pairs *out, rs_error *err)
{
    return rs_pairs_read_parallel_lenient(src_path, tgt_path, NULL, out, err);
}

int rs_pairs_read_parallel_lenient(const char *src_path, const char *tgt_path,
                                   rs_pairs_skipped *skipped, rs_pairs *out, rs_error *err)
{
    rs_pair_reader r;
    return read_whole(&r, rs_pair_reader_open_parallel(&r, src_path, tgt_path, 0, err), skipped,
                      out, err);
}
