#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "search/lexicon.h"
#include "text/corpus.h"

void rs_lexicon_free(rs_lexicon *lex)
{
    free(lex->start);
    free(lex->tgt);
    free(lex->prob);
    memset(lex, 0, sizeof *lex);
}

static int compare_keys(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static size_t sort_unique(uint64_t *keys, size_t n)
{
    qsort(keys, n, sizeof *keys, compare_keys);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || keys[i] != keys[kept - 1])
            keys[kept++] = keys[i];
    return kept;
}

/* Every (s, t) that occur in one pair, s = 0 the NULL word, as sorted unique
 * keys s·Vt + t. Keys are compacted whenever the buffer fills, so memory
 * follows the distinct pairs, not the corpus. */
static int cooccurrences(const rs_dataset *d, int Vt, uint64_t **out, size_t *count, rs_error *err)
{
    size_t cap = (size_t)1 << 20, n = 0;
    uint64_t *keys = rs_calloc(cap, sizeof *keys, err);
    if (!keys)
        return -1;
    for (int i = 0; i < d->count; i++)
        for (int k = -1; k < d->src_len[i]; k++) {
            const uint64_t s = k < 0 ? 0 : (uint64_t)d->src[i][k];
            for (int j = 0; j < d->tgt_len[i]; j++) {
                if (n == cap) {
                    n = sort_unique(keys, n);
                    if (n > cap / 2) {
                        uint64_t *grown = realloc(keys, 2 * cap * sizeof *keys);
                        if (!grown) {
                            free(keys);
                            return rs_fail(err, "out of memory for the lexical table");
                        }
                        keys = grown, cap *= 2;
                    }
                }
                keys[n++] = s * (uint64_t)Vt + (uint64_t)d->tgt[i][j];
            }
        }
    *count = sort_unique(keys, n);
    *out = keys;
    return 0;
}

/* The entry of (s, t) in rows sorted by target id; it exists by construction. */
static int entry_of(const rs_lexicon *lex, int s, int t)
{
    int lo = lex->start[s], hi = lex->start[s + 1] - 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (lex->tgt[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One EM iteration over data (see lexicon.h); at[] scratch of the longest
 * source + 1, counts [entries] and totals [Vs] scratch. */
static void em_iteration(rs_lexicon *lex, const rs_dataset *d, int *at, double *counts,
                         double *totals)
{
    const int entries = lex->start[lex->src_vocab];
    memset(counts, 0, sizeof(double) * (size_t)entries);
    memset(totals, 0, sizeof(double) * (size_t)lex->src_vocab);
    for (int i = 0; i < d->count; i++)
        for (int j = 0; j < d->tgt_len[i]; j++) {
            const int t = d->tgt[i][j];
            double z = 0.0;
            for (int k = 0; k <= d->src_len[i]; k++) {
                at[k] = entry_of(lex, k ? d->src[i][k - 1] : 0, t);
                z += lex->prob[at[k]];
            }
            /* Every p of t underflowed to 0: no count to share (c would be 0/0). */
            if (!(z > 0.0))
                continue;
            for (int k = 0; k <= d->src_len[i]; k++) {
                const double c = lex->prob[at[k]] / z;
                counts[at[k]] += c;
                totals[k ? d->src[i][k - 1] : 0] += c;
            }
        }
    for (int s = 0; s < lex->src_vocab; s++)
        for (int e = lex->start[s]; e < lex->start[s + 1]; e++)
            lex->prob[e] = (float)(counts[e] / totals[s]);
}

typedef struct {
    int tgt;
    float prob;
} entry;

/* Most probable first; ties by target id, so the table is deterministic. */
static int by_prob(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->prob != y->prob)
        return x->prob < y->prob ? 1 : -1;
    return (x->tgt > y->tgt) - (x->tgt < y->tgt);
}

/* Reorders each source's row most probable first and keeps its `keep` best
 * with p ≥ min_prob and p > 0, in place; the NULL word's row is dropped.
 * After many iterations a spurious pair's p underflows to 0 in float: such
 * an entry says nothing, and a table holding it is one translate --shortlist
 * refuses, so it is never kept, whatever min_prob. */
static void keep_best(rs_lexicon *lex, entry *scratch, int keep, float min_prob)
{
    int out = 0;
    for (int s = 0; s < lex->src_vocab; s++) {
        const int lo = lex->start[s], hi = lex->start[s + 1];
        for (int e = lo; e < hi; e++)
            scratch[e - lo] = (entry){lex->tgt[e], lex->prob[e]};
        qsort(scratch, (size_t)(hi - lo), sizeof *scratch, by_prob);
        lex->start[s] = out;
        for (int e = 0; s > 0 && e < hi - lo && e < keep && scratch[e].prob >= min_prob &&
                        scratch[e].prob > 0.0f;
             e++) {
            lex->tgt[out] = scratch[e].tgt;
            lex->prob[out++] = scratch[e].prob;
        }
    }
    lex->start[lex->src_vocab] = out;
}

int rs_lexicon_learn(rs_lexicon *lex, const rs_dataset *data, int Vs, int Vt, int iterations,
                     int keep, float min_prob, rs_error *err)
{
    memset(lex, 0, sizeof *lex);
    uint64_t *keys = NULL;
    size_t n = 0;
    if (cooccurrences(data, Vt, &keys, &n, err))
        return -1;
    if (n > INT32_MAX) {
        free(keys);
        return rs_fail(err, "%zu distinct word pairs: more than a lexical table holds", n);
    }
    int longest = 0;
    for (int i = 0; i < data->count; i++)
        if (data->src_len[i] > longest)
            longest = data->src_len[i];
    lex->src_vocab = Vs, lex->tgt_vocab = Vt;
    lex->start = rs_calloc((size_t)Vs + 1, sizeof(int), err);
    lex->tgt = rs_calloc(n ? n : 1, sizeof(int), err);
    lex->prob = rs_calloc(n ? n : 1, sizeof(float), err);
    double *counts = rs_calloc(n ? n : 1, sizeof(double), err);
    double *totals = rs_calloc((size_t)Vs, sizeof(double), err);
    int *at = rs_calloc((size_t)longest + 1, sizeof(int), err);
    entry *scratch = rs_calloc((size_t)Vt, sizeof(entry), err);
    int status = -1;
    if (!lex->start || !lex->tgt || !lex->prob || !counts || !totals || !at || !scratch)
        goto done;
    for (size_t e = 0; e < n; e++) {
        const int s = (int)(keys[e] / (uint64_t)Vt);
        lex->start[s + 1]++;
        lex->tgt[e] = (int)(keys[e] % (uint64_t)Vt);
        lex->prob[e] = 1.0f; /* uniform: the first iteration counts co-occurrences */
    }
    for (int s = 0; s < Vs; s++)
        lex->start[s + 1] += lex->start[s];
    for (int it = 0; it < iterations; it++)
        em_iteration(lex, data, at, counts, totals);
    keep_best(lex, scratch, keep, min_prob);
    status = 0;
done:
    free(keys);
    free(counts);
    free(totals);
    free(at);
    free(scratch);
    if (status)
        rs_lexicon_free(lex);
    return status;
}

void rs_lexicon_write(const rs_lexicon *lex, const rs_vocab *src, const rs_vocab *tgt, FILE *out,
                      int *errnum)
{
    for (int s = 0; s < lex->src_vocab; s++)
        for (int e = lex->start[s]; e < lex->start[s + 1]; e++)
            if (fprintf(out, "%s\t%s\t%.6g\n", src->tokens[s], tgt->tokens[lex->tgt[e]],
                        (double)lex->prob[e]) < 0 &&
                !*errnum)
                *errnum = errno ? errno : EIO;
}

typedef struct {
    int src, tgt;
    float prob;
} triple;

/* By source, then most probable first, then by target id. */
static int by_source(const void *a, const void *b)
{
    const triple *x = a, *y = b;
    if (x->src != y->src)
        return x->src - y->src;
    if (x->prob != y->prob)
        return x->prob < y->prob ? 1 : -1;
    return x->tgt - y->tgt;
}

/* The id of token in vocab, or -1 when it has none (<unk> itself has one). */
static int token_id(const rs_vocab *vocab, const char *token)
{
    const int id = rs_vocab_id(vocab, token);
    return id == RS_UNK && strcmp(token, rs_vocab_reserved(RS_UNK)) ? -1 : id;
}

/* Line `line` of path: "source TAB target TAB p" into *t. */
static int parse_line(char *text, const char *path, long line, const rs_vocab *src,
                      const rs_vocab *tgt, triple *t, rs_error *err)
{
    char *tab1 = strchr(text, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (!tab2 || strchr(tab2 + 1, '\t'))
        return rs_fail(err,
                       "%s:%ld: expected three tab-separated fields (source token, target "
                       "token, probability)",
                       path, line);
    *tab1 = *tab2 = 0;
    char *end;
    errno = 0;
    const double p = strtod(tab2 + 1, &end);
    /* In float too: 1e-50 is in (0, 1] but would be held as 0. */
    if (end == tab2 + 1 || *end || errno || !(p > 0.0 && p <= 1.0) || !((float)p > 0.0f))
        return rs_fail(err, "%s:%ld: '%s' is not a probability in (0, 1]", path, line, tab2 + 1);
    t->src = token_id(src, text);
    t->tgt = token_id(tgt, tab1 + 1);
    if (t->src < 0 || t->tgt < 0)
        return rs_fail(err,
                       "%s:%ld: the %s token '%s' is not in the model's vocabulary (a lexical "
                       "table is made for one model: rnnsearch lexicon -m MODEL)",
                       path, line, t->src < 0 ? "source" : "target", t->src < 0 ? text : tab1 + 1);
    t->prob = (float)p;
    return 0;
}

/* All lines of path, as triples, by the reader of every text input
 * (rs_line_reader: line ends \n, \r\n and a lone \r, a byte order mark
 * dropped, NUL bytes, invalid UTF-8 and lines over RS_LINE_MAX_BYTES refused
 * by line as they arrive, so /dev/zero or a file without line ends is not
 * held whole; gzip read). */
static int read_triples(const char *path, const rs_vocab *src, const rs_vocab *tgt, triple **out,
                        size_t *count, rs_error *err)
{
    *out = NULL;
    *count = 0;
    rs_line_reader lr;
    if (rs_line_reader_open(&lr, path, err))
        return -1;
    size_t n = 0, cap = 0;
    triple *all = NULL;
    int status = -1;
    for (;;) {
        char *text;
        size_t len;
        const int got = rs_line_reader_next(&lr, &text, &len, err);
        if (got < 0)
            goto done;
        if (got == 0)
            break;
        if (n == cap) {
            triple *grown = realloc(all, (cap = cap ? 2 * cap : 4096) * sizeof *all);
            if (!grown) {
                rs_fail(err, "%s: out of memory", lr.name);
                goto done;
            }
            all = grown;
        }
        if (parse_line(text, lr.name, lr.line, src, tgt, &all[n], err))
            goto done;
        n++;
    }
    status = 0;
done:
    rs_line_reader_close(&lr);
    if (status)
        free(all);
    *out = status ? NULL : all;
    *count = n;
    return status;
}

int rs_lexicon_read(rs_lexicon *lex, const char *path, const rs_vocab *src, const rs_vocab *tgt,
                    rs_error *err)
{
    memset(lex, 0, sizeof *lex);
    triple *all = NULL;
    size_t n = 0;
    if (read_triples(path, src, tgt, &all, &n, err))
        return -1;
    if (n == 0) {
        free(all);
        return rs_fail(err, "%s: no entries (an empty lexical table shortlists nothing)", path);
    }
    if (n > INT32_MAX) {
        free(all);
        return rs_fail(err, "%s: more entries than a lexical table holds", path);
    }
    qsort(all, n, sizeof *all, by_source);
    lex->src_vocab = src->size, lex->tgt_vocab = tgt->size;
    lex->start = rs_calloc((size_t)src->size + 1, sizeof(int), err);
    lex->tgt = rs_calloc(n, sizeof(int), err);
    lex->prob = rs_calloc(n, sizeof(float), err);
    if (!lex->start || !lex->tgt || !lex->prob) {
        free(all);
        rs_lexicon_free(lex);
        return -1;
    }
    for (size_t e = 0; e < n; e++) {
        lex->start[all[e].src + 1]++;
        lex->tgt[e] = all[e].tgt;
        lex->prob[e] = all[e].prob;
    }
    for (int s = 0; s < src->size; s++)
        lex->start[s + 1] += lex->start[s];
    free(all);
    return 0;
}

int rs_shortlist_select(const rs_shortlist *sl, int B, const int *const *src, const int *src_count,
                        unsigned char *mark, int *ids)
{
    const rs_lexicon *lex = sl->lex;
    const int V = lex->tgt_vocab;
    for (int v = 0; v < V && v < RS_RESERVED + sl->first; v++)
        mark[v] = 1;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < src_count[b]; j++) {
            const int s = src[b][j];
            if (s < 0 || s >= lex->src_vocab)
                continue;
            const int lo = lex->start[s], hi = lex->start[s + 1];
            for (int e = lo; e < hi && e < lo + sl->best; e++)
                mark[lex->tgt[e]] = 1;
        }
    int count = 0;
    for (int v = 0; v < V; v++)
        if (mark[v]) {
            ids[count++] = v;
            mark[v] = 0;
        }
    return count;
}

int rs_shortlist_parse(const char *arg, char *path, size_t size, rs_shortlist *sl, rs_error *err)
{
    const char *comma = strchr(arg, ',');
    const size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
    if (len == 0 || len >= size)
        return rs_fail(err, "give FILE[,FIRST[,BEST]]");
    memcpy(path, arg, len);
    path[len] = 0;
    sl->first = sl->best = 100;
    int *sizes[] = {&sl->first, &sl->best};
    for (int k = 0; comma && k < 2; k++) {
        char *end;
        const long v = strtol(comma + 1, &end, 10);
        if (end == comma + 1 || (*end && *end != ',') || !rs_config_plain_number(comma + 1) ||
            v < 0 || v > 10000000 || (k == 1 && *end))
            return rs_fail(err,
                           "'%s' is not FILE[,FIRST[,BEST]] with FIRST and BEST whole numbers "
                           "from 0 to 10000000",
                           arg);
        *sizes[k] = (int)v;
        comma = *end ? end : NULL;
    }
    if (sl->first == 0 && sl->best == 0)
        return rs_fail(err,
                       "'%s' lists no word (FIRST and BEST both 0): every translation would be "
                       "empty",
                       arg);
    return 0;
}
