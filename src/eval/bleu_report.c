/* What `rnnsearch bleu` prints (bleu_report.h). */
#include <string.h>

#include "eval/bleu_report.h"

void rs_bleu_report_scores(FILE *out, const rs_bleu_stats *bleu, const rs_chrf_stats *chrf,
                           int effective_order, const char *bleu_sig, const char *chrf_sig,
                           const char *sep)
{
    char buf[256];
    if (bleu) {
        rs_bleu_result res;
        rs_bleu_compute_order(bleu, effective_order, &res);
        rs_bleu_format(&res, buf, sizeof buf);
        /* buf is "BLEU = ...": the signature goes after the name. */
        if (bleu_sig)
            fprintf(out, "BLEU|%s%s", bleu_sig, buf + 4);
        else
            fputs(buf, out);
    }
    if (chrf) {
        rs_chrf_result res;
        rs_chrf_compute(chrf, &res);
        rs_chrf_format(&res, buf, sizeof buf);
        const char *rest = strchr(buf, ' ');
        if (bleu)
            fputs(sep, out);
        if (chrf_sig && rest)
            fprintf(out, "%.*s|%s%s", (int)(rest - buf), buf, chrf_sig, rest);
        else
            fputs(buf, out);
    }
    fputc('\n', out);
}

int rs_bleu_report_lines(FILE *out, const rs_bleu_report *what, const rs_testset_systems *in,
                         const rs_bleu_opts *opts, const char **refs, rs_error *err)
{
    const rs_lines *text = in->text;
    rs_bleu_stats bleu;
    rs_chrf_stats chrf;
    rs_bleu_stats_init(&bleu);
    rs_chrf_stats_init(&chrf);
    rs_error why;
    for (int line = 0; line < text[0].count; line++) {
        rs_testset_refs(text, in->nrefs, line, refs);
        const char *hyp = text[0].lines[line];
        if (what->sentence) {
            rs_bleu_stats_init(&bleu);
            rs_chrf_stats_init(&chrf);
        }
        if ((what->bleu && rs_bleu_stats_add(&bleu, hyp, refs, in->nrefs, opts, &why) < 0) ||
            (what->chrf && rs_chrf_stats_add(&chrf, hyp, refs, in->nrefs, opts, &why) < 0))
            return rs_fail(err, "%s:%d: %s", in->name, line + 1, why.msg);
        if (what->sentence)
            rs_bleu_report_scores(out, what->bleu ? &bleu : NULL, what->chrf ? &chrf : NULL, 1,
                                  what->bleu_sig, what->chrf_sig, "\t");
    }
    if (!what->sentence)
        rs_bleu_report_scores(out, what->bleu ? &bleu : NULL, what->chrf ? &chrf : NULL, 0,
                              what->bleu_sig, what->chrf_sig, "\n");
    return 0;
}

void rs_by_length_report(FILE *out, const rs_length_buckets *b, const rs_bucket_stats *stats,
                         int tsv)
{
    int any_few = 0;
    if (tsv)
        fprintf(out, "bucket\tsentences\tbleu\tchrf\n");
    else
        fprintf(out, "%-8s %9s %7s %7s\n", "words", "sentences", "BLEU", "chrF2");
    for (int i = 0; i < b->count; i++) {
        char name[32], bleu[32] = "nan", chrf[32] = "nan";
        rs_length_bucket_name(b, i, name, sizeof name);
        if (stats[i].sentences) {
            rs_bleu_result br;
            rs_chrf_result cr;
            rs_bleu_compute(&stats[i].bleu, &br);
            rs_chrf_compute(&stats[i].chrf, &cr);
            snprintf(bleu, sizeof bleu, "%.2f", br.score);
            snprintf(chrf, sizeof chrf, "%.2f", cr.score);
        } else if (!tsv) {
            strcpy(bleu, "-");
            strcpy(chrf, "-");
        }
        /* The TSV keeps its four columns (plot and the Python package read
         * them); its sentences column tells a few-sentence bucket. */
        const int few = rs_length_bucket_is_few(stats[i].sentences);
        any_few |= few;
        if (tsv)
            fprintf(out, "%s\t%lld\t%s\t%s\n", name, stats[i].sentences, bleu, chrf);
        else
            fprintf(out, "%-8s %9lld %7s %7s%s\n", name, stats[i].sentences, bleu, chrf,
                    few ? "  few" : "");
    }
    if (any_few && !tsv)
        fprintf(out, "few: fewer than %d sentences, a BLEU that any one of them moves by points\n",
                RS_LENGTH_FEW);
}

void rs_paired_report(FILE *out, const rs_testset_systems *in, const rs_paired_result *res,
                      const rs_testset_test *test)
{
    int width = 6;
    for (int s = 0; s <= in->others; s++) {
        const int len = (int)strlen(s ? in->other_names[s - 1] : in->name);
        width = len > width ? len : width;
    }
    const int bs = test->test == RS_PAIRED_BS;
    fprintf(out, "%-*s %7s %s%8s\n", width, "system", test->chrf ? "chrF2" : "BLEU",
            bs ? "  mean ± 95% CI " : "", "p");
    for (int s = 0; s <= in->others; s++) {
        fprintf(out, "%-*s %7.2f", width, s ? in->other_names[s - 1] : in->name, res[s].score);
        if (bs)
            fprintf(out, "  %6.2f ± %5.2f", res[s].mean, res[s].ci);
        if (s)
            fprintf(out, "  %.4f%s\n", res[s].p, res[s].p < 0.05 ? " *" : "");
        else
            fprintf(out, "  %6s\n", "-");
    }
}
