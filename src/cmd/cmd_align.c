/* rnnsearch align: the alignment matrices of translations (greedy) or of
 * given pairs (forced decoding), as text, TSV, JSON, Pharaoh, SVG or HTML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/align_sentences.h"
#include "cli/cli.h"
#include "common/blas_buffer.h"
#include "cli/options.h"
#include "train/align_output.h"
#include "model/codec.h"
#include "cmd/commands.h"
#include "search/translate.h"
#include "serve/run.h"
#include "train/rundir.h"
#include "train/watch.h"

#define PROG "rnnsearch align"

/* --color's values; its index is what the request holds. */
static const char *const whens[] = {"auto", "always", "never", NULL};

/* What the command line asks for. */
typedef struct {
    const char *model_arg, *title, *input, *replay;
    char replay_dir[4200]; /* --replay's directory, a NAME resolved */
    int pairs_mode, swap, threads, color;
    int words;       /* --words */
    const char *bpe; /* --remove-bpe's marker, or NULL */
    rs_translate_options topt;
    rs_align_output sk;
} align_request;

/* --format NAME: the writer of that name; NULL after reporting a bad one. */
static const rs_align_writer *format_writer(const char *name)
{
    const rs_align_writer *found = rs_align_writer_find(name);
    if (!found) {
        char names[256] = "";
        for (const rs_align_writer *w = rs_align_writers; w->name; w++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     w == rs_align_writers ? "" : ", ", w->name);
        rs_cli_usage_error(PROG, "--format: '%s' is not one of %s", name, names);
    }
    return found;
}

/* The checks between options, once all are read; -1 to go on, else the exit status. */
static int check_request(int argc, char **argv, align_request *rq, rs_align_output *sk)
{
    if (rq->replay && (rq->model_arg || optind < argc))
        return rs_cli_usage_error(PROG, "--replay DIR writes the page of a training run: no "
                                        "-m and no input file with it");
    if (rq->replay) {
        /* NAME is looked for as -m looks (a directory as given). */
        rs_error missing;
        if (rs_run_dir_locate(rq->replay, rq->replay_dir, sizeof rq->replay_dir, &missing))
            return rs_cli_fail(PROG, "--replay: %s", missing.msg);
        rq->replay = rq->replay_dir;
        /* The page of a run goes anywhere but over the run's files: in its
         * directory it may be replay.html. */
        static const char *const read[] = {RS_TRAIN_LOG, RS_LOSS_TABLE, RS_WATCH_FILE};
        rs_error refused;
        char path[4200];
        rs_output_rule_init(&sk->rule, RS_OUTPUT_TEXT, "replay.html");
        for (size_t i = 0; i < sizeof read / sizeof *read; i++) {
            snprintf(path, sizeof path, "%s/%s", rq->replay, read[i]);
            if (rs_output_add_input(&sk->rule, path, &refused))
                return rs_cli_usage_error(PROG, "%s", refused.msg);
        }
        if (rs_output_check(&sk->rule, sk->out_path, &refused))
            return rs_cli_usage_error(PROG, "%s", refused.msg);
        return -1;
    }
    if (!rq->model_arg)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    if (argc - optind > 1)
        return rs_cli_usage_error(PROG, "more than one input file given");
    if (rq->swap && !rq->pairs_mode)
        return rs_cli_usage_error(PROG, "--swap needs --pairs");
    if (rq->pairs_mode && rq->topt.beam > 1)
        return rs_cli_usage_error(PROG, "--beam translates; --pairs aligns the given targets");
    if (sk->style.threshold > 0.0f && !(sk->writer->options & RS_ALIGN_THRESHOLD))
        return rs_cli_usage_error(PROG, "--threshold applies to --format pharaoh only");
    if (rq->words && rq->bpe)
        return rs_cli_usage_error(PROG, "--words (SentencePiece) and --remove-bpe (BPE) exclude "
                                        "each other");
    rq->input = optind < argc ? argv[optind] : "-";
    rs_error refused;
    if (rs_output_add_input(&sk->rule, rq->input, &refused) ||
        rs_output_add_model(&sk->rule, rq->model_arg, &refused) ||
        (!sk->writer->file_per_sentence && rs_output_check(&sk->rule, sk->out_path, &refused)))
        return rs_cli_usage_error(PROG, "%s", refused.msg);
    return -1;
}

static int set_format(void *rq, const char *arg)
{
    rs_align_output *sk = &((align_request *)rq)->sk;
    return (sk->writer = format_writer(arg)) ? -1 : RS_EXIT_USAGE;
}

static int set_numbers(void *rq, const char *arg)
{
    ((align_request *)rq)->sk.style.flags |= RS_ALIGN_NUMBERS;
    return -1;
}

static int set_remove_bpe(void *rq, const char *arg)
{
    return rs_cli_bpe_marker(PROG, arg, &((align_request *)rq)->bpe) ? RS_EXIT_USAGE : -1;
}

#define RQ align_request
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_STRING, RS_AT(RQ, model_arg), .value = "MODEL",
     .help = "checkpoint file or models/NAME directory (required)"},
    {"format", 'f', RS_CLI_CALL, .set = set_format, .value = "FMT",
     .help = "text, tsv, json, pharaoh, svg or html (default: text)"},
    {"pairs", .kind = RS_CLI_FLAG, RS_AT(RQ, pairs_mode),
     .help = "input is source<TAB>target pairs (forced decoding)"},
    {"swap", .kind = RS_CLI_FLAG, RS_AT(RQ, swap),
     .help = "with --pairs: exchange source and target"},
    {"threshold", .kind = RS_CLI_FLOAT, RS_AT(RQ, sk.style.threshold), 1e-9, 1.0, "X",
     .help = "pharaoh: every link of weight >= X, in (0, 1]\n"
             "(default: the argmax source token of each target token)"},
    {"numbers", .kind = RS_CLI_CALL, .set = set_numbers,
     .help = "text, html: print the weights instead of shading only"},
    {"words", .kind = RS_CLI_FLAG, RS_AT(RQ, words),
     .help = "merge SentencePiece pieces into words (a target word's\n"
             "row is the mean of its pieces' rows, a source word's\n"
             "column the sum of its pieces' columns)"},
    {"remove-bpe", .kind = RS_CLI_CALL, .set = set_remove_bpe, .value = "MARKER",
     .flags = RS_CLI_OPTIONAL,
     .help = "the same for BPE units: a token ending with MARKER\n"
             "(default '@@ ', its space dropped) continues into the\n"
             "next one ('hou@@ se' is the word 'house')"},
    {"color", .kind = RS_CLI_CHOICE, RS_AT(RQ, color), .value = "WHEN", .names = whens,
     .help = "text: auto, always or never (default: auto = when\n"
             "writing to a terminal, NO_COLOR is unset and TERM\n"
             "advertises 256 colours)"},
    {"output", 'o', RS_CLI_STRING, RS_AT(RQ, sk.out_path), .value = "PATH",
     .help = "write here (default: standard output). svg: a directory\n"
             "that receives 0001.svg, 0002.svg, ... (one per sentence),\n"
             "or a FILE.svg when there is one sentence. A file is\n"
             "replaced once complete, and may not be an input, a\n"
             "checkpoint or in a training run's directory (but\n"
             "for --replay's DIR/replay.html)"},
    {"out", 'o', RS_CLI_STRING, RS_AT(RQ, sk.out_path), .value = "PATH"}, /* -o's other name */
    {"title", .kind = RS_CLI_STRING, RS_AT(RQ, title), .value = "TEXT",
     .help = "svg, html: the title (default: \"alignment\" and the model)"},
    {"beam", .kind = RS_CLI_INT, RS_AT(RQ, topt.beam), 1, RS_MAX_BEAM, "K",
     .help = "beam search with K hypotheses: the alignment of the\n"
             "translation `translate --beam K` prints (default: 1,\n"
             "greedy)"},
    {"length-penalty", .kind = RS_CLI_FLOAT, RS_AT(RQ, topt.length_penalty), -RS_MAX_LENGTH_PENALTY,
     RS_MAX_LENGTH_PENALTY, "A", .help = "beam: rank by log p / (length + 1)^A (default: %D)"},
    {"batch-size", .kind = RS_CLI_INT, RS_AT(RQ, topt.batch_size), 1, RS_MAX_BATCH, "N",
     .help = "sentences decoded together (default: %D)"},
    {"max-len", .kind = RS_CLI_INT, RS_AT(RQ, topt.max_len), 1, RS_MAX_LENGTH, "N",
     .help = "longest output in tokens (default: 2 x source + 10)"},
    {"max-src-len", .kind = RS_CLI_INT, RS_AT(RQ, topt.max_src_len), 1, RS_MAX_LENGTH, "N",
     .help = "longer sources are cut to their first N tokens, with a\n"
             "warning naming the line (default: %D)"},
    {"threads", .kind = RS_CLI_INT, RS_AT(RQ, threads), 1, RS_MAX_THREADS, "N",
     .help = "BLAS threads (default: OpenBLAS's choice)"},
    {"replay", .kind = RS_CLI_STRING, RS_AT(RQ, replay), .value = "NAME|DIR",
     .help = "one self-contained HTML page replaying how the training\n"
             "run in DIR (or the model NAME, found as -m finds it)\n"
             "learned to align: its learning curves and its\n"
             "watched sentences' alignments at every evaluation\n"
             "(DIR/watch.jsonl, train --watch), with a slider and a\n"
             "play button; the training view of `serve`, without a server"},
    RS_CLI_HELP_ROW,
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "align",
    PROG,
    "usage: " PROG " -m MODEL [OPTIONS] [FILE]\n"
    "       " PROG " --replay NAME|DIR [-o PAGE.html]\n\n"
    "Shows where the decoder looked. Each line of FILE (default: standard input)\n"
    "is a source sentence: it is translated (greedy, or --beam) and the alignment matrix of\n"
    "the output printed (rows: target tokens and </s>, columns: source tokens\n"
    "and </s>). With --pairs, lines are source<TAB>target and the given target is\n"
    "force-decoded instead. Formats are described in docs/alignment.md.\n\n",
    NULL,
    25,
    sizeof(align_request),
    option_table};

/* Parses and checks the options into rq and sk; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, align_request *rq, rs_align_output *sk)
{
    rs_cli_args args;
    const int status = rs_cli_parse(&command, rq, &args, argc, argv);
    rs_cli_end(&args);
    return status >= 0 ? status : check_request(argc, argv, rq, sk);
}

/* align --replay DIR: the run's replay page, to standard output or written
 * whole to a file. */
static int write_replay(const char *dir, rs_align_output *sk)
{
    rs_error err;
    rs_output out;
    if (rs_output_open(&out, &sk->rule, sk->out_path, &err) ||
        rs_run_write_replay(out.f, dir, &err) || rs_output_commit(&out, &err)) {
        rs_output_abort(&out);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    return RS_EXIT_OK;
}

int cmd_align(int argc, char **argv)
{
    align_request rq = {0};
    rs_align_output *const sk = &rq.sk;
    rs_translate_options_default(&rq.topt);
    rq.topt.want_alignment = 1;
    *sk = (rs_align_output){.writer = rs_align_writer_find("text"), .out = stdout};
    rs_output_rule_init(&sk->rule, RS_OUTPUT_TEXT, NULL);
    int status = parse_request(argc, argv, &rq, sk);
    if (status < 0 && rq.replay)
        status = write_replay(rq.replay, sk);
    if (status >= 0) {
        rs_output_rule_free(&sk->rule);
        return status;
    }
    rs_error err;
    if (rq.threads > 0 && rs_blas_threads(rq.threads, &err)) {
        rs_output_rule_free(&sk->rule);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    if ((sk->writer->options & RS_ALIGN_COLOR) && rs_align_output_color(rq.color, !sk->out_path))
        sk->style.flags |= RS_ALIGN_COLOR;

    rs_ready model = {0};
    rs_codec codec = {0};
    rs_align_input in = {0};
    char default_title[4200];
    status = RS_EXIT_FAIL;
    if (rs_cli_load_model(rq.model_arg, &model, &codec, &err))
        goto fail;
    if (rq.words && model.model->cfg.tokenizer != RS_TOKENIZER_SPM) {
        rs_cli_fail(PROG, "--words: %s has no SentencePiece subwords (tokenizer %s)", rq.model_arg,
                    rs_tokenizer_names[model.model->cfg.tokenizer]);
        status = RS_EXIT_USAGE;
        goto done;
    }
    snprintf(default_title, sizeof default_title, "alignment, %s", rq.model_arg);
    sk->style.title = rq.title ? rq.title : default_title;
    const rs_pairs_ids ids = {model.model, &codec, rq.topt.max_src_len, stderr, PROG};
    if (rs_align_input_open(&in, rq.input, rq.pairs_mode, rq.swap, sk->writer->file_per_sentence,
                            &model, &ids, &err))
        goto fail;
    const int opened = rs_align_output_open(sk, in.count, &err);
    if (opened == RS_ALIGN_OUTPUT_REFUSED) {
        rs_cli_fail(PROG, "%s", err.msg);
        status = RS_EXIT_USAGE;
        goto done;
    }
    const rs_align_emitter em = {rq.words, rq.bpe, rs_align_output_write, sk, stderr, PROG};
    if (opened || rs_align_input_run(&in, &rq.topt, &em, &err) || rs_align_output_close(sk, &err))
        goto fail;
    if (sk->svg_dir)
        fprintf(stderr, PROG ": wrote %d pictures to %s/\n", sk->written, sk->out_path);
    status = RS_EXIT_OK;
    goto done;
fail:
    rs_cli_fail(PROG, "%s", err.msg);
done:
    rs_output_abort(&sk->output);
    rs_output_rule_free(&sk->rule);
    rs_align_input_free(&in);
    rs_codec_free(&codec);
    rs_ready_free(&model);
    return status;
}
