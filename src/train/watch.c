/* The watched sentences' alignments at every evaluation, and the dev AER
 * (watch.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fault.h"
#include "eval/alignment.h"
#include "search/forced.h"
#include "search/translate.h"
#include "text/corpus.h"
#include "train/rundir.h"
#include "train/watch.h"

void rs_watch_free(rs_watch *w)
{
    for (int k = 0; k < w->count; k++) {
        free(w->source[k]);
        free(w->target[k]);
    }
    free(w->source);
    free(w->target);
    for (int k = 0; k < w->gold_count; k++)
        rs_gold_links_free(&w->gold[k]);
    free(w->gold);
    memset(w, 0, sizeof *w);
}

static int watch_alloc(rs_watch *w, int n, rs_error *err)
{
    w->source = rs_calloc((size_t)n + 1, sizeof *w->source, err);
    w->target = rs_calloc((size_t)n + 1, sizeof *w->target, err);
    return w->source && w->target ? 0 : -1;
}

int rs_watch_read_file(rs_watch *w, const char *path, rs_error *err)
{
    rs_lines lines;
    if (rs_lines_read(path, &lines, err))
        return -1;
    int status = watch_alloc(w, lines.count, err);
    for (int i = 0; i < lines.count && status == 0; i++) {
        char *line = lines.lines[i], *tab = strchr(line, '\t');
        if (tab)
            *tab = '\0';
        if (strspn(line, " \t\r") == strlen(line)) {
            if (tab)
                status = rs_fail(err, "%s:%d: the source (before the tab) is empty", path, i + 1);
            continue;
        }
        if (tab && strchr(tab + 1, '\t')) {
            status =
                rs_fail(err, "%s:%d: more than one tab (lines are SOURCE or SOURCE<TAB>TARGET)",
                        path, i + 1);
            break;
        }
        if (!(w->source[w->count] = rs_strdup(line, err)) ||
            (tab && tab[1] && !(w->target[w->count] = rs_strdup(tab + 1, err))))
            status = -1;
        w->count++;
    }
    if (status == 0 && w->count == 0)
        status = rs_fail(err, "%s: no sentences to watch", path);
    rs_lines_free(&lines);
    return status;
}

int rs_watch_from_pairs(rs_watch *w, char *const *src, char *const *tgt, int n, int count,
                        rs_error *err)
{
    if (n > count)
        n = count;
    if (watch_alloc(w, n, err))
        return -1;
    w->dev_pairs = 1;
    for (; w->count < n; w->count++)
        if (!(w->source[w->count] = rs_strdup(src[w->count], err)) ||
            !(w->target[w->count] = rs_strdup(tgt[w->count], err)))
            return -1;
    return 0;
}

int rs_watch_read_gold(rs_watch *w, const char *path, int pairs, rs_error *err)
{
    rs_lines lines;
    if (rs_lines_read(path, &lines, err))
        return -1;
    int status = 0;
    if (lines.count != pairs)
        status = rs_fail(err, "%s has %d line%s of gold links but the dev set has %d pair%s", path,
                         lines.count, RS_S(lines.count), pairs, RS_S(pairs));
    else if (!(w->gold = rs_calloc((size_t)pairs + 1, sizeof *w->gold, err)))
        status = -1;
    for (int i = 0; i < lines.count && status == 0; i++) {
        rs_error e;
        if (rs_gold_links_parse(lines.lines[i], &w->gold[i], &e))
            status = rs_fail(err, "%s:%d: %s", path, i + 1, e.msg);
        else
            w->gold_count++;
    }
    rs_lines_free(&lines);
    return status;
}

/* "gold":{"sure":[[src,tgt],…],"possible":[…]}, (Pharaoh's order, 0-based,
 * the indices of the record's words), or nothing when gold is NULL. */
static void write_gold(FILE *out, const rs_gold_links *gold)
{
    if (!gold)
        return;
    fputs("\"gold\":{", out);
    for (int sure = 1; sure >= 0; sure--) {
        fputs(sure ? "\"sure\":[" : ",\"possible\":[", out);
        for (int k = 0, n = 0; k < gold->count; k++)
            if (gold->sure[k] == sure)
                fprintf(out, "%s[%d,%d]", n++ ? "," : "", gold->links[k].src, gold->links[k].tgt);
        putc(']', out);
    }
    fputs("},", out);
}

/* One record: the alignment's JSON object (alignment.h) with the step, epoch,
 * sentence and kind put in front, so that every line starts {"step":N, and
 * the gold links of a forced record when the sentence is a dev pair that has
 * them. SentencePiece pieces are merged into words (as `align --words`), the
 * words the gold links count. */
typedef struct {
    int64_t step;
    int epoch;
    int sentence;     /* the watched sentence, from 0 */
    const char *kind; /* "greedy" or "forced" */
} record_head;

static int write_record(FILE *out, const record_head *head, const rs_gold_links *gold,
                        const rs_alignment *pieces, int merge, rs_error *err)
{
    rs_alignment words;
    if (merge && rs_alignment_to_words(pieces, &words, err))
        return -1;
    const rs_alignment *a = merge ? &words : pieces;
    char *json = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&json, &len);
    if (!mem) {
        if (merge)
            rs_alignment_free(&words);
        return rs_fail(err, "out of memory writing %s", RS_WATCH_FILE);
    }
    int bad = rs_alignment_write_json(mem, a, head->sentence); /* id = sentence, from 0 */
    if (merge)
        rs_alignment_free(&words);
    if (fclose(mem) || bad || len < 2) {
        free(json);
        return rs_fail(err, "out of memory writing %s", RS_WATCH_FILE);
    }
    fprintf(out, "{\"step\":%lld,\"epoch\":%d,\"sentence\":%d,\"kind\":\"%s\",",
            (long long)head->step, head->epoch, head->sentence, head->kind);
    write_gold(out, gold);
    fputs(json + 1, out);
    free(json);
    return 0;
}

/* The greedy translation's and the forced alignment of every watched sentence. */
static int write_records(FILE *out, const rs_watch *w, const rs_model *model, int64_t step,
                         int epoch, rs_error *err)
{
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.want_alignment = 1;
    opt.batch_size = w->count;
    rs_translator tr;
    const rs_ready plain = rs_ready_plain(model), *members[1] = {&plain};
    rs_translated *t = rs_calloc((size_t)w->count, sizeof *t, err);
    if (!t || rs_translator_init(&tr, members, 1, w->codec, &opt, err)) {
        free(t);
        return -1;
    }
    const int merge = model->cfg.tokenizer == RS_TOKENIZER_SPM;
    int status = rs_translate_lines(&tr, w->count, (const char *const *)w->source, t, err);
    rs_translator_free(&tr);
    for (int k = 0; k < w->count && status == 0; k++) {
        const rs_hypothesis *h = &t[k].hyps[0];
        rs_alignment a;
        if (t[k].count > 0 && h->alignment) {
            if (rs_alignment_make(&a, (const char *const *)h->tokens, h->count,
                                  (const char *const *)t[k].source_tokens, t[k].source_count,
                                  h->alignment, err))
                status = -1;
            else {
                const record_head head = {step, epoch, k, "greedy"};
                status = write_record(out, &head, NULL, &a, merge, err);
                rs_alignment_free(&a);
            }
        }
        if (status || !w->target[k])
            continue;
        const rs_forced_pair pair = {w->source[k], w->target[k], opt.max_src_len,
                                     RS_FORCED_ALIGNMENT};
        rs_forced f = {0};
        rs_tokens src = {0}, tgt = {0};
        if (rs_forced_text(members, 1, w->codec, &pair, &f, &src, &tgt, err))
            status = -1;
        else if (f.alignment &&
                 !(status = rs_alignment_make(&a, (const char *const *)tgt.tokens, f.tgt_len,
                                              (const char *const *)src.tokens, f.src_len,
                                              f.alignment, err))) {
            /* Watched dev pair k has gold line k (rs_watch_from_pairs). */
            const rs_gold_links *gold = w->dev_pairs && k < w->gold_count ? &w->gold[k] : NULL;
            const record_head head = {step, epoch, k, "forced"};
            status = write_record(out, &head, gold, &a, merge, err);
            rs_alignment_free(&a);
        }
        rs_forced_free(&f);
        rs_tokens_free(&src);
        rs_tokens_free(&tgt);
    }
    for (int k = 0; k < w->count; k++)
        rs_translated_free(&t[k]);
    free(t);
    return status;
}

/* Appends the records of one evaluation in one write, then syncs: a reader
 * sees the whole of them or none of the last line. */
static int record(const rs_watch *w, const rs_model *model, const char *dir, int64_t step,
                  int epoch, rs_error *err)
{
    if (!w || w->count == 0)
        return 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return rs_fail(err, "out of memory writing %s", RS_WATCH_FILE);
    int status = write_records(mem, w, model, step, epoch, err);
    if (fclose(mem) && status == 0)
        status = rs_fail(err, "out of memory writing %s", RS_WATCH_FILE);
    char path[4200];
    snprintf(path, sizeof path, "%s/" RS_WATCH_FILE, dir);
    int fd = status ? -1 : open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (status == 0 && fd < 0)
        status = rs_fail(err, "%s: cannot open for appending: %s", path, strerror(errno));
    for (size_t done = 0; status == 0 && done < len;) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            status = rs_fail(err, "%s: write failed: %s", path, strerror(errno));
        else
            done += (size_t)n;
    }
    if (status == 0 && fsync(fd))
        status = rs_fail(err, "%s: cannot sync: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(buf);
    if (status == 0)
        rs_fault_point("watch");
    return status;
}

int rs_watch_start(const rs_watch *w, const rs_model *model, const char *dir, int64_t step,
                   rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/" RS_WATCH_FILE, dir);
    /* From step 0 the untrained model's records are written again. */
    if (rs_rundir_truncate_rows(path, 0, "{\"step\":", step > 0 ? step : -1, err))
        return -1;
    return step == 0 ? record(w, model, dir, 0, 0, err) : 0;
}

/* Corpus AER of the dev pairs' forced alignments (argmax or threshold links,
 * SentencePiece pieces merged into the words the gold links count). */
static int dev_aer(const rs_watch *w, const rs_model *model, const rs_dataset *dev,
                   rs_train_event *ev, rs_error *err)
{
    const rs_ready plain = rs_ready_plain(model), *members[1] = {&plain};
    rs_forced *f = rs_calloc((size_t)dev->count + 1, sizeof *f, err);
    if (!f ||
        rs_forced_decode(members, 1, dev, model->train.batch_size, RS_FORCED_ALIGNMENT, f, err)) {
        free(f);
        return -1;
    }
    const int pieces = model->cfg.tokenizer == RS_TOKENIZER_SPM;
    rs_aer_counts counts = {0};
    int status = 0;
    for (int i = 0; i < dev->count && status == 0; i++) {
        const char **src = rs_calloc((size_t)f[i].src_len + 1, sizeof *src, err);
        const char **tgt = rs_calloc((size_t)f[i].tgt_len + 1, sizeof *tgt, err);
        rs_alignment a = {0}, words = {0};
        rs_link *links = NULL;
        int n = 0;
        if (!src || !tgt)
            status = -1;
        for (int j = 0; status == 0 && j < f[i].src_len; j++)
            src[j] = model->src_vocab.tokens[dev->src[i][j]];
        for (int j = 0; status == 0 && j < f[i].tgt_len; j++)
            tgt[j] = model->tgt_vocab.tokens[dev->tgt[i][j]];
        if (status == 0 &&
            (rs_alignment_make(&a, tgt, f[i].tgt_len, src, f[i].src_len, f[i].alignment, err) ||
             (pieces && rs_alignment_to_words(&a, &words, err))))
            status = -1;
        const rs_alignment *use = pieces ? &words : &a;
        if (status == 0 &&
            (rs_alignment_hard(use->w, use->rows, use->cols, w->threshold, &links, &n, err) ||
             rs_aer_add(&counts, links, n, &w->gold[dev->line[i]], err)))
            status = -1;
        free(links);
        rs_alignment_free(&a);
        if (pieces)
            rs_alignment_free(&words);
        free(src);
        free(tgt);
    }
    rs_forced_free_all(f, dev->count);
    rs_aer_result r;
    rs_aer_compute(&counts, &r);
    ev->aer = r.aer;
    ev->align_precision = r.precision;
    ev->align_recall = r.recall;
    return status;
}

int rs_watch_evaluate(const rs_watch *w, const rs_model *model, const rs_dataset *dev,
                      const char *dir, rs_train_event *ev, rs_error *err)
{
    ev->aer = ev->align_precision = ev->align_recall = NAN;
    if (!w)
        return 0;
    if (w->gold && dev && dev->count > 0 && dev_aer(w, model, dev, ev, err))
        return -1;
    return record(w, model, dir, ev->step, ev->epoch, err);
}

int rs_watch_read(const char *path, uint64_t offset, size_t max_bytes, char **data, size_t *len,
                  uint64_t *next, rs_error *err)
{
    *data = NULL;
    *len = 0;
    *next = offset;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT)
            return rs_fail(err, "%s: cannot open: %s", path, strerror(errno));
        return (*data = rs_calloc(1, 1, err)) ? 0 : -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st)) {
        fclose(f);
        return rs_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    }
    /* A file shorter than the offset was truncated (a resumed run): empty. */
    size_t avail = (uint64_t)st.st_size > offset ? (size_t)((uint64_t)st.st_size - offset) : 0;
    size_t want = avail < max_bytes ? avail : max_bytes;
    char *buf = rs_calloc(want + 1, 1, err);
    if (!buf) {
        fclose(f);
        return -1;
    }
    size_t got = 0;
    if (want && !fseeko(f, (off_t)offset, SEEK_SET))
        got = fread(buf, 1, want, f);
    /* Whole lines only; a line longer than max_bytes is read whole. */
    size_t keep = got;
    while (keep > 0 && buf[keep - 1] != '\n')
        keep--;
    if (keep == 0 && got == max_bytes && avail > max_bytes) {
        int c;
        size_t cap = got + 1;
        while ((c = getc(f)) != EOF) {
            if (got + 1 >= cap) {
                char *grown = realloc(buf, cap *= 2);
                if (!grown) {
                    free(buf);
                    fclose(f);
                    return rs_fail(err, "%s: out of memory reading a line", path);
                }
                buf = grown;
            }
            buf[got++] = (char)c;
            if (c == '\n') {
                keep = got;
                break;
            }
        }
    }
    fclose(f);
    buf[keep] = '\0';
    *data = buf;
    *len = keep;
    *next = offset + keep;
    return 0;
}
