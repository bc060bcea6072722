/* A test set, segment by segment (see testset.h). */
#include <stddef.h>

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
