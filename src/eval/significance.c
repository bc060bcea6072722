/* sacreBLEU's paired bootstrap and approximate randomization tests (see
 * significance.h), transcribed from sacrebleu/significance.py: the indices
 * and swaps come from numpy's generator (common/pcg64.c), drawn in numpy's
 * order, so the p-values and intervals are sacreBLEU's, not only alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/pcg64.h"
#include "eval/chrf.h"
#include "eval/significance.h"

/* numpy's pairwise_sum for float64 (loops_utils.h), blocks of 128 summed
 * eight ways; the order of additions decides the last bits of a mean. */
static double pairwise_sum(const double *a, int n)
{
    if (n < 8) {
        double res = 0.;
        for (int i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        memcpy(r, a, sizeof r);
        int i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    int n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

double rs_numpy_mean(const double *x, int n)
{
    return pairwise_sum(x, n) / n;
}

/* ---- the metrics: a sentence's statistics summed, and the score of a sum ---- */

static void bleu_zero(void *sum)
{
    rs_bleu_stats_init(sum);
}

static void bleu_add(void *sum_, const void *s_)
{
    rs_bleu_stats *sum = sum_;
    const rs_bleu_stats *s = s_;
    for (int k = 0; k < RS_BLEU_ORDER; k++) {
        sum->correct[k] += s->correct[k];
        sum->total[k] += s->total[k];
    }
    sum->hyp_len += s->hyp_len;
    sum->ref_len += s->ref_len;
    sum->segments += s->segments;
}

static double bleu_score(const void *sum)
{
    rs_bleu_result res;
    rs_bleu_compute(sum, &res);
    return res.score;
}

static void chrf_zero(void *sum)
{
    rs_chrf_stats_init(sum);
}

static void chrf_add(void *sum_, const void *s_)
{
    rs_chrf_stats *sum = sum_;
    const rs_chrf_stats *s = s_;
    for (int k = 0; k < RS_CHRF_ORDER; k++) {
        sum->hyp[k] += s->hyp[k];
        sum->ref[k] += s->ref[k];
        sum->match[k] += s->match[k];
    }
    sum->segments += s->segments;
}

static double chrf_score(const void *sum)
{
    rs_chrf_result res;
    rs_chrf_compute(sum, &res);
    return res.score;
}

const rs_paired_metric rs_paired_bleu = {"BLEU", sizeof(rs_bleu_stats), bleu_zero, bleu_add,
                                         bleu_score};
const rs_paired_metric rs_paired_chrf = {"chrF2", sizeof(rs_chrf_stats), chrf_zero, chrf_add,
                                         chrf_score};

/* Sentence i of system s in stats. */
static const void *at(const rs_paired_metric *m, const void *stats, int n, int s, int i)
{
    return (const char *)stats + ((size_t)s * (size_t)n + (size_t)i) * m->size;
}

/* A sum's room: the largest statistics of the metrics above. */
typedef union {
    rs_bleu_stats bleu;
    rs_chrf_stats chrf;
} any_stats;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* estimate_ci: the mean of the sorted scores and half the distance between
 * the scores at n/40 and n - n/40 - 1. Sorts scores in place. */
static void estimate_ci(double *scores, int n, double *mean, double *ci)
{
    qsort(scores, (size_t)n, sizeof *scores, cmp_double);
    const int lower = n / 40, upper = n - lower - 1;
    *ci = 0.5 * (scores[upper] - scores[lower]);
    *mean = rs_numpy_mean(scores, n);
}

/* _compute_p_value: (#{stat > real} + 1) / (count + 1); the strict > makes a
 * system tested against itself p = 1 / (count + 1), not chance. */
static double p_value(const double *stats, int count, double real)
{
    long c = 0;
    for (int i = 0; i < count; i++)
        c += stats[i] > real;
    return (double)(c + 1) / (double)(count + 1);
}

/* scores[s * samples + r]: system s's score on resample r; indices are drawn
 * row by row as numpy fills choice()'s (samples, n) array. */
static void bootstrap_scores(const rs_paired_table *tab, int samples, uint64_t seed, uint32_t *idx,
                             double *scores)
{
    const rs_paired_metric *m = tab->metric;
    const void *stats = tab->stats;
    const int systems = tab->systems, n = tab->n;
    rs_pcg64 g;
    rs_pcg64_seed(&g, seed);
    for (int r = 0; r < samples; r++) {
        for (int i = 0; i < n; i++)
            idx[i] = rs_pcg64_below(&g, (uint64_t)n);
        for (int s = 0; s < systems; s++) {
            any_stats sum;
            m->zero(&sum);
            for (int i = 0; i < n; i++)
                m->add(&sum, at(m, stats, n, s, (int)idx[i]));
            scores[(size_t)s * samples + r] = m->score(&sum);
        }
    }
}

/* The bootstrap's mean, interval and p-values from its scores. */
static void bootstrap_results(int systems, int samples, double *scores, double *work,
                              rs_paired_result *out)
{
    const double *base = scores;
    for (int s = 1; s < systems; s++) {
        const double *sys = scores + (size_t)s * samples;
        for (int r = 0; r < samples; r++)
            work[r] = fabs(sys[r] - base[r]);
        const double mean = rs_numpy_mean(work, samples);
        for (int r = 0; r < samples; r++)
            work[r] -= mean;
        out[s].p = p_value(work, samples, fabs(out[0].score - out[s].score));
    }
    /* Last, as estimate_ci sorts the scores. */
    for (int s = 0; s < systems; s++)
        estimate_ci(scores + (size_t)s * samples, samples, &out[s].mean, &out[s].ci);
}

/* AR: per trial one bit per sentence (numpy's buffered booleans run on across
 * rows, as one array fill); a set bit keeps the baseline's sentence in
 * pseudo-system a and the system's in b, a clear bit swaps them. */
static void randomization(const rs_paired_table *tab, int trials, uint64_t seed, unsigned char *pos,
                          double *diffs, rs_paired_result *out)
{
    const rs_paired_metric *m = tab->metric;
    const void *stats = tab->stats;
    const int systems = tab->systems, n = tab->n;
    rs_pcg64 g;
    rs_pcg64_seed(&g, seed);
    int bits = 0;
    uint32_t buf = 0;
    for (int t = 0; t < trials; t++) {
        for (int i = 0; i < n; i++)
            pos[i] = (unsigned char)rs_pcg64_bool(&g, &bits, &buf);
        for (int s = 1; s < systems; s++) {
            any_stats a, b;
            m->zero(&a);
            m->zero(&b);
            for (int i = 0; i < n; i++) {
                const void *bl = at(m, stats, n, 0, i), *sy = at(m, stats, n, s, i);
                m->add(&a, pos[i] ? bl : sy);
                m->add(&b, pos[i] ? sy : bl);
            }
            diffs[(size_t)(s - 1) * trials + t] = fabs(m->score(&a) - m->score(&b));
        }
    }
    for (int s = 1; s < systems; s++)
        out[s].p =
            p_value(diffs + (size_t)(s - 1) * trials, trials, fabs(out[0].score - out[s].score));
}

int rs_paired_test_run(rs_paired_test test, const rs_bleu_stats *stats, int systems, int n,
                       int samples, uint64_t seed, rs_paired_result *out, rs_error *err)
{
    const rs_paired_table table = {&rs_paired_bleu, stats, systems, n};
    return rs_paired_metric_run(test, &table, samples, seed, out, err);
}

int rs_paired_metric_run(rs_paired_test test, const rs_paired_table *tab, int samples,
                         uint64_t seed, rs_paired_result *out, rs_error *err)
{
    if (!tab)
        return rs_fail(err, "a paired test needs two systems or more, a sentence and a sample");
    const rs_paired_metric *m = tab->metric;
    const void *stats = tab->stats;
    const int systems = tab->systems, n = tab->n;
    if (!m || !stats || !out || systems < 2 || n < 1 || samples < 1)
        return rs_fail(err, "a paired test needs two systems or more, a sentence and a sample");
    if (test != RS_PAIRED_BS && test != RS_PAIRED_AR)
        return rs_fail(err, "unknown paired test %d", (int)test);
    if (m->size > sizeof(any_stats))
        return rs_fail(err, "%s's statistics are larger than a paired test sums", m->name);
    for (int s = 0; s < systems; s++) {
        any_stats sum;
        m->zero(&sum);
        for (int i = 0; i < n; i++)
            m->add(&sum, at(m, stats, n, s, i));
        out[s] = (rs_paired_result){m->score(&sum), NAN, NAN, NAN};
    }
    int rc = -1;
    if (test == RS_PAIRED_BS) {
        uint32_t *idx = rs_calloc((size_t)n, sizeof *idx, err);
        double *scores = idx ? rs_calloc((size_t)systems * samples, sizeof *scores, err) : NULL;
        double *work = scores ? rs_calloc((size_t)samples, sizeof *work, err) : NULL;
        if (work) {
            bootstrap_scores(tab, samples, seed, idx, scores);
            bootstrap_results(systems, samples, scores, work, out);
            rc = 0;
        }
        free(idx);
        free(scores);
        free(work);
    } else {
        unsigned char *pos = rs_calloc((size_t)n, 1, err);
        double *diffs = pos ? rs_calloc((size_t)(systems - 1) * samples, sizeof *diffs, err) : NULL;
        if (diffs) {
            randomization(tab, samples, seed, pos, diffs, out);
            rc = 0;
        }
        free(pos);
        free(diffs);
    }
    return rc;
}
