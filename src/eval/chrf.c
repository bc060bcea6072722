/* Corpus chrF as sacreBLEU 2.x computes it (see chrf.h); the segment's
 * characters and n-gram spans are segments.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/chrf.h"
#include "eval/segments.h"

/* ---- chrF -------------------------------------------------------------- */

int rs_chrf_signature(const rs_bleu_opts *opts, int nrefs, const char *version, char *buf,
                      size_t size)
{
    opts = rs_bleu_opts_or_default(opts);
    char n[16];
    return snprintf(buf, size, "nrefs:%s|case:%s|eff:yes|nc:%d|nw:0|space:no|version:%s",
                    rs_nrefs_text(nrefs, n), opts->lowercase ? "lc" : "mixed", RS_CHRF_ORDER,
                    version);
}

void rs_chrf_stats_init(rs_chrf_stats *stats)
{
    memset(stats, 0, sizeof *stats);
}

/* sacreBLEU's CHRF._compute_f_score without eps smoothing: average precision
 * and recall over the orders where both sides have n-grams, then F-beta. */
static double chrf_f(const long long *hyp, const long long *ref, const long long *match,
                     rs_chrf_result *res)
{
    const double factor = (double)RS_CHRF_BETA * RS_CHRF_BETA;
    double avg_prec = 0.0, avg_rec = 0.0;
    int effective = 0;
    for (int i = 0; i < RS_CHRF_ORDER; i++)
        if (hyp[i] > 0 && ref[i] > 0) {
            avg_prec += (double)match[i] / (double)hyp[i];
            avg_rec += (double)match[i] / (double)ref[i];
            effective++;
        }
    if (effective == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= effective;
        avg_rec /= effective;
    }
    double score = 0.0;
    if (avg_prec + avg_rec != 0.0) {
        score = (1 + factor) * avg_prec * avg_rec;
        score /= factor * avg_prec + avg_rec;
        score *= 100;
    }
    if (res) {
        res->score = score;
        res->precision = avg_prec;
        res->recall = avg_rec;
        res->effective_order = effective;
    }
    return score;
}

int rs_chrf_stats_add(rs_chrf_stats *stats, const char *hyp, const char *const *refs, int nrefs,
                      const rs_bleu_opts *opts, rs_error *err)
{
    if (!(opts = rs_segment_begin(stats, hyp, refs, nrefs, opts, err)))
        return -1;
    int rc = -1;
    char name[32];
    rs_span *spans = NULL;
    rs_units h, r;
    memset(&r, 0, sizeof r);
    if (rs_chrf_units(&h, hyp, "the hypothesis", opts, err) < 0)
        return -1;
    long long best_hyp[RS_CHRF_ORDER] = {0}, best_ref[RS_CHRF_ORDER] = {0},
              best_match[RS_CHRF_ORDER] = {0};
    double best_f = -1.0;
    size_t hyp_spans = rs_spans_count(&h, RS_CHRF_ORDER);
    for (int i = 0; i < nrefs; i++) {
        if (!refs[i][0])
            continue;
        if (rs_chrf_units(&r, refs[i], rs_segment_ref_name(name, i), opts, err) < 0)
            goto done;
        size_t nspans = hyp_spans + rs_spans_count(&r, RS_CHRF_ORDER);
        rs_span *grown = realloc(spans, (nspans ? nspans : 1) * sizeof *spans);
        if (!grown) {
            rs_fail(err, "out of memory counting character n-grams");
            goto done;
        }
        spans = grown;
        size_t m = rs_spans_add(spans, &h, RS_CHRF_ORDER, 0, 0);
        m += rs_spans_add(spans + m, &r, RS_CHRF_ORDER, 0, 1);
        qsort(spans, m, sizeof *spans, rs_span_cmp);
        long long hc[RS_CHRF_ORDER] = {0}, rc_[RS_CHRF_ORDER] = {0}, mc[RS_CHRF_ORDER] = {0};
        for (size_t g = 0; g < m;) {
            size_t e = g;
            long long nh = 0, nr = 0;
            for (; e < m && rs_span_cmp_key(&spans[g], &spans[e]) == 0; e++)
                *(spans[e].src ? &nr : &nh) += 1;
            mc[spans[g].order - 1] += nh < nr ? nh : nr;
            g = e;
        }
        for (int n = 0; n < RS_CHRF_ORDER; n++) {
            rc_[n] = r.n > n ? r.n - n : 0;
            /* sacreBLEU counts no hypothesis n-grams of an order the
             * reference does not have */
            hc[n] = rc_[n] > 0 && h.n > n ? h.n - n : 0;
        }
        double f = chrf_f(hc, rc_, mc, NULL);
        if (f > best_f) {
            best_f = f;
            memcpy(best_hyp, hc, sizeof hc);
            memcpy(best_ref, rc_, sizeof rc_);
            memcpy(best_match, mc, sizeof mc);
        }
        rs_units_free(&r);
    }
    for (int n = 0; n < RS_CHRF_ORDER; n++) {
        stats->hyp[n] += best_hyp[n];
        stats->ref[n] += best_ref[n];
        stats->match[n] += best_match[n];
    }
    stats->segments++;
    rc = 0;
done:
    free(spans);
    rs_units_free(&h);
    rs_units_free(&r);
    return rc;
}

void rs_chrf_compute(const rs_chrf_stats *stats, rs_chrf_result *result)
{
    chrf_f(stats->hyp, stats->ref, stats->match, result);
}

int rs_chrf_format(const rs_chrf_result *r, char *buf, size_t size)
{
    return snprintf(buf, size, "chrF%d = %.2f", RS_CHRF_BETA, r->score);
}
