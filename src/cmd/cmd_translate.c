/* rnnsearch translate: sentences in, translations out (greedy or beam search,
 * batched, one model or an ensemble), optionally n-best lists, alignments and
 * a BLEU score against references. Lines from a pipe or a terminal are
 * translated as soon as they arrive. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/alignment.h"
#include "eval/translate_stream.h"
#include "model/checkpoint.h"
#include "cli/cli.h"
#include "common/blas_buffer.h"
#include "cli/options.h"
#include "common/clock.h"
#include "model/codec.h"
#include "nn/network.h"
#include "cmd/commands.h"
#include "text/corpus.h"
#include "common/fileio.h"
#include "train/output.h"
#include "search/decode.h"
#include "search/translate.h"

#define PROG "rnnsearch translate"

/* What the command line asks for. */
typedef struct {
    rs_models *models;
    const char *output, *ref_path, *input;
    int threads, quiet;
    int int8; /* --int8: the decoder step's products with int8 weights */
    rs_translate_options topt;
    rs_stream_style style;
    float weights[RS_MAX_MODELS]; /* --weights, in -m order */
    int n_weights;
    const char *shortlist_path; /* --shortlist FILE (in shortlist_file), sizes in topt.shortlist */
    char shortlist_file[4096];
    rs_output_rule rule; /* what -o may be: not an input, a checkpoint, a run's file */
    rs_cli_args args;    /* holds the --config file's values */
} translate_request;

/* --weights 0.7,0.3 (a list in a --config file gives one item at a time):
 * the numbers are appended to rq->weights. */
static int set_weights(void *req, const char *arg)
{
    translate_request *rq = req;
    rs_error err;
    if (rs_ensemble_weights_parse(arg, rq->weights, &rq->n_weights, RS_MAX_MODELS, &err))
        return rs_cli_usage_error(PROG, "--weights: %s", err.msg);
    return -1;
}

/* --shortlist FILE[,FIRST[,BEST]] (Marian's sizes: FIRST frequent words,
 * BEST per source token). */
static int set_shortlist(void *req, const char *arg)
{
    translate_request *rq = req;
    rs_error err;
    if (rs_shortlist_parse(arg, rq->shortlist_file, sizeof rq->shortlist_file, &rq->topt.shortlist,
                           &err))
        return rs_cli_usage_error(PROG, "--shortlist: %s", err.msg);
    rq->shortlist_path = rq->shortlist_file;
    return -1;
}

/* --remove-bpe[=MARKER]: fairseq's names: "@@" means subword-nmt's "@@ " (a
 * bare "@@" would leave "hou se"), as subword_nmt does. */
static int set_remove_bpe(void *rq, const char *arg)
{
    rs_translate_options *topt = &((translate_request *)rq)->topt;
    if (arg && (!strcmp(arg, "@@") || !strcmp(arg, "subword_nmt")))
        arg = RS_BPE_MARKER;
    if (arg && !strcmp(arg, "sentencepiece"))
        topt->remove_bpe = RS_BPE_SENTENCEPIECE;
    else if (rs_cli_bpe_marker(PROG, arg, &topt->remove_bpe))
        return RS_EXIT_USAGE;
    return -1;
}

static int set_alignment(void *rq, const char *arg)
{
    rs_stream_style *st = &((translate_request *)rq)->style;
    if (!arg)
        st->alignment = 1;
    else if (!rs_stream_alignment(arg, st))
        return rs_cli_usage_error(PROG, "--alignment: '%s' is not hard, soft or a number in (0, 1]",
                                  arg);
    return -1;
}

/* "--alignment soft" as Marian writes it, as well as "--alignment=soft". */
static int alignment_word(const char *word)
{
    rs_stream_style peek = {0};
    return rs_stream_alignment(word, &peek);
}

#define RQ translate_request
#define SECTION .section = "translation"
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_MODELS, RS_AT(RQ, models), .value = "MODEL", .flags = RS_CLI_REPEAT,
     .help = "the model (required; repeat for an ensemble)"},
    {"weights", .kind = RS_CLI_CALL, .set = set_weights, .value = "LIST", SECTION,
     .flags = RS_CLI_LIST,
     .help = "an ensemble's weights W1,W2,..., one per -m in order (as\n"
             "Marian's): log p = sum_k w_k log p_k, w_k = W_k / sum W;\n"
             "finite, not negative, not all zero (default: equal)"},
    {"input", 'i', RS_CLI_STRING, RS_AT(RQ, input), .value = "FILE",
     .help = "the sentences to translate, as Marian's -i (or FILE\n"
             "after the options; default: standard input)"},
    {"output", 'o', RS_CLI_STRING, RS_AT(RQ, output), .value = "FILE",
     .help = "write translations here (default: standard output);\n"
             "FILE is replaced once complete, never left half\n"
             "written, and may not be an input, a checkpoint or\n"
             "in a training run's directory"},
    {"beam", .kind = RS_CLI_INT, RS_AT(RQ, topt.beam), 1, RS_MAX_BEAM, "K", SECTION,
     .help = "beam search with K hypotheses (default: 1, greedy)"},
    {"length-penalty", .kind = RS_CLI_FLOAT, RS_AT(RQ, topt.length_penalty), -RS_MAX_LENGTH_PENALTY,
     RS_MAX_LENGTH_PENALTY, "A", SECTION,
     .help = "rank hypotheses by log p / (length + 1)^A (default: 1.0)"},
    {"n-best", .kind = RS_CLI_INT, RS_AT(RQ, topt.n_best), 1, RS_MAX_BEAM, "N", SECTION,
     .help = "print N hypotheses per sentence in the Moses/Marian\n"
             "format 'id ||| translation ||| F0= logprob ||| score'\n"
             "(id from 0; needs --beam >= N, and without --beam searches\n"
             "with a beam of N). At N = 1 the command line and a file\n"
             "differ, on purpose: --n-best 1 is the list form (Marian's\n"
             "--n-best, a one-item list for rescoring), while any\n"
             "--config file's n_best: 1 is plain output, the meaning\n"
             "Joey NMT gives testing: n_best: 1 (its default), so that a\n"
             "Joey config translates as Joey does; a file's n_best of 2\n"
             "or more is the list form. For a file's list of one, give\n"
             "--n-best 1 on the command line"},
    {"batch-size", .kind = RS_CLI_INT, RS_AT(RQ, topt.batch_size), 1, RS_MAX_BATCH, "N", SECTION,
     .help = "sentences decoded together (default: %D)"},
    {"max-len", .kind = RS_CLI_INT, RS_AT(RQ, topt.max_len), 1, RS_MAX_LENGTH, "N", SECTION,
     .help = "longest output in tokens (default: 2 x source + 10)"},
    {"max-src-len", .kind = RS_CLI_INT, RS_AT(RQ, topt.max_src_len), 1, RS_MAX_LENGTH, "N", SECTION,
     .help = "longer sources are cut to their first N tokens, with a\n"
             "warning naming the line (default: %D)"},
    {"replace-unk", .kind = RS_CLI_FLAG, RS_AT(RQ, topt.replace_unk), SECTION,
     .help = "replace <unk> by the source token it attends to most\n"
             "(punctuation excluded)"},
    {"remove-bpe", .kind = RS_CLI_CALL, .set = set_remove_bpe, .value = "MARKER",
     .flags = RS_CLI_OPTIONAL, .takes = rs_cli_bpe_value, SECTION,
     .help = "join subword-nmt's BPE in the output text as fairseq\n"
             "does: every MARKER is removed, one at the line's end\n"
             "too ('hou@@ se' -> 'house'; default MARKER: '@@ ';\n"
             "'@@' and subword_nmt mean '@@ '); sentencepiece\n"
             "decodes SentencePiece pieces as fairseq does. As a\n"
             "separate word only '@@', '@@ ', subword_nmt and\n"
             "sentencepiece are its value (--remove-bpe FILE reads FILE)"},
    {"post-process", .kind = RS_CLI_CHOICE, RS_AT(RQ, topt.post_process), .value = "KIND", SECTION,
     .names = rs_post_process_names,
     .help = "turn the output pieces of a model trained on\n"
             "pre-segmented text into text: none, bpe ('@@ '\n"
             "joined), sentencepiece or joiner (default: the model's\n"
             "post_process, which 'rnnsearch info' shows)"},
    {"alignment", .kind = RS_CLI_CALL, .set = set_alignment, .value = "WHAT",
     .flags = RS_CLI_OPTIONAL, .takes = alignment_word, SECTION,
     .help = "append ' ||| ' and the alignment, as Marian does: hard\n"
             "(default: 'i-j' source-target links, argmax per target\n"
             "token), a threshold X in (0, 1] (links of weight >= X)\n"
             "or soft (each target token's weights, ',' between)"},
    {"shortlist", .kind = RS_CLI_CALL, .set = set_shortlist, .value = "FILE[,FIRST[,BEST]]",
     SECTION,
     .help = "\n"
             "compute the output layer only for each batch's likely\n"
             "words, as Marian's lexical shortlist: the FIRST\n"
             "(default 100) first target words and each source\n"
             "token's BEST (default 100) most probable translations\n"
             "in FILE, a table made by 'rnnsearch lexicon' for this\n"
             "model; the union over the batch's sentences, so a\n"
             "translation may depend on its batch (--batch-size 1:\n"
             "never); faster where the output layer dominates, and\n"
             "translations that may differ a little from the exact\n"
             "ones (speed and BLEU: docs/performance.md)"},
    {"ref", .kind = RS_CLI_STRING, RS_AT(RQ, ref_path), .value = "FILE",
     .help = "score the translations against references (BLEU, chrF)"},
    {"quiet", .kind = RS_CLI_FLAG, RS_AT(RQ, quiet), .help = "no summary line on standard error"},
    {"threads", .kind = RS_CLI_INT, RS_AT(RQ, threads), 1, RS_MAX_THREADS, "N", SECTION,
     .help = "workers decoding batches side by side, one BLAS thread\n"
             "each; a lone batch splits its products over N BLAS\n"
             "threads (default: one worker, OpenBLAS's choice of\n"
             "threads)"},
    {"int8", .kind = RS_CLI_FLAG, RS_AT(RQ, int8), SECTION,
     .help = "decode with int8 copies of the decoder's weights, made\n"
             "when the model is loaded (the checkpoint is unchanged):\n"
             "a quarter of the weight bytes per step, and\n"
             "translations that may differ a little from the exact\n"
             "ones (default: off, exact float weights; speed and\n"
             "BLEU: docs/performance.md)"},
    {"config", .kind = RS_CLI_CONFIG_FILE, .value = "FILE",
     .help = "settings from the translation: section of a YAML file\n"
             "(keys named as the options, _ for -; the model from\n"
             "training: out or name when -m is not given); options\n"
             "on the command line win"},
    RS_CLI_HELP_ROW,
    {0},
};
#undef SECTION
#undef RQ

const rs_cli_command rs_translate_command = {
    "translate",
    PROG,
    "usage: " PROG " -m MODEL [-m MODEL ...] [OPTIONS] [FILE]\n\n"
    "Translates each line of FILE (default: standard input) and prints one\n"
    "translation per line; an empty line gives an empty line. MODEL is a checkpoint\n"
    "file or a directory models/NAME (its best.ckpt, else last.ckpt). Several -m\n"
    "decode as an ensemble: their log-probabilities are averaged at each step (they\n"
    "must share vocabularies and text settings). Lines from a pipe or a terminal\n"
    "are translated and printed as soon as they arrive.\n\n",
    NULL,
    25,
    sizeof(translate_request),
    option_table};

/* The model (-m, or the configuration's trained one), the input and the
 * checks across options; returns -1 to go on, else the exit status. */
static int check_request(int argc, char **argv, translate_request *rq)
{
    rs_translate_options *topt = &rq->topt;
    const char *trained = rs_cli_config_model(&rq->args);
    if (rq->models->count == 0 && trained && rs_cli_add_model(PROG, rq->models, trained))
        return RS_EXIT_USAGE;
    if (rq->models->count == 0)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL, or out: or name: in the "
                                        "training: section of --config FILE)");
    if (argc - optind + (rq->input != NULL) > 1)
        return rs_cli_usage_error(PROG, "more than one input file given");
    if (rq->n_weights && rq->n_weights != rq->models->count)
        return rs_cli_usage_error(PROG, "--weights gives %d weight%s for %d model%s (one per -m)",
                                  rq->n_weights, rq->n_weights == 1 ? "" : "s", rq->models->count,
                                  rq->models->count == 1 ? "" : "s");
    rs_error bad_weights;
    if (rq->n_weights && rs_ensemble_weights_check(rq->weights, rq->n_weights, &bad_weights))
        return rs_cli_usage_error(PROG, "--weights: %s", bad_weights.msg);
    topt->weights = rq->n_weights ? rq->weights : NULL;
    /* --n-best given on the command line asks for the n-best format even as 1
     * (Marian's habit); a file's n_best: 1 is Joey NMT's plain output, and
     * only a file's n_best above 1 asks for the format. */
    rq->style.nbest_format = rs_cli_seen(&rq->args, "n-best") || topt->n_best > 1;
    /* The n-best format is the one output that shows scores. */
    topt->skip_scores = !rq->style.nbest_format;
    if (!topt->n_best)
        topt->n_best = 1;
    /* --n-best N alone searches with a beam of N, the smallest that holds N
     * hypotheses (fairseq, OpenNMT-py and Joey NMT refuse an n-best larger
     * than the beam, but their beam is 5 unless given; ours is 1). */
    if (!topt->beam)
        topt->beam = topt->n_best;
    if (topt->n_best > topt->beam)
        return rs_cli_usage_error(PROG, "--n-best %d needs --beam of at least %d", topt->n_best,
                                  topt->n_best);
    if (rq->style.alignment && rq->ref_path)
        return rs_cli_usage_error(
            PROG,
            "--alignment and --ref do not go together (the score would include the alignment)");
    topt->want_alignment = rq->style.alignment != 0;
    if (!rq->input)
        rq->input = optind < argc ? argv[optind] : "-";
    rs_error refused;
    int bad = rs_output_add_input(&rq->rule, rq->input, &refused) ||
              rs_output_add_input(&rq->rule, rq->ref_path, &refused) ||
              rs_output_add_input(&rq->rule, rq->shortlist_path, &refused) ||
              rs_output_add_input(&rq->rule, rq->args.config_path, &refused);
    for (int k = 0; k < rq->models->count && !bad; k++)
        bad = rs_output_add_model(&rq->rule, rq->models->args[k], &refused);
    if (bad || rs_output_check(&rq->rule, rq->output, &refused))
        return rs_cli_usage_error(PROG, "%s", refused.msg);
    return -1;
}

/* Each chunk flushed through -o's rule (it names the file). */
static int flush_output(void *output, rs_error *err)
{
    return rs_output_flush(output, err);
}

int cmd_translate(int argc, char **argv)
{
    static rs_models models;
    translate_request rq = {.models = &models};
    rs_translate_options_default(&rq.topt);
    rs_output_rule_init(&rq.rule, RS_OUTPUT_TEXT, NULL);
    rq.topt.n_best = 0; /* not given: 1, and no n-best format (check_request) */
    rq.topt.beam = 0;   /* not given: --n-best's N, else 1 (check_request) */
    int status = rs_cli_parse(&rs_translate_command, &rq, &rq.args, argc, argv);
    if (status < 0)
        status = check_request(argc, argv, &rq);
    if (status >= 0) {
        rs_output_rule_free(&rq.rule);
        rs_cli_end(&rq.args);
        return status;
    }
    rs_error err;
    if (rq.threads > 0 && rs_blas_threads(rq.threads, &err))
        return rs_cli_fail(PROG, "%s", err.msg);
    rq.topt.workers = rq.threads; /* 0 (not given): one */

    rs_codec codec = {0};
    rs_translator tr = {0};
    rs_lines refs = {0};
    rs_line_reader reader;
    rs_output output = {.f = stdout};
    rs_translate_stream run;
    rs_translate_stream_init(&run);
    run.style = rq.style;
    run.warn = stderr;
    run.prog = PROG;
    run.ref_path = rq.ref_path;
    run.refs = &refs;
    run.flush = flush_output;
    run.flush_ctx = &output;
    int reader_open = 0;
    status = RS_EXIT_FAIL;
    models.ready = (rs_ready_options){.int8 = rq.int8};
    if (rs_models_translator(&models, &codec, rq.shortlist_path, &rq.topt, &tr, &err))
        goto fail;
    if (rq.ref_path && rs_lines_read(rq.ref_path, &refs, &err))
        goto fail;
    if (rs_line_reader_open(&reader, rq.input, &err))
        goto fail;
    reader_open = 1;
    if (rs_output_open(&output, &rq.rule, rq.output, &err))
        goto fail;
    run.out = output.f;
    const double start = rs_clock_seconds();
    if (rs_translate_stream_run(&run, &tr, &reader, rq.topt.batch_size, &err) ||
        rs_translate_stream_check_refs(&run, &err) || rs_output_commit(&output, &err))
        goto fail;
    if (!rq.quiet) {
        double seconds = rs_clock_seconds() - start;
        fprintf(stderr, PROG ": %ld sentence%s, %ld token%s out, %.2f s, %.1f sentences/s\n",
                run.line_no, RS_S(run.line_no), run.tokens_out, RS_S(run.tokens_out), seconds,
                seconds > 0 ? run.line_no / seconds : 0.0);
    }
    if (rq.ref_path)
        rs_translate_stream_scores(&run, stderr);
    status = RS_EXIT_OK;
    goto done;
fail:
    rs_cli_fail(PROG, "%s", err.msg);
done:
    rs_output_abort(&output);
    rs_lines_free(&refs);
    if (reader_open)
        rs_line_reader_close(&reader);
    rs_translator_free(&tr);
    rs_codec_free(&codec);
    rs_models_free(&models);
    rs_output_rule_free(&rq.rule);
    rs_cli_end(&rq.args);
    return status;
}
