/* Corpus BLEU as sacreBLEU 2.x computes it (see bleu.h); the segment's
 * units and n-gram spans are segments.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/segments.h"

/* ---- BLEU -------------------------------------------------------------- */

void rs_bleu_stats_init(rs_bleu_stats *stats)
{
    memset(stats, 0, sizeof *stats);
}

int rs_bleu_stats_add(rs_bleu_stats *stats, const char *hyp, const char *const *refs, int nrefs,
                      const rs_bleu_opts *opts, rs_error *err)
{
    if (!(opts = rs_segment_begin(stats, hyp, refs, nrefs, opts, err)))
        return -1;
    int rc = -1;
    char name[32];
    rs_span *spans = NULL;
    rs_units h;
    rs_units *r = rs_calloc((size_t)nrefs, sizeof *r, err);
    if (!r)
        return -1;
    if (rs_bleu_units(&h, hyp, "the hypothesis", opts, err) < 0)
        goto done;
    size_t nspans = rs_spans_count(&h, RS_BLEU_ORDER);
    /* closest reference length; on a tie the shorter one */
    long long closest = -1, closest_diff = -1;
    for (int i = 0; i < nrefs; i++) {
        if (!refs[i][0])
            continue;
        if (rs_bleu_units(&r[i], refs[i], rs_segment_ref_name(name, i), opts, err) < 0)
            goto done;
        nspans += rs_spans_count(&r[i], RS_BLEU_ORDER);
        long long len = r[i].n, diff = llabs((long long)h.n - len);
        if (closest_diff < 0 || diff < closest_diff || (diff == closest_diff && len < closest)) {
            closest_diff = diff;
            closest = len;
        }
    }
    spans = rs_calloc(nspans, sizeof *spans, err);
    if (!spans)
        goto done;
    size_t m = rs_spans_add(spans, &h, RS_BLEU_ORDER, 1, 0);
    for (int i = 0; i < nrefs; i++)
        if (refs[i][0])
            m += rs_spans_add(spans + m, &r[i], RS_BLEU_ORDER, 1, i + 1);
    qsort(spans, m, sizeof *spans, rs_span_cmp);
    /* Per distinct n-gram: its hypothesis count h, clipped by the largest
     * count m in any one reference (spans of one source are adjacent). */
    long long correct[RS_BLEU_ORDER] = {0};
    for (size_t g = 0; g < m;) {
        size_t e = g;
        long long hc = 0, best = 0, run = 0;
        int run_src = -1;
        for (; e < m && rs_span_cmp_key(&spans[g], &spans[e]) == 0; e++) {
            if (spans[e].src == 0) {
                hc++;
                continue;
            }
            run = spans[e].src == run_src ? run + 1 : 1;
            run_src = spans[e].src;
            if (run > best)
                best = run;
        }
        correct[spans[g].order - 1] += hc < best ? hc : best;
        g = e;
    }
    for (int n = 0; n < RS_BLEU_ORDER; n++) {
        stats->correct[n] += correct[n];
        if (h.n > n)
            stats->total[n] += h.n - n;
    }
    stats->hyp_len += h.n;
    stats->ref_len += closest;
    stats->segments++;
    rc = 0;
done:
    free(spans);
    rs_units_free(&h);
    for (int i = 0; i < nrefs; i++)
        rs_units_free(&r[i]);
    free(r);
    return rc;
}

/* sacreBLEU's BLEU.compute_bleu with smooth_method "exp" and no effective
 * order, operation for operation, so the double results agree bit for bit. */
void rs_bleu_compute(const rs_bleu_stats *stats, rs_bleu_result *res)
{
    rs_bleu_compute_order(stats, 0, res);
}

void rs_bleu_compute_order(const rs_bleu_stats *stats, int effective_order, rs_bleu_result *res)
{
    memset(res, 0, sizeof *res);
    long long sys_len = stats->hyp_len, ref_len = stats->ref_len;
    res->hyp_len = sys_len;
    res->ref_len = ref_len;
    res->ratio = ref_len ? (double)sys_len / (double)ref_len : 0.0;
    memcpy(res->correct, stats->correct, sizeof res->correct);
    memcpy(res->total, stats->total, sizeof res->total);
    if (sys_len < ref_len)
        res->bp = sys_len > 0 ? exp(1.0 - (double)ref_len / (double)sys_len) : 0.0;
    else
        res->bp = 1.0;

    int any = 0;
    for (int n = 0; n < RS_BLEU_ORDER; n++)
        any |= stats->correct[n] != 0;
    if (!any)
        return; /* score 0 and precisions 0, as sacreBLEU's early exit */

    /* exp smoothing (mteval-v13a): the k-th order without matches counts as
     * 1 / 2^k matches */
    double smooth = 1.0;
    int orders = RS_BLEU_ORDER; /* averaged over: all, or with effective order those with n-grams */
    for (int n = 0; n < RS_BLEU_ORDER; n++) {
        if (stats->total[n] == 0)
            break; /* the rest stay 0 and force the score to 0 (unless effective order) */
        if (effective_order)
            orders = n + 1;
        if (stats->correct[n] == 0) {
            smooth *= 2;
            res->precisions[n] = 100.0 / (smooth * (double)stats->total[n]);
        } else {
            res->precisions[n] = 100.0 * (double)stats->correct[n] / (double)stats->total[n];
        }
    }
    double sum = 0.0;
    for (int n = 0; n < orders; n++)
        sum += res->precisions[n] == 0.0 ? -9999999999.0 : log(res->precisions[n]);
    res->score = res->bp * exp(sum / orders);
}

int rs_bleu_nonempty_refs(const char *const *refs, int nrefs)
{
    int n = 0;
    for (int r = 0; r < nrefs; r++)
        n += refs[r] && refs[r][0];
    return n;
}

int rs_bleu_signature(const rs_bleu_opts *opts, int nrefs, int effective_order, const char *version,
                      char *buf, size_t size)
{
    opts = rs_bleu_opts_or_default(opts);
    char n[16];
    return snprintf(buf, size, "nrefs:%s|case:%s|eff:%s|tok:%s|smooth:exp|version:%s",
                    rs_nrefs_text(nrefs, n), opts->lowercase ? "lc" : "mixed",
                    effective_order ? "yes" : "no", rs_bleu_tokenizer_name(opts->tokenize),
                    version);
}

const char *rs_bleu_tokenizer_name(rs_bleu_tokenizer tokenize)
{
    switch (tokenize) {
    case RS_BLEU_TOK_13A: return "13a";
    case RS_BLEU_TOK_NONE: return "none";
    case RS_BLEU_TOK_INTL: return "intl";
    case RS_BLEU_TOK_CHAR: return "char";
    }
    return "unknown";
}

int rs_bleu_format(const rs_bleu_result *r, char *buf, size_t size)
{
    return snprintf(buf, size,
                    "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld "
                    "ref_len = %lld)",
                    r->score, r->precisions[0], r->precisions[1], r->precisions[2],
                    r->precisions[3], r->bp, r->ratio, r->hyp_len, r->ref_len);
}

int rs_bleu_tokenize_line(const char *line, const rs_bleu_opts *opts, char **out, rs_error *err)
{
    rs_units u;
    *out = NULL;
    if (!line)
        return rs_fail(err, "no line to tokenize");
    if (rs_bleu_units(&u, line, "the line", rs_bleu_opts_or_default(opts), err) < 0)
        return -1;
    *out = u.text;
    u.text = NULL;
    rs_units_free(&u);
    return 0;
}
