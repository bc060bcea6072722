/* rnnsearch bleu: corpus BLEU and chrF of a hypothesis file against one or
 * more reference files, as the sacreBLEU command line computes them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/bleu.h"
#include "eval/bylength.h"
#include "eval/chrf.h"
#include "eval/nbest.h"
#include "eval/significance.h"
#include "eval/testset.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "text/corpus.h"
#include "cmd/commands.h"

#define PROG "rnnsearch bleu"

enum { RS_MAX_SYSTEMS = 64 }; /* -i given for --paired-bs and --paired-ar */

/* Reads a file (or standard input for "-") through the shared line reader
 * (UTF-8 checked, gzip decompressed) and strips each line's trailing
 * whitespace, as sacreBLEU rstrip()s every line. */
static int read_lines(rs_lines *lines, const char *path)
{
    rs_error err;
    if (rs_lines_read(path, lines, &err)) {
        rs_cli_fail(PROG, "%s", err.msg);
        return -1;
    }
    for (int i = 0; i < lines->count; i++)
        lines->lines[i][rs_bleu_rstrip_len(lines->lines[i])] = '\0';
    return 0;
}

/* Prints the BLEU and/or chrF of the statistics given (NULL: not asked for),
 * separated by sep and ended by a newline; with a signature, in sacreBLEU's
 * text form "BLEU|SIGNATURE = 35.12 ...". */
static void print_scores(const rs_bleu_stats *bleu, const rs_chrf_stats *chrf, int effective_order,
                         const char *bleu_sig, const char *chrf_sig, const char *sep)
{
    char buf[256];
    if (bleu) {
        rs_bleu_result res;
        rs_bleu_compute_order(bleu, effective_order, &res);
        rs_bleu_format(&res, buf, sizeof buf);
        /* buf is "BLEU = ...": the signature goes after the name. */
        if (bleu_sig)
            printf("BLEU|%s%s", bleu_sig, buf + 4);
        else
            fputs(buf, stdout);
    }
    if (chrf) {
        rs_chrf_result res;
        rs_chrf_compute(chrf, &res);
        rs_chrf_format(&res, buf, sizeof buf);
        const char *rest = strchr(buf, ' ');
        if (bleu)
            fputs(sep, stdout);
        if (chrf_sig && rest)
            printf("%.*s|%s%s", (int)(rest - buf), buf, chrf_sig, rest);
        else
            fputs(buf, stdout);
    }
    putchar('\n');
}

/* What the command line asks for. */
typedef struct {
    rs_bleu_opts opts;
    int want_bleu, want_chrf, sentence, with_signature;
    int by_length, tsv;
    const char *src; /* --src, for --by-length */
    rs_length_buckets buckets;
    const char **files; /* [nfiles]: the hypothesis, then the references (owned) */
    int nfiles;
    const char *input;                      /* -i HYP (with --paired-*, the baseline) */
    const char *others[RS_MAX_SYSTEMS - 1]; /* the other systems' -i, in order */
    int n_others;
    int argc; /* the command line, for -i's further words */
    char **argv;
    int last_words;    /* the words the last -i took after its value */
    const char **refs; /* [n_refs]: the references (argv's, or the last -i's words) */
    int n_refs;
    int paired;                      /* -1, or --paired-bs / --paired-ar's rs_paired_test */
    int paired_n;                    /* --paired-n, 0: the test's default */
    int seed;                        /* --seed */
    int metric, tokenize;            /* --metric (bleu, chrf, both), --tokenize */
    int metric_given;                /* --metric */
    int buckets_given, format_given; /* --buckets, --format */
} bleu_request;

/* The files, once the options are read (HYP REF...; or -i HYP REF...; or REF
 * alone, the hypothesis on standard input), and the checks across options;
 * -1 to go on, else the exit status. */
static int check_request(int argc, char **argv, bleu_request *rq)
{
    rq->refs = (const char **)argv + optind;
    rq->n_refs = argc - optind;
    /* Nothing named outside -i's words: the last -i's further words are
     * the references, as before sacreBLEU's form was read (-i HYP REF...,
     * -i A -i B REF...); sacreBLEU itself refuses such a line. */
    if (rq->input && !rq->n_refs && rq->last_words) {
        rq->n_others -= rq->last_words;
        rq->refs = rq->others + rq->n_others;
        rq->n_refs = rq->last_words;
    }
    const int named = rq->n_refs;
    const int hyp_named = !rq->input && named >= 2;
    if (named < 1 || (named == 1 && !rq->input && isatty(STDIN_FILENO)))
        return rs_cli_usage_error(PROG, "need a hypothesis and at least one reference: HYP REF, "
                                        "REF -i HYP [HYP...], or REF with the hypothesis on "
                                        "standard input");
    rq->nfiles = hyp_named ? named : named + 1;
    if (!(rq->files = calloc((size_t)rq->nfiles, sizeof *rq->files)))
        return rs_cli_usage_error(PROG, "out of memory");
    rq->files[0] = hyp_named ? rq->refs[0] : rq->input ? rq->input : "-";
    for (int i = 1; i < rq->nfiles; i++)
        rq->files[i] = rq->refs[i - !hyp_named];
    if (rq->by_length && !rq->src)
        return rs_cli_usage_error(PROG, "--by-length needs the source sentences: --src FILE");
    if (!rq->by_length && (rq->src || rq->buckets_given || rq->format_given))
        return rs_cli_usage_error(PROG, "--%s goes with --by-length",
                                  rq->src             ? "src"
                                  : rq->buckets_given ? "buckets"
                                                      : "format");
    if (rq->by_length && rq->sentence)
        return rs_cli_usage_error(PROG, "--by-length and --sentence exclude each other");
    if (rq->n_others && rq->paired < 0)
        return rs_cli_usage_error(PROG,
                                  "%d systems given (-i): several systems go with "
                                  "--paired-bs or --paired-ar",
                                  rq->n_others + 1);
    if (rq->paired >= 0) {
        const char *test = rq->paired == RS_PAIRED_BS ? "--paired-bs" : "--paired-ar";
        if (!rq->n_others)
            return rs_cli_usage_error(PROG,
                                      "%s compares systems: REF... -i BASELINE SYSTEM "
                                      "[SYSTEM...], or -i BASELINE -i SYSTEM REF...",
                                      test);
        if (rq->by_length || rq->sentence)
            return rs_cli_usage_error(PROG, "%s and --%s exclude each other", test,
                                      rq->by_length ? "by-length" : "sentence");
        /* One metric a test: BLEU unless --metric chrf. */
        if (rq->metric_given && rq->want_chrf && rq->want_bleu)
            return rs_cli_usage_error(PROG, "%s tests one metric: --metric bleu or chrf", test);
        rq->want_chrf = rq->metric_given && rq->want_chrf;
        rq->want_bleu = !rq->want_chrf;
    } else if (rq->paired_n || rq->seed != RS_PAIRED_SEED) {
        return rs_cli_usage_error(PROG, "--%s goes with --paired-bs or --paired-ar",
                                  rq->paired_n ? "paired-n" : "seed");
    }
    for (int i = 1; i < rq->nfiles; i++)
        if (strcmp(rq->files[i], "-") == 0)
            return rs_cli_usage_error(PROG, "only the hypothesis can be read from standard input");
    return -1;
}

static int add_system(bleu_request *rq, const char *path)
{
    if (!rq->input)
        rq->input = path;
    else if (rq->n_others < RS_MAX_SYSTEMS - 1)
        rq->others[rq->n_others++] = path;
    else
        return rs_cli_usage_error(PROG, "more than %d systems (-i)", RS_MAX_SYSTEMS);
    return -1;
}

/* -i A [B...]: as sacreBLEU's nargs='+', every word after the value up to
 * the next option is a further system ("-" is a word, "--" is not); getopt
 * steps over the words taken here as over an option's value. */
static int set_input(void *req, const char *arg)
{
    bleu_request *rq = req;
    int status = add_system(rq, arg);
    rq->last_words = 0;
    while (status < 0 && rq->argv && optind < rq->argc &&
           (rq->argv[optind][0] != '-' || !strcmp(rq->argv[optind], "-"))) {
        status = add_system(rq, rq->argv[optind++]);
        rq->last_words++;
    }
    return status;
}

static int set_paired(bleu_request *rq, int test)
{
    if (rq->paired >= 0)
        return rs_cli_usage_error(PROG, "one test at a time: --paired-bs or --paired-ar");
    rq->paired = test;
    return -1;
}

static int set_paired_bs(void *rq, const char *arg)
{
    return set_paired(rq, RS_PAIRED_BS);
}

static int set_paired_ar(void *rq, const char *arg)
{
    return set_paired(rq, RS_PAIRED_AR);
}

static int set_buckets(void *req, const char *arg)
{
    bleu_request *rq = req;
    rs_error err;
    if (rs_length_buckets_parse(&rq->buckets, arg, &err))
        return rs_cli_usage_error(PROG, "--buckets: %s", err.msg);
    rq->buckets_given = 1;
    return -1;
}

static const char *const metrics[] = {"bleu", "chrf", "both", NULL};
static const char *const tokenizers[] = {"13a", "none", "intl", "char", NULL};
static const char *const formats[] = {"table", "tsv", NULL};

#define RQ bleu_request
static const rs_cli_option option_table[] = {
    {.kind = RS_CLI_TEXT, .help = "options:\n"},
    {"metric", .kind = RS_CLI_CHOICE, RS_AT(RQ, metric), .value = "M", .names = metrics,
     .help = "bleu, chrf or both (default: %D)"},
    {"tokenize", .kind = RS_CLI_CHOICE, RS_AT(RQ, tokenize), .value = "T", .names = tokenizers,
     .help = "BLEU tokenizer, as sacreBLEU's: 13a, none, intl (mteval-v14's\n"
             "international: Unicode punctuation split off unless between\n"
             "digits, symbols always) or char (every character a token)\n"
             "(default: %D)"},
    {"lowercase", .kind = RS_CLI_FLAG, RS_AT(RQ, opts.lowercase),
     .help = "lower-case hypotheses and references first, for both metrics\n"
             "(sacreBLEU's -lc and --chrf-lowercase; default: off)"},
    {"sentence", .kind = RS_CLI_FLAG, RS_AT(RQ, sentence),
     .help = "one line per segment: its own BLEU (with effective order, as\n"
             "sacreBLEU's sentence_bleu: eff:yes) and chrF, tab-separated"},
    {"input", 'i', RS_CLI_CALL, .set = set_input, .value = "HYP", .flags = RS_CLI_REPEAT,
     .label = "-i, --input HYP [HYP...]",
     .help = "\nthe hypotheses, as sacreBLEU's -i: the words after it up to\n"
             "the next option are further systems (REF -i A B --paired-bs,\n"
             "as -i A -i B); every other file named is a reference. When\n"
             "no file is named outside -i's words, the last -i's further\n"
             "words are the references (-i HYP REF..., -i A -i B REF...).\n"
             "With one file named and no -i, that file is the reference\n"
             "and the hypothesis comes from standard input (sacreBLEU's\n"
             "`sacrebleu REF < HYP`)"},
    {"signature", .kind = RS_CLI_FLAG, RS_AT(RQ, with_signature),
     .help = "put the signature into each score line, as sacreBLEU's text\n"
             "output does: \"BLEU|nrefs:1|...|version:... = 35.12 ...\"\n"
             "(and not on standard error)"},
    {"by-length", .kind = RS_CLI_FLAG, RS_AT(RQ, by_length),
     .help = "quality by source length: the test set split into buckets by\n"
             "the number of words of each source sentence (needs --src),\n"
             "and per bucket its sentences, BLEU and chrF, each bucket\n"
             "scored as a corpus of its own"},
    {"src", .kind = RS_CLI_STRING, RS_AT(RQ, src), .value = "FILE",
     .help = "the source sentences of HYP, for --by-length"},
    {"buckets", .kind = RS_CLI_CALL, .set = set_buckets, .value = "B",
     .help = "the bounds between buckets, as 10,20,30 (buckets <10, 10-19,\n"
             "20-29, >=30; default: compare-mt's 10,20,30,40,50,60)"},
    {"format", .kind = RS_CLI_CHOICE, RS_AT(RQ, tsv), .value = "F", .names = formats,
     .help = "--by-length's output: table or tsv (columns bucket, sentences,\n"
             "bleu, chrf; an empty bucket's scores are nan) (default: %D)"},
    {"paired-bs", .kind = RS_CLI_CALL, .set = set_paired_bs,
     .help = "paired bootstrap resampling of BLEU, as sacreBLEU's\n"
             "--paired-bs: the systems given as -i BASELINE -i SYSTEM\n"
             "[-i SYSTEM...] (the first is the baseline, every file named\n"
             "a reference), and per system its BLEU, the mean and 95%\n"
             "confidence interval over the resamples and the p-value of\n"
             "its difference from the baseline (* below 0.05)"},
    {"paired-ar", .kind = RS_CLI_CALL, .set = set_paired_ar,
     .help = "paired approximate randomization, as sacreBLEU's\n"
             "--paired-ar: BLEU and p-values, no interval (either test\n"
             "on chrF with --metric chrf)"},
    {"paired-n", .kind = RS_CLI_INT, RS_AT(RQ, paired_n), 1, 1000000, "N",
     .help = "resamples or trials (default: 1000 for --paired-bs, 10000\n"
             "for --paired-ar, as sacreBLEU's)"},
    {"seed", .kind = RS_CLI_INT, RS_AT(RQ, seed), 0, 2147483647, "N",
     .help = "the seed of the draws (default: %D, sacreBLEU's): a seed\n"
             "from 1 up, given to sacreBLEU as SACREBLEU_SEED, gives its\n"
             "numbers to the last digit. Seed 0 is a seed like any other\n"
             "here (numpy's default_rng(0), the same numbers every run),\n"
             "where sacreBLEU reads 0 as None and runs unseeded (from the\n"
             "OS's entropy, other numbers every run): there is no\n"
             "sacreBLEU result for seed 0 to match, and rnnsearch has no\n"
             "unseeded run"},
    {"help", 'h', RS_CLI_HELP, .help = "this text"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "bleu",
    PROG,
    "usage: rnnsearch bleu [options] HYP REF [REF...]\n"
    "       rnnsearch bleu [options] REF [REF...] -i HYP [HYP...]\n"
    "       rnnsearch bleu [options] -i HYP REF [REF...]\n"
    "       rnnsearch bleu [options] REF < HYP\n"
    "\n"
    "Scores HYP (one segment per line; \"-\" reads standard input) against the\n"
    "references REF..., line by line, as sacreBLEU 2.x does with its defaults, and\n"
    "prints, like sacreBLEU's text output:\n"
    "  BLEU = 35.12 67.1/42.3/28.0/19.2 (BP = 1.000 ratio = 1.012 hyp_len = 12345 "
    "ref_len = 12200)\n"
    "  chrF2 = 61.23\n"
    "and on standard error the signatures, to quote with the scores:\n"
    "  BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:rnnsearch-" RS_VERSION "\n"
    "  chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:rnnsearch-" RS_VERSION "\n"
    "(version: these numbers come from rnnsearch " RS_VERSION ", not from sacreBLEU).\n"
    "\n",
    "\n"
    "BLEU: n-grams 1-4, counts clipped by the largest count in any reference, brevity\n"
    "penalty against the closest reference length, exp smoothing. chrF: character\n"
    "n-grams 1-6, beta 2, whitespace removed, F of the corpus-summed statistics.\n"
    "Every line loses its trailing whitespace; an empty reference line is skipped\n"
    "(a segment needs one non-empty reference), and when segments then have\n"
    "different numbers of references the signature says nrefs:var, as sacreBLEU's.\n"
    "Files must be UTF-8 (gzip-compressed files are read too); lines end at \\n,\n"
    "\\r\\n or \\r. Refused with exit status 2, as they cannot give a true score:\n"
    "a reference (or --src) with another number of lines than HYP, and a HYP line\n"
    "in the Moses n-best form 'N ||| text ||| features ||| score' (translate\n"
    "--n-best's output; score plain output instead).\n",
    18,
    sizeof(bleu_request),
    option_table};

/* Parses and checks the options into rq; returns -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, bleu_request *rq)
{
    rs_length_buckets_default(&rq->buckets);
    rq->argc = argc;
    rq->argv = argv;
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, rq, &args, argc, argv);
    rq->metric_given = rs_cli_seen(&args, "metric");
    rq->format_given = rs_cli_seen(&args, "format");
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    rq->opts.tokenize = (rs_bleu_tokenizer)rq->tokenize;
    rq->want_bleu = rq->metric != 1;
    rq->want_chrf = rq->metric != 0;
    return check_request(argc, argv, rq);
}

/* The hypothesis file's name in messages. */
static const char *hyp_name(const bleu_request *rq)
{
    return strcmp(rq->files[0], "-") ? rq->files[0] : "standard input";
}

/* An n-best line among hypotheses is refused (exit 2); -1 to go on. */
static int refuse_nbest(const rs_lines *hyp, const char *name)
{
    rs_error err;
    if (!rs_nbest_refuse((const char *const *)hyp->lines, hyp->count, name, &err))
        return -1;
    rs_cli_fail(PROG, "%s", err.msg);
    return RS_EXIT_USAGE;
}

/* Reads every file into text[nfiles]. Refused (exit 2), as input that cannot
 * give a true score: a file with another number of lines than the
 * hypothesis, and hypotheses in the Moses n-best form. Returns -1 to go on,
 * else the exit status. */
static int read_inputs(const bleu_request *rq, rs_lines *text)
{
    const char *const *files = rq->files;
    for (int i = 0; i < rq->nfiles; i++)
        if (read_lines(&text[i], files[i]) < 0)
            return RS_EXIT_FAIL;
    if (text[0].count == 0)
        return rs_cli_fail(PROG, "%s has no lines to score", files[0]);
    /* First: an n-best list of N > 1 also has N times the lines, and what
     * it is explains the count. */
    const int nbest = refuse_nbest(&text[0], hyp_name(rq));
    if (nbest != -1)
        return nbest;
    for (int i = 1; i < rq->nfiles; i++)
        if (text[i].count != text[0].count) {
            rs_cli_fail(PROG, "%s has %d line%s but %s has %d: one reference line per hypothesis",
                        hyp_name(rq), text[0].count, RS_S(text[0].count), files[i], text[i].count);
            return RS_EXIT_USAGE;
        }
    return -1;
}

/* Reads the other systems of a paired test into sys[n_others], refused as
 * the baseline's hypotheses would be; -1 to go on, else the exit status. */
static int read_systems(const bleu_request *rq, const rs_lines *base, rs_lines *sys)
{
    int status;
    for (int k = 0; k < rq->n_others; k++) {
        if (read_lines(&sys[k], rq->others[k]) < 0)
            return RS_EXIT_FAIL;
        if ((status = refuse_nbest(&sys[k], rq->others[k])) >= 0)
            return status;
        if (sys[k].count != base->count) {
            rs_cli_fail(PROG,
                        "%s has %d line%s but %s has %d: the systems of a paired test "
                        "translate the same sentences",
                        hyp_name(rq), base->count, RS_S(base->count), rq->others[k], sys[k].count);
            return RS_EXIT_USAGE;
        }
    }
    return -1;
}

/* --by-length: per bucket of source length, its sentences, BLEU and chrF. */
static int score_by_length(const bleu_request *rq, const rs_lines *text, const rs_lines *src,
                           const char **refs)
{
    const int nrefs = rq->nfiles - 1;
    rs_bucket_stats stats[RS_LENGTH_BUCKETS_MAX];
    rs_bucket_stats_init(stats, &rq->buckets);
    rs_error err;
    const rs_testset_systems in = {
        .text = text, .nrefs = nrefs, .name = strcmp(rq->files[0], "-") ? rq->files[0] : "<stdin>"};
    if (rs_testset_by_length(stats, &rq->buckets, &in, src, &rq->opts, refs, &err))
        return rs_cli_fail(PROG, "%s", err.msg);
    int any_few = 0;
    if (rq->tsv)
        printf("bucket\tsentences\tbleu\tchrf\n");
    else
        printf("%-8s %9s %7s %7s\n", "words", "sentences", "BLEU", "chrF2");
    for (int i = 0; i < rq->buckets.count; i++) {
        char name[32], bleu[32] = "nan", chrf[32] = "nan";
        rs_length_bucket_name(&rq->buckets, i, name, sizeof name);
        if (stats[i].sentences) {
            rs_bleu_result b;
            rs_chrf_result c;
            rs_bleu_compute(&stats[i].bleu, &b);
            rs_chrf_compute(&stats[i].chrf, &c);
            snprintf(bleu, sizeof bleu, "%.2f", b.score);
            snprintf(chrf, sizeof chrf, "%.2f", c.score);
        } else if (!rq->tsv) {
            strcpy(bleu, "-");
            strcpy(chrf, "-");
        }
        /* The TSV keeps its four columns (plot and the Python package read
         * them); its sentences column tells a few-sentence bucket. */
        const int few = rs_length_bucket_is_few(stats[i].sentences);
        any_few |= few;
        if (rq->tsv)
            printf("%s\t%lld\t%s\t%s\n", name, stats[i].sentences, bleu, chrf);
        else
            printf("%-8s %9lld %7s %7s%s\n", name, stats[i].sentences, bleu, chrf,
                   few ? "  few" : "");
    }
    if (any_few && !rq->tsv)
        printf("few: fewer than %d sentences, a BLEU that any one of them moves by points\n",
               RS_LENGTH_FEW);
    return 0;
}

/* Scores every segment: one line each with --sentence, else the corpus. */
static int score_lines(const bleu_request *rq, const rs_lines *text, const char **refs,
                       const char *bleu_sig, const char *chrf_sig)
{
    const int nrefs = rq->nfiles - 1;
    rs_bleu_stats bleu;
    rs_chrf_stats chrf;
    rs_bleu_stats_init(&bleu);
    rs_chrf_stats_init(&chrf);
    rs_error err;
    for (int line = 0; line < text[0].count; line++) {
        rs_testset_refs(text, nrefs, line, refs);
        const char *hyp = text[0].lines[line];
        if (rq->sentence) {
            rs_bleu_stats_init(&bleu);
            rs_chrf_stats_init(&chrf);
        }
        if ((rq->want_bleu && rs_bleu_stats_add(&bleu, hyp, refs, nrefs, &rq->opts, &err) < 0) ||
            (rq->want_chrf && rs_chrf_stats_add(&chrf, hyp, refs, nrefs, &rq->opts, &err) < 0)) {
            rs_cli_fail(PROG, "%s:%d: %s", strcmp(rq->files[0], "-") ? rq->files[0] : "<stdin>",
                        line + 1, err.msg);
            return -1;
        }
        if (rq->sentence)
            print_scores(rq->want_bleu ? &bleu : NULL, rq->want_chrf ? &chrf : NULL, 1, bleu_sig,
                         chrf_sig, "\t");
    }
    if (!rq->sentence)
        print_scores(rq->want_bleu ? &bleu : NULL, rq->want_chrf ? &chrf : NULL, 0, bleu_sig,
                     chrf_sig, "\n");
    return 0;
}

/* --paired-bs, --paired-ar: one line per system, the baseline first. */
static void print_paired(const bleu_request *rq, const rs_paired_result *res)
{
    int width = 6;
    for (int s = 0; s <= rq->n_others; s++) {
        const int len = (int)strlen(s ? rq->others[s - 1] : hyp_name(rq));
        width = len > width ? len : width;
    }
    const int bs = rq->paired == RS_PAIRED_BS;
    printf("%-*s %7s %s%8s\n", width, "system", rq->want_chrf ? "chrF2" : "BLEU",
           bs ? "  mean ± 95% CI " : "", "p");
    for (int s = 0; s <= rq->n_others; s++) {
        printf("%-*s %7.2f", width, s ? rq->others[s - 1] : hyp_name(rq), res[s].score);
        if (bs)
            printf("  %6.2f ± %5.2f", res[s].mean, res[s].ci);
        if (s)
            printf("  %.4f%s\n", res[s].p, res[s].p < 0.05 ? " *" : "");
        else
            printf("  %6s\n", "-");
    }
}

/* Reads the other systems, runs the test and prints its table; the exit status. */
static int score_paired(const bleu_request *rq, const rs_lines *text, const char **refs,
                        const char *bleu_sig)
{
    const int systems = rq->n_others + 1, n = text[0].count;
    const int samples = rq->paired_n                 ? rq->paired_n
                        : rq->paired == RS_PAIRED_BS ? RS_PAIRED_BS_SAMPLES
                                                     : RS_PAIRED_AR_SAMPLES;
    rs_lines sys[RS_MAX_SYSTEMS - 1] = {{0}};
    rs_paired_result res[RS_MAX_SYSTEMS];
    const rs_paired_metric *metric = rq->want_chrf ? &rs_paired_chrf : &rs_paired_bleu;
    void *stats = calloc((size_t)systems * (size_t)n, metric->size);
    int status = stats ? read_systems(rq, &text[0], sys)
                       : rs_cli_fail(PROG, "out of memory for %d systems' statistics", systems);
    rs_error err;
    const rs_testset_systems systems_in = {text,         rq->nfiles - 1, sys,
                                           rq->n_others, hyp_name(rq),   rq->others};
    if (status < 0 &&
        (rq->want_chrf ? rs_testset_paired_chrf_stats(stats, &systems_in, &rq->opts, refs, &err)
                       : rs_testset_paired_stats(stats, &systems_in, &rq->opts, refs, &err)))
        status = rs_cli_fail(PROG, "%s", err.msg);
    const rs_paired_table table = {metric, stats, systems, n};
    if (status < 0 && rs_paired_metric_run((rs_paired_test)rq->paired, &table, samples,
                                           (uint64_t)rq->seed, res, &err))
        status = rs_cli_fail(PROG, "%s", err.msg);
    if (status < 0) {
        /* sacreBLEU's signature names the test, its size and the seed. */
        const char *rest = strchr(bleu_sig, '|');
        fprintf(stderr, PROG ": %s|%.*s|%s:%d|seed:%d%s\n", rq->want_chrf ? "chrF2" : "BLEU",
                (int)(rest - bleu_sig), bleu_sig, rq->paired == RS_PAIRED_BS ? "bs" : "ar", samples,
                rq->seed, rest);
        fprintf(stderr, PROG ": %s, %d %s, the baseline %s\n",
                rq->paired == RS_PAIRED_BS ? "paired bootstrap resampling"
                                           : "paired approximate randomization",
                samples, rq->paired == RS_PAIRED_BS ? "resamples" : "trials", hyp_name(rq));
        print_paired(rq, res);
        status = fflush(stdout) == 0
                     ? RS_EXIT_OK
                     : rs_cli_fail(PROG, "cannot write the scores: %s", strerror(errno));
    }
    for (int k = 0; k < rq->n_others; k++)
        rs_lines_free(&sys[k]);
    free(stats);
    return status;
}

int cmd_bleu(int argc, char **argv)
{
    bleu_request rq = {
        .opts = {0, RS_BLEU_TOK_13A}, .paired = -1, .seed = RS_PAIRED_SEED, .metric = 2};
    int status = parse_request(argc, argv, &rq);
    if (status >= 0) {
        free(rq.files);
        return status;
    }
    status = RS_EXIT_FAIL;
    const int nrefs = rq.nfiles - 1;
    rs_lines src = {0};
    rs_lines *text = calloc((size_t)rq.nfiles, sizeof *text);
    const char **refs = calloc((size_t)nrefs, sizeof *refs);
    if (!text || !refs) {
        rs_cli_fail(PROG, "out of memory");
        goto done;
    }
    if ((status = read_inputs(&rq, text)) >= 0)
        goto done;
    status = RS_EXIT_FAIL;
    if (rq.by_length) {
        if (read_lines(&src, rq.src) < 0)
            goto done;
        if (src.count != text[0].count) {
            rs_cli_fail(PROG, "%s has %d line%s but %s has %d", rq.src, src.count, RS_S(src.count),
                        hyp_name(&rq), text[0].count);
            status = RS_EXIT_USAGE;
            goto done;
        }
        status = score_by_length(&rq, text, &src, refs) ? RS_EXIT_FAIL : RS_EXIT_OK;
        goto done;
    }
    /* The signatures, sacreBLEU's "NAME|key:value|..." form. Sentence BLEU
     * uses effective order (sacreBLEU's sentence_bleu default). */
    char bleu_sig[256], chrf_sig[256];
    const int sig_nrefs = rs_testset_nrefs(text, nrefs, refs);
    rs_bleu_signature(&rq.opts, sig_nrefs, rq.sentence, "rnnsearch-" RS_VERSION, bleu_sig,
                      sizeof bleu_sig);
    rs_chrf_signature(&rq.opts, sig_nrefs, "rnnsearch-" RS_VERSION, chrf_sig, sizeof chrf_sig);
    if (rq.paired >= 0) {
        status = score_paired(&rq, text, refs, rq.want_chrf ? chrf_sig : bleu_sig);
        goto done;
    }
    if (rq.want_bleu && !rq.with_signature)
        fprintf(stderr, PROG ": BLEU|%s\n", bleu_sig);
    if (rq.want_chrf && !rq.with_signature)
        fprintf(stderr, PROG ": chrF%d|%s\n", RS_CHRF_BETA, chrf_sig);
    if (score_lines(&rq, text, refs, rq.with_signature ? bleu_sig : NULL,
                    rq.with_signature ? chrf_sig : NULL))
        goto done;
    status = fflush(stdout) == 0
                 ? RS_EXIT_OK
                 : rs_cli_fail(PROG, "cannot write the scores: %s", strerror(errno));
done:
    if (text)
        for (int i = 0; i < rq.nfiles; i++)
            rs_lines_free(&text[i]);
    free(text);
    rs_lines_free(&src);
    free(refs);
    free(rq.files);
    return status;
}
