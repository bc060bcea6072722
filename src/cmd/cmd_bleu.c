/* rnnsearch bleu: corpus BLEU and chrF of a hypothesis file against one or
 * more reference files, as the sacreBLEU command line computes them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/bleu_report.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "text/corpus.h"
#include "cmd/commands.h"

#define PROG "rnnsearch bleu"

enum { RS_MAX_SYSTEMS = 64 }; /* -i given for --paired-bs and --paired-ar */

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

/* The exit status of a reader of eval/testset.h (-1 to go on), its problem
 * reported: input that cannot give a true score is refused with status 2. */
static int read_status(int status, const rs_error *err)
{
    if (status == 0)
        return -1;
    rs_cli_fail(PROG, "%s", err->msg);
    return status == RS_TESTSET_REFUSED ? RS_EXIT_USAGE : RS_EXIT_FAIL;
}

/* The scores written and flushed: the exit status. */
static int written(void)
{
    return fflush(stdout) == 0 ? RS_EXIT_OK
                               : rs_cli_fail(PROG, "cannot write the scores: %s", strerror(errno));
}

/* --paired-bs, --paired-ar: the other systems read, the test run and its
 * table printed; the exit status. */
static int score_paired(const bleu_request *rq, const rs_testset_systems *in, const char **refs,
                        const char *bleu_sig)
{
    const rs_testset_test test = {(rs_paired_test)rq->paired,
                                  rq->paired_n                 ? rq->paired_n
                                  : rq->paired == RS_PAIRED_BS ? RS_PAIRED_BS_SAMPLES
                                                               : RS_PAIRED_AR_SAMPLES,
                                  (uint64_t)rq->seed, rq->want_chrf};
    rs_lines sys[RS_MAX_SYSTEMS - 1] = {{0}};
    rs_paired_result res[RS_MAX_SYSTEMS];
    rs_testset_systems systems = *in;
    systems.sys = sys;
    rs_error err;
    int status = read_status(
        rs_testset_read_systems(sys, rq->others, rq->n_others, &in->text[0], in->name, &err), &err);
    if (status < 0 && rs_testset_paired(res, &systems, &test, &rq->opts, refs, &err))
        status = rs_cli_fail(PROG, "%s", err.msg);
    if (status < 0) {
        /* sacreBLEU's signature names the test, its size and the seed. */
        const char *rest = strchr(bleu_sig, '|');
        const int bs = rq->paired == RS_PAIRED_BS;
        fprintf(stderr, PROG ": %s|%.*s|%s:%d|seed:%d%s\n", rq->want_chrf ? "chrF2" : "BLEU",
                (int)(rest - bleu_sig), bleu_sig, bs ? "bs" : "ar", test.samples, rq->seed, rest);
        fprintf(stderr, PROG ": %s, %d %s, the baseline %s\n",
                bs ? "paired bootstrap resampling" : "paired approximate randomization",
                test.samples, bs ? "resamples" : "trials", in->name);
        rs_paired_report(stdout, &systems, res, &test);
        status = written();
    }
    for (int k = 0; k < rq->n_others; k++)
        rs_lines_free(&sys[k]);
    return status;
}

/* --by-length: the sources read, and per bucket its sentences, BLEU and chrF. */
static int score_by_length(const bleu_request *rq, const rs_testset_systems *in, const char **refs)
{
    rs_lines src = {0};
    rs_bucket_stats stats[RS_LENGTH_BUCKETS_MAX];
    rs_bucket_stats_init(stats, &rq->buckets);
    rs_error err;
    int status =
        read_status(rs_testset_read_source(&src, rq->src, &in->text[0], hyp_name(rq), &err), &err);
    if (status < 0 && rs_testset_by_length(stats, &rq->buckets, in, &src, &rq->opts, refs, &err))
        status = rs_cli_fail(PROG, "%s", err.msg);
    if (status < 0) {
        rs_by_length_report(stdout, &rq->buckets, stats, rq->tsv);
        status = RS_EXIT_OK;
    }
    rs_lines_free(&src);
    return status;
}

/* The read test set scored as asked: the exit status. */
static int score(const bleu_request *rq, const rs_lines *text, const char **refs)
{
    const int nrefs = rq->nfiles - 1;
    rs_testset_systems in = {.text = text,
                             .nrefs = nrefs,
                             .others = rq->n_others,
                             .name = strcmp(rq->files[0], "-") ? rq->files[0] : "<stdin>",
                             .other_names = rq->others};
    if (rq->by_length)
        return score_by_length(rq, &in, refs);
    /* The signatures, sacreBLEU's "NAME|key:value|..." form. Sentence BLEU
     * uses effective order (sacreBLEU's sentence_bleu default). */
    char bleu_sig[256], chrf_sig[256];
    const int sig_nrefs = rs_testset_nrefs(text, nrefs, refs);
    rs_bleu_signature(&rq->opts, sig_nrefs, rq->sentence, "rnnsearch-" RS_VERSION, bleu_sig,
                      sizeof bleu_sig);
    rs_chrf_signature(&rq->opts, sig_nrefs, "rnnsearch-" RS_VERSION, chrf_sig, sizeof chrf_sig);
    if (rq->paired >= 0) {
        in.name = hyp_name(rq);
        return score_paired(rq, &in, refs, rq->want_chrf ? chrf_sig : bleu_sig);
    }
    if (rq->want_bleu && !rq->with_signature)
        fprintf(stderr, PROG ": BLEU|%s\n", bleu_sig);
    if (rq->want_chrf && !rq->with_signature)
        fprintf(stderr, PROG ": chrF%d|%s\n", RS_CHRF_BETA, chrf_sig);
    const rs_bleu_report what = {rq->want_bleu, rq->want_chrf, rq->sentence,
                                 rq->with_signature ? bleu_sig : NULL,
                                 rq->with_signature ? chrf_sig : NULL};
    rs_error err;
    if (rs_bleu_report_lines(stdout, &what, &in, &rq->opts, refs, &err))
        return rs_cli_fail(PROG, "%s", err.msg);
    return written();
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
    rs_lines *text = calloc((size_t)rq.nfiles, sizeof *text);
    const char **refs = calloc((size_t)rq.nfiles - 1, sizeof *refs);
    rs_error err;
    if (!text || !refs)
        status = rs_cli_fail(PROG, "out of memory");
    else if ((status = read_status(rs_testset_read(text, rq.files, rq.nfiles, hyp_name(&rq), &err),
                                   &err)) < 0)
        status = score(&rq, text, refs);
    for (int i = 0; text && i < rq.nfiles; i++)
        rs_lines_free(&text[i]);
    free(text);
    free(refs);
    free(rq.files);
    return status;
}
