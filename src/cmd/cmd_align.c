/* rnnsearch align: the alignment matrices of translations (greedy) or of
 * given pairs (forced decoding), as text, TSV, JSON, Pharaoh, SVG or HTML. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/align_sentences.h"
#include "common/fileio.h"
#include "cli/cli.h"
#include "common/blas_buffer.h"
#include "cli/options.h"
#include "train/output.h"
#include "model/codec.h"
#include "cmd/commands.h"
#include "text/corpus.h"
#include "data/dataset.h"
#include "search/translate.h"
#include "serve/run.h"
#include "train/rundir.h"
#include "train/watch.h"

#define PROG "rnnsearch align"

/* Where and how the alignments go. */
typedef struct {
    const rs_align_writer *writer;
    rs_align_style style;
    int words, svg_dir;
    const char *bpe; /* --remove-bpe's marker, or NULL */
    const char *out_path;
    rs_output_rule rule; /* what -o (or each picture in its directory) may be */
    rs_output output;    /* -o FILE or standard output (not an SVG directory) */
    FILE *out;           /* output.f */
    int written;
} sink;

/* The emitter's sink: one sentence's alignment (id: 1-based line number)
 * written by the format's writer, to the output or (SVG) as one picture. */
static int write_alignment(void *ctx, const rs_alignment *a, int id, rs_error *err)
{
    sink *sk = ctx;
    int rc = 0;
    char path[4200];
    if (sk->svg_dir) {
        /* One picture, written whole under the same rule as any output. */
        rs_output picture;
        snprintf(path, sizeof path, "%s/%04d.svg", sk->out_path, id);
        if ((rc = rs_output_open(&picture, &sk->rule, path, err)) == 0) {
            if (sk->writer->write(picture.f, a, id, &sk->style))
                rc = rs_output_flush(&picture, err) ? -1 : rs_fail(err, "cannot write %s", path);
            if (rc == 0)
                rc = rs_output_commit(&picture, err);
            rs_output_abort(&picture);
        }
    } else if (sk->writer->write(sk->out, a, id, &sk->style)) {
        rc = rs_output_flush(&sk->output, err) ? -1
                                               : rs_fail(err, "cannot write %s", sk->output.name);
    }
    if (!rc)
        sk->written++;
    return rc;
}

/* --color's values; its index is what the request holds. */
static const char *const whens[] = {"auto", "always", "never", NULL};

static int want_color(int when, int to_stdout)
{
    if (when == 1)
        return 1;
    if (when == 2 || !to_stdout || !isatty(STDOUT_FILENO))
        return 0;
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM"), *ct = getenv("COLORTERM");
    if (no && *no)
        return 0;
    return (term && strstr(term, "256color")) ||
           (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")));
}

/* What the command line asks for. */
typedef struct {
    const char *model_arg, *title, *input, *replay;
    char replay_dir[4200]; /* --replay's directory, a NAME resolved */
    int pairs_mode, swap, threads, color;
    rs_translate_options topt;
    sink sk;
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
static int check_request(int argc, char **argv, align_request *rq, sink *sk)
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
    if (sk->words && sk->bpe)
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
    sink *sk = &((align_request *)rq)->sk;
    return (sk->writer = format_writer(arg)) ? -1 : RS_EXIT_USAGE;
}

static int set_numbers(void *rq, const char *arg)
{
    ((align_request *)rq)->sk.style.flags |= RS_ALIGN_NUMBERS;
    return -1;
}

static int set_remove_bpe(void *rq, const char *arg)
{
    return rs_cli_bpe_marker(PROG, arg, &((align_request *)rq)->sk.bpe) ? RS_EXIT_USAGE : -1;
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
    {"words", .kind = RS_CLI_FLAG, RS_AT(RQ, sk.words),
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
static int parse_request(int argc, char **argv, align_request *rq, sink *sk)
{
    rs_cli_args args;
    const int status = rs_cli_parse(&command, rq, &args, argc, argv);
    rs_cli_end(&args);
    return status >= 0 ? status : check_request(argc, argv, rq, sk);
}

/* Opens where `count` alignments go: standard output, a file, or (SVG) a
 * directory of one picture per sentence. Returns 0, -1 (err says why) or a
 * usage problem's exit status (printed). */
static int open_sink(sink *sk, int count, rs_error *err)
{
    if (sk->writer->file_per_sentence) {
        if (!sk->out_path && count != 1) {
            rs_cli_fail(PROG, "%s of %d sentences needs --output DIR (one file per sentence)",
                        sk->writer->name, count);
            return RS_EXIT_USAGE;
        }
        if (sk->out_path && !strcmp(sk->out_path, "-") && count != 1) {
            rs_cli_fail(PROG, "%s of %d sentences needs --output DIR, not standard output",
                        sk->writer->name, count);
            return RS_EXIT_USAGE;
        }
        if (sk->out_path && !strcmp(sk->out_path, "-"))
            sk->out_path = NULL; /* one picture: standard output */
        sk->svg_dir = sk->out_path &&
                      (rs_is_directory(sk->out_path) || !rs_cli_ends_with(sk->out_path, ".svg"));
        if (sk->out_path && !sk->svg_dir && count != 1) {
            rs_cli_fail(PROG, "%s: %d sentences need a directory, not one .svg file", sk->out_path,
                        count);
            return RS_EXIT_USAGE;
        }
        if (sk->svg_dir || sk->out_path) {
            /* Every picture of a directory is checked before the first is
             * written (a run's directory takes none); one .svg file, now
             * that it is known to be one. */
            char path[4200];
            rs_error refused;
            for (int i = 1; i <= (sk->svg_dir ? count : 1); i++) {
                if (sk->svg_dir)
                    snprintf(path, sizeof path, "%s/%04d.svg", sk->out_path, i);
                else
                    snprintf(path, sizeof path, "%s", sk->out_path);
                if (rs_output_check(&sk->rule, path, &refused)) {
                    rs_cli_fail(PROG, "%s", refused.msg);
                    return RS_EXIT_USAGE;
                }
            }
            if (sk->svg_dir)
                return rs_make_parent_dirs(path, err);
        }
    }
    if (rs_output_open(&sk->output, &sk->rule, sk->out_path, err))
        return -1;
    sk->out = sk->output.f;
    return 0;
}

/* Ends the output: the writer's closing, then the file renamed into place
 * (an SVG directory's pictures are each complete already). */
static int close_sink(sink *sk, rs_error *err)
{
    if (sk->svg_dir)
        return 0;
    if (sk->writer->end && sk->writer->end(sk->out, &sk->style))
        return rs_output_flush(&sk->output, err) ? -1
                                                 : rs_fail(err, "cannot write %s", sk->output.name);
    return rs_output_commit(&sk->output, err);
}

/* align --replay DIR: the run's replay page, to standard output or written
 * whole to a file. */
static int write_replay(const char *dir, sink *sk)
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

/* The input: lines to translate, or (--pairs) pairs tokenized for forced
 * decoding, sources cut to --max-src-len, a chunk of them at a time (the
 * alignments of a large file were all held before the first was written);
 * for a picture per sentence all of them, whose names are all checked
 * before the first is written. */
typedef struct {
    rs_lines lines;
    rs_pair_reader reader;
    int reader_open, chunk;
    rs_pairs pairs;
    rs_tokenized tok;
    int count; /* sentences (with --pairs, of the chunk) */
} align_input;

enum { ALIGN_CHUNK = 4096 };

/* The next chunk of pairs into in->tok: their count, 0 at the end, or -1. */
static int next_pairs(const align_request *rq, const rs_codec *codec, align_input *in,
                      rs_error *err)
{
    rs_tokenized_free(&in->tok);
    rs_pairs_free(&in->pairs);
    const char *name = strcmp(rq->input, "-") ? rq->input : "<stdin>";
    const int n = rs_pair_reader_chunk(&in->reader, in->chunk, &in->pairs, err);
    if (n <= 0)
        return n;
    if (rs_tokenize_pairs(&in->tok, &in->pairs, codec, name, err) ||
        rs_cli_cut_sources(PROG, &in->tok, rq->topt.max_src_len, rq->input, err))
        return -1;
    in->count = in->tok.count;
    return n;
}

static int read_input(const align_request *rq, const rs_codec *codec, const sink *sk,
                      align_input *in, rs_error *err)
{
    if (!rq->pairs_mode) {
        if (rs_lines_read(rq->input, &in->lines, err))
            return -1;
        in->count = in->lines.count;
        return 0;
    }
    if (rs_pair_reader_open_tsv(&in->reader, rq->input, rq->swap, 0, err))
        return -1;
    in->reader_open = 1;
    in->chunk = sk->writer->file_per_sentence ? INT_MAX : ALIGN_CHUNK;
    return next_pairs(rq, codec, in, err) < 0 ? -1 : 0;
}

/* --pairs: the chunk read, then each next one. */
static int align_all_pairs(const align_request *rq, const rs_ready *model, const rs_codec *codec,
                           align_input *in, const rs_align_emitter *em, rs_error *err)
{
    int n = in->count;
    while (n > 0) {
        if (rs_align_pairs(model, &in->tok, rq->topt.batch_size, em, err))
            return -1;
        if ((n = next_pairs(rq, codec, in, err)) < 0)
            return -1;
    }
    return 0;
}

static void align_input_free(align_input *in)
{
    rs_tokenized_free(&in->tok);
    rs_pairs_free(&in->pairs);
    rs_lines_free(&in->lines);
    if (in->reader_open)
        rs_pair_reader_close(&in->reader);
}

int cmd_align(int argc, char **argv)
{
    align_request rq = {0};
    sink *const sk = &rq.sk;
    rs_translate_options_default(&rq.topt);
    rq.topt.want_alignment = 1;
    *sk = (sink){.writer = rs_align_writer_find("text"), .out = stdout};
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
    if ((sk->writer->options & RS_ALIGN_COLOR) && want_color(rq.color, !sk->out_path))
        sk->style.flags |= RS_ALIGN_COLOR;

    rs_ready model = {0};
    rs_codec codec = {0};
    align_input in = {0};
    char default_title[4200];
    status = RS_EXIT_FAIL;
    if (rs_cli_load_model(rq.model_arg, &model, &codec, &err))
        goto fail;
    if (sk->words && model.model->cfg.tokenizer != RS_TOKENIZER_SPM) {
        rs_cli_fail(PROG, "--words: %s has no SentencePiece subwords (tokenizer %s)", rq.model_arg,
                    rs_tokenizer_names[model.model->cfg.tokenizer]);
        status = RS_EXIT_USAGE;
        goto done;
    }
    snprintf(default_title, sizeof default_title, "alignment, %s", rq.model_arg);
    sk->style.title = rq.title ? rq.title : default_title;
    if (read_input(&rq, &codec, sk, &in, &err))
        goto fail;
    if (in.count == 0)
        rs_cli_note_empty(PROG, rq.input, rq.pairs_mode ? "pairs" : "sentences", "aligned");
    int opened = open_sink(sk, in.count, &err);
    if (opened > 0) {
        status = opened;
        goto done;
    }
    if (opened < 0)
        goto fail;
    if (!sk->svg_dir && sk->writer->begin && sk->writer->begin(sk->out, &sk->style)) {
        if (!rs_output_flush(&sk->output, &err))
            rs_fail(&err, "cannot write %s", sk->output.name);
        goto fail;
    }
    const rs_align_emitter em = {sk->words, sk->bpe, write_alignment, sk, stderr, PROG};
    if (rq.pairs_mode ? align_all_pairs(&rq, &model, &codec, &in, &em, &err)
                      : rs_align_translations(&model, &codec, &in.lines, &rq.topt, &em, &err))
        goto fail;
    if (close_sink(sk, &err))
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
    align_input_free(&in);
    rs_codec_free(&codec);
    rs_ready_free(&model);
    return status;
}
