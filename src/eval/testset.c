/* A test set, segment by segment (see testset.h). */
#include <stddef.h>
#include <stdlib.h>

#include "eval/nbest.h"

#include "eval/testset.h"

void rs_testset_refs(const rs_lines *text, int nrefs, int line, const char **refs)
{
    for (int r = 0; r < nrefs; r++)
        refs[r] = text[r + 1].lines[line];
}

int rs_testset_nrefs(const rs_lines *text, int nrefs, const char **refs)
{
    int common = -1;
    for (int line = 0; line < text[0].count; line++) {
        rs_testset_refs(text, nrefs, line, refs);
        const int n = rs_bleu_nonempty_refs(refs, nrefs);
        if (common >= 0 && n != common)
            return RS_NREFS_VAR;
        common = n;
    }
    return common;
}

int rs_testset_by_length(rs_bucket_stats *stats, const rs_length_buckets *b,
                         const rs_testset_systems *in, const rs_lines *src,
                         const rs_bleu_opts *opts, const char **refs, rs_error *err)
{
    const rs_lines *text = in->text;
    const int nrefs = in->nrefs;
    const char *name = in->name;
    rs_error why;
    for (int line = 0; line < text[0].count; line++) {
        rs_testset_refs(text, nrefs, line, refs);
        if (rs_by_length_add(stats, b, src->lines[line], text[0].lines[line], refs, nrefs, opts,
                             &why))
            return rs_fail(err, "%s:%d: %s", name, line + 1, why.msg);
    }
    return 0;
}

/* One road for both metrics: bleu or chrf (the other NULL) gets each
 * system's statistics of each line. */
static int paired_stats(rs_bleu_stats *bleu, rs_chrf_stats *chrf, const rs_testset_systems *in,
                        const rs_bleu_opts *opts, const char **refs, rs_error *err)
{
    const int n = in->text[0].count;
    rs_error why;
    for (int s = 0; s <= in->others; s++)
        for (int line = 0; line < n; line++) {
            rs_testset_refs(in->text, in->nrefs, line, refs);
            const rs_lines *hyp = s ? &in->sys[s - 1] : &in->text[0];
            const size_t k = (size_t)s * n + line;
            int status;
            if (bleu) {
                rs_bleu_stats_init(&bleu[k]);
                status = rs_bleu_stats_add(&bleu[k], hyp->lines[line], refs, in->nrefs, opts, &why);
            } else {
                rs_chrf_stats_init(&chrf[k]);
                status = rs_chrf_stats_add(&chrf[k], hyp->lines[line], refs, in->nrefs, opts, &why);
            }
            if (status < 0)
                return rs_fail(err, "%s:%d: %s", s ? in->other_names[s - 1] : in->name, line + 1,
                               why.msg);
        }
    return 0;
}

int rs_testset_paired_stats(rs_bleu_stats *stats, const rs_testset_systems *in,
                            const rs_bleu_opts *opts, const char **refs, rs_error *err)
{
    return paired_stats(stats, NULL, in, opts, refs, err);
}

int rs_testset_paired_chrf_stats(rs_chrf_stats *stats, const rs_testset_systems *in,
                                 const rs_bleu_opts *opts, const char **refs, rs_error *err)
{
    return paired_stats(NULL, stats, in, opts, refs, err);
}

/* One file's lines, each without its trailing whitespace. */
static int read_stripped(const char *path, rs_lines *lines, rs_error *err)
{
    if (rs_lines_read(path, lines, err))
        return -1;
    for (int i = 0; i < lines->count; i++)
        lines->lines[i][rs_bleu_rstrip_len(lines->lines[i])] = '\0';
    return 0;
}

/* Hypotheses in the Moses n-best form (translate --n-best's output). */
static int refuse_nbest(const rs_lines *hyp, const char *name, rs_error *err)
{
    return rs_nbest_refuse((const char *const *)hyp->lines, hyp->count, name, err)
               ? RS_TESTSET_REFUSED
               : 0;
}

int rs_testset_read(rs_lines *text, const char *const *files, int nfiles, const char *hyp_name,
                    rs_error *err)
{
    for (int i = 0; i < nfiles; i++)
        if (read_stripped(files[i], &text[i], err))
            return -1;
    if (text[0].count == 0)
        return rs_fail(err, "%s has no lines to score", files[0]);
    /* First: an n-best list of N > 1 also has N times the lines, and what
     * it is explains the count. */
    if (refuse_nbest(&text[0], hyp_name, err))
        return RS_TESTSET_REFUSED;
    for (int i = 1; i < nfiles; i++)
        if (text[i].count != text[0].count) {
            rs_fail(err, "%s has %d line%s but %s has %d: one reference line per hypothesis",
                    hyp_name, text[0].count, RS_S(text[0].count), files[i], text[i].count);
            return RS_TESTSET_REFUSED;
        }
    return 0;
}

int rs_testset_read_systems(rs_lines *sys, const char *const *files, int count,
                            const rs_lines *base, const char *base_name, rs_error *err)
{
    for (int k = 0; k < count; k++) {
        if (read_stripped(files[k], &sys[k], err))
            return -1;
        if (refuse_nbest(&sys[k], files[k], err))
            return RS_TESTSET_REFUSED;
        if (sys[k].count != base->count) {
            rs_fail(err,
                    "%s has %d line%s but %s has %d: the systems of a paired test translate the "
                    "same sentences",
                    base_name, base->count, RS_S(base->count), files[k], sys[k].count);
            return RS_TESTSET_REFUSED;
        }
    }
    return 0;
}

int rs_testset_read_source(rs_lines *src, const char *path, const rs_lines *hyp,
                           const char *hyp_name, rs_error *err)
{
    if (read_stripped(path, src, err))
        return -1;
    if (src->count == hyp->count)
        return 0;
    rs_fail(err, "%s has %d line%s but %s has %d", path, src->count, RS_S(src->count), hyp_name,
            hyp->count);
    rs_lines_free(src);
    return RS_TESTSET_REFUSED;
}

int rs_testset_paired(rs_paired_result *res, const rs_testset_systems *in,
                      const rs_testset_test *test, const rs_bleu_opts *opts, const char **refs,
                      rs_error *err)
{
    const int systems = in->others + 1, n = in->text[0].count;
    const rs_paired_metric *metric = test->chrf ? &rs_paired_chrf : &rs_paired_bleu;
    void *stats = calloc((size_t)systems * (size_t)n, metric->size);
    if (!stats)
        return rs_fail(err, "out of memory for %d systems' statistics", systems);
    const rs_paired_table table = {metric, stats, systems, n};
    const int status =
        paired_stats(test->chrf ? NULL : stats, test->chrf ? stats : NULL, in, opts, refs, err) ||
        rs_paired_metric_run(test->test, &table, test->samples, test->seed, res, err);
    free(stats);
    return status ? -1 : 0;
}
