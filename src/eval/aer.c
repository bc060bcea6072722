/* Alignment error rate against sure and possible gold links (aer.h). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/aer.h"
#include "text/corpus.h"

static int link_order(const void *pa, const void *pb)
{
    const rs_link *a = pa, *b = pb;
    if (a->tgt != b->tgt)
        return (a->tgt > b->tgt) - (a->tgt < b->tgt);
    return (a->src > b->src) - (a->src < b->src);
}

void rs_gold_links_free(rs_gold_links *g)
{
    free(g->links);
    free(g->sure);
    memset(g, 0, sizeof *g);
}

/* One index: digits only, at most 9 of them. */
static int read_index(const char **p, int *out)
{
    const char *s = *p;
    long v = 0;
    int n = 0;
    while (isdigit((unsigned char)s[n]) && n < 9)
        v = 10 * v + (s[n++] - '0');
    if (n == 0 || isdigit((unsigned char)s[n]))
        return -1;
    *out = (int)v;
    *p = s + n;
    return 0;
}

/* A parsed link and whether it is sure, sorted together. */
typedef struct {
    rs_link l;
    int sure;
} marked_link;

static int marked_order(const void *pa, const void *pb)
{
    return link_order(&((const marked_link *)pa)->l, &((const marked_link *)pb)->l);
}

int rs_gold_links_parse(const char *line, rs_gold_links *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    size_t cap = strlen(line) / 3 + 1; /* a link takes at least 3 bytes */
    marked_link *m = rs_calloc(cap, sizeof *m, err);
    if (!m)
        return -1;
    int n = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            break;
        const char *start = p;
        int i = 0, j = 0;
        char sep = 0;
        if (read_index(&p, &i) == 0 && (*p == '-' || *p == '?'))
            sep = *p++;
        if (!sep || read_index(&p, &j) || !strchr(" \t\r\n", *p)) {
            int len = (int)strcspn(start, " \t\r\n");
            free(m);
            return rs_fail(err,
                           "column %d: '%.*s' is not a link (source-target indices from 0, "
                           "'i-j' sure or 'i?j' possible)",
                           (int)(start - line) + 1, len > 40 ? 40 : len, start);
        }
        m[n++] = (marked_link){{i, j}, sep == '-'};
    }
    qsort(m, (size_t)n, sizeof *m, marked_order);
    out->links = rs_calloc((size_t)n + 1, sizeof *out->links, err);
    out->sure = rs_calloc((size_t)n + 1, 1, err);
    if (!out->links || !out->sure) {
        rs_gold_links_free(out);
        free(m);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        if (out->count > 0 && !link_order(&out->links[out->count - 1], &m[k].l)) {
            out->sure[out->count - 1] |= (char)m[k].sure; /* a link given twice */
            continue;
        }
        out->links[out->count] = m[k].l;
        out->sure[out->count++] = (char)m[k].sure;
    }
    free(m);
    return 0;
}

int rs_aer_add(rs_aer_counts *c, const rs_link *hyp, int n_hyp, const rs_gold_links *gold,
               rs_error *err)
{
    rs_link *a = rs_calloc((size_t)n_hyp + 1, sizeof *a, err);
    if (!a)
        return -1;
    memcpy(a, hyp, sizeof *a * (size_t)n_hyp);
    qsort(a, (size_t)n_hyp, sizeof *a, link_order);
    for (int k = 0; k < n_hyp; k++) {
        if (k > 0 && !link_order(&a[k - 1], &a[k]))
            continue;
        c->hyp++;
        const rs_link *g = bsearch(&a[k], gold->links, (size_t)gold->count, sizeof *g, link_order);
        if (g) {
            c->hyp_possible++; /* S ⊆ P */
            c->hyp_sure += gold->sure[g - gold->links];
        }
    }
    for (int k = 0; k < gold->count; k++)
        c->sure += gold->sure[k];
    c->possible += gold->count;
    c->sentences++;
    free(a);
    return 0;
}

void rs_aer_compute(const rs_aer_counts *c, rs_aer_result *r)
{
    r->precision = c->hyp ? (double)c->hyp_possible / (double)c->hyp : NAN;
    r->recall = c->sure ? (double)c->hyp_sure / (double)c->sure : NAN;
    r->aer = c->hyp + c->sure
                 ? 1.0 - (double)(c->hyp_sure + c->hyp_possible) / (double)(c->hyp + c->sure)
                 : NAN;
}

/* Line `line` (0-based) of path into g; errors name the file and line. */
static int parse_line(const char *path, const rs_lines *lines, int line, rs_gold_links *g,
                      rs_error *err)
{
    rs_error why;
    if (rs_gold_links_parse(lines->lines[line], g, &why))
        return rs_fail(err, "%s:%d: %s", path, line + 1, why.msg);
    return 0;
}

/* Every line's links added to counts. */
static int count_lines(const char *gold_path, const rs_lines *gold, const char *hyp_path,
                       const rs_lines *hyp, rs_aer_counts *counts, rs_error *err)
{
    for (int i = 0; i < gold->count; i++) {
        rs_gold_links g, h;
        if (parse_line(gold_path, gold, i, &g, err))
            return -1;
        if (parse_line(hyp_path, hyp, i, &h, err)) {
            rs_gold_links_free(&g);
            return -1;
        }
        int rc = rs_aer_add(counts, h.links, h.count, &g, err);
        rs_gold_links_free(&g);
        rs_gold_links_free(&h);
        if (rc)
            return -1;
    }
    return 0;
}

int rs_aer_files(const char *gold_path, const char *hyp_path, rs_aer_counts *counts, rs_error *err)
{
    rs_lines gold = {0}, hyp = {0};
    int status = -1;
    memset(counts, 0, sizeof *counts);
    if (rs_lines_read(gold_path, &gold, err) || rs_lines_read(hyp_path, &hyp, err))
        goto done;
    if (gold.count != hyp.count) {
        rs_fail(err, "%s has %d line%s but %s has %d: one line of links per sentence in both",
                gold_path, gold.count, RS_S(gold.count), hyp_path, hyp.count);
        goto done;
    }
    if (count_lines(gold_path, &gold, hyp_path, &hyp, counts, err))
        goto done;
    if (counts->sure == 0) {
        rs_fail(err, "%s has no sure links: nothing to measure recall and AER on", gold_path);
        goto done;
    }
    status = 0;
done:
    rs_lines_free(&gold);
    rs_lines_free(&hyp);
    return status;
}
