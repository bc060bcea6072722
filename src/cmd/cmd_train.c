/* rnnsearch train: the command line of training. What a run is made of
 * (its directory claimed, its data, codec and model: train/prepare.h) and
 * what --resume checks (train/resume.h) are the library's; this file parses
 * the options, calls them in order, and prints what they report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/blas_buffer.h"
#include "common/fileio.h"
#include "cli/config/alias.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "common/log.h"
#include "cli/resume_command.h"
#include "train/dist.h"
#include "train/fingerprint.h"
#include "train/prepare.h"
#include "train/report.h"
#include "train/resume.h"
#include "train/rundir.h"
#include "train/signals.h"
#include "train/train.h"
#include "train/watch.h"

#define PROG "rnnsearch train"

typedef struct {
    int quiet;
    rs_stop_reason reason;
    int epoch; /* of the last step (RS_EV_STOPPED) */
} reporter;

static void report(void *ctx, const rs_train_event *ev)
{
    reporter *r = ctx;
    if (ev->kind == RS_EV_STOPPED) {
        r->reason = ev->reason;
        r->epoch = ev->epoch;
    } else if (rs_dist_rank() == 0) { /* rank 0 speaks for the job */
        rs_log_capture lines;
        if (rs_log_capture_begin(&lines))
            rs_train_report_event(lines.f, ev, r->quiet, rs_dist_size());
        rs_log_capture_end(&lines);
    }
}

/* What the command line and --config FILE ask for. */
typedef struct {
    rs_train_inputs in; /* the data files, --swap, --spm-*, --watch, --dev-align */
    const char *name, *out_dir;
    const char *log_path; /* --log, else DIR/train.log */
    int resume, overwrite, quiet, new_data;
    rs_config cfg;
    char dir[4096], ckpt[4200];
    rs_cli_args args; /* holds the file's values */
} train_request;

/* --remove-bpe[=@@]: --post-process bpe, given as that (so --resume checks it). */
static int set_remove_bpe(void *req, const char *arg)
{
    train_request *rq = req;
    /* subword-nmt's "@@ " only, as translate's default; fairseq's spellings of it too. */
    if (arg && *arg && strcmp(arg, "@@") && strcmp(arg, "@@ ") && strcmp(arg, "subword_nmt"))
        return rs_cli_usage_error(PROG,
                                  "--remove-bpe: '%s': training joins subword-nmt's '@@ ' "
                                  "only (--post-process sentencepiece or joiner for the "
                                  "others)",
                                  arg);
    rs_error err;
    if (rs_config_set_option(&rq->cfg, "post_process", "bpe", &err))
        return rs_cli_usage_error(PROG, "%s", err.msg);
    rs_cli_set_given(&rq->args, "post-process", "bpe");
    return -1;
}

#define RQ train_request
#define DATA .section = "data"
#define TRAINING .section = "training"
#define STR(x) STR_(x)
#define STR_(x) #x
static const rs_cli_option option_table[] = {
    {.kind = RS_CLI_TEXT, .help = "data:\n"},
    {"train", .kind = RS_CLI_STRING, RS_AT(RQ, in.train_tsv), .value = "FILE", DATA, .group = 1,
     .help = "pairs, one per line: source<TAB>target[<TAB>anything]"},
    {"src", .kind = RS_CLI_STRING, RS_AT(RQ, in.train_src), .value = "FILE", DATA, .group = 1,
     .label = "--src FILE, --tgt FILE",
     .help = "line-aligned source and target files (instead of --train)"},
    {"tgt", .kind = RS_CLI_STRING, RS_AT(RQ, in.train_tgt), .value = "FILE", DATA, .group = 1},
    {"dev", .kind = RS_CLI_STRING, RS_AT(RQ, in.dev_tsv), .value = "FILE", DATA, .group = 2,
     .help = "dev pairs (TSV), evaluated each epoch"},
    {"dev-src", .kind = RS_CLI_STRING, RS_AT(RQ, in.dev_src), .value = "FILE", DATA, .group = 2,
     .label = "--dev-src FILE, --dev-tgt FILE", .help = "dev pairs as two files"},
    {"dev-tgt", .kind = RS_CLI_STRING, RS_AT(RQ, in.dev_tgt), .value = "FILE", DATA, .group = 2},
    {"swap", .kind = RS_CLI_FLAG, RS_AT(RQ, in.swap), DATA,
     .help = "exchange source and target of TSV files"},
    {"name", .kind = RS_CLI_STRING, RS_AT(RQ, name), .value = "NAME", TRAINING, .group = 3,
     .help = "save to the models directory's NAME (or --out)"},
    {"out", .kind = RS_CLI_STRING, RS_AT(RQ, out_dir), .value = "DIR", TRAINING, .group = 3,
     .help = "save to DIR (or --name)"},
    /* --resume, --overwrite and --new-data say what to do with a directory
     * this time: the command line's only. */
    {"resume", .kind = RS_CLI_FLAG, RS_AT(RQ, resume), .describe = rs_resume_changeable,
     .help = "continue exactly from DIR/last.ckpt with its settings;\n"
             "options given again must agree with them, except\n"
             "%D;\n"
             "the data must be that run's (checked against the\n"
             "fingerprint of it that the checkpoint records)"},
    {"new-data", .kind = RS_CLI_FLAG, RS_AT(RQ, new_data),
     .help = "with --resume: continue on other data (fine-tuning);\n"
             "an epoch in progress starts again from its beginning,\n"
             "and with another dev set best.ckpt is chosen anew"},
    {"overwrite", .kind = RS_CLI_FLAG, RS_AT(RQ, overwrite),
     .help = "train afresh into a directory that holds a model\n"
             "(its checkpoints and log are replaced)"},
    {"config", .kind = RS_CLI_CONFIG_FILE, .value = "FILE",
     .help = "settings from a YAML file: sections data: (train, dev,\n"
             "src, tgt, ...), model: and training:, keys named as\n"
             "the options with _ for - (docs/configuration.md;\n"
             "'rnnsearch info -m MODEL --config' writes one);\n"
             "'key = value' lines are read too. Options given on\n"
             "the command line win"},
    {"strict", .kind = RS_CLI_FLAG, RS_AT(RQ, in.strict), DATA,
     .help = "stop at a pair with an empty side (training or dev),\n"
             "naming its file and line (default: leave it out, and\n"
             "say how many and where the first was)"},
    {"remove-bpe", .kind = RS_CLI_CALL, .set = set_remove_bpe, .value = "@@", DATA,
     .flags = RS_CLI_OPTIONAL, .takes = rs_cli_bpe_value,
     .help = "the same as --post-process bpe: dev BLEU (and\n"
             "translate) join subword-nmt's '@@ ' pieces; training\n"
             "text that looks segmented (BPE, SentencePiece pieces,\n"
             "joiners) is refused without --tokenizer, and with\n"
             "--tokenizer space sets --post-process to what it\n"
             "finds (docs/tokenization.md)"},
    {"quiet", .kind = RS_CLI_FLAG, RS_AT(RQ, quiet), TRAINING, .help = "no progress lines"},
    {"log", .kind = RS_CLI_STRING, RS_AT(RQ, log_path), .value = "FILE", TRAINING,
     .help = "append what standard error shows to FILE (default:\n"
             "DIR/train.log); every line starts with the time,\n"
             "ISO 8601 in UTC"},
    {"spm-src", .kind = RS_CLI_STRING, RS_AT(RQ, in.spm_src), .value = "FILE", DATA,
     .label = "--spm-src FILE, --spm-tgt FILE",
     .help = "use these SentencePiece .model files (instead\n"
             "of training them with --subwords N)"},
    {"spm-tgt", .kind = RS_CLI_STRING, RS_AT(RQ, in.spm_tgt), .value = "FILE", DATA},
    {"src-vocab", .kind = RS_CLI_STRING, RS_AT(RQ, in.src_vocab), .value = "FILE", DATA,
     .label = "--src-vocab FILE, --tgt-vocab FILE",
     .help = "vocabularies to use instead of the\n"
             "training data's: one token a line (Joey NMT's\n"
             "src_vocab.txt), or token<TAB>count (OpenNMT-py), tokens\n"
             "as the tokenizer makes them; <pad> <unk> <s> </s> are\n"
             "added when missing. Not with SentencePiece (its model\n"
             "has its vocabulary). Training writes the ones it uses\n"
             "to DIR/src_vocab.txt and DIR/tgt_vocab.txt (with\n"
             "--shared-vocab, the one file given is both sides')"},
    {"tgt-vocab", .kind = RS_CLI_STRING, RS_AT(RQ, in.tgt_vocab), .value = "FILE", DATA},
    {"watch", .kind = RS_CLI_STRING, RS_AT(RQ, in.watch_file), .value = "FILE", DATA, .group = 5,
     .help =
         "sentences (SOURCE or SOURCE<TAB>TARGET lines) whose\n"
         "alignments every evaluation appends to DIR/watch.jsonl\n"
         "(default: the first " STR(RS_WATCH_DEFAULT_COUNT) " dev pairs when there is a dev set)"},
    {"no-watch", .kind = RS_CLI_FLAG, RS_AT(RQ, in.no_watch), TRAINING, .group = 5,
     .help = "no watch.jsonl"},
    {"dev-align", .kind = RS_CLI_STRING, RS_AT(RQ, in.dev_align), .value = "FILE", DATA,
     .help = "gold links of the dev pairs (Pharaoh: 'i-j' sure, 'i?j'\n"
             "possible): each evaluation logs the alignment error rate,\n"
             "precision and recall of the dev forced alignments"},
    {"dev-align-threshold", .kind = RS_CLI_FLOAT, RS_AT(RQ, in.align_threshold), 0.0, 1.0, "X",
     TRAINING, .help = "hard links are weights >= X (default: 0 = argmax)"},
    RS_CLI_HELP_ROW,
    {.kind = RS_CLI_TEXT,
     .help = "\nA directory is used by one training at a time (DIR/lock). On SIGINT, SIGTERM\n"
             "or SIGHUP the current step is finished, last.ckpt saved and the resume command\n"
             "printed (exit 130, 143, 129); a second signal exits at once.\n\n"
             "model and training:\n"},
    /* --emb, --batch-size, ...: every rs_config field but the vocabulary sizes. */
    {.kind = RS_CLI_SETTINGS, RS_AT(RQ, cfg)},
    {0},
};
#undef TRAINING
#undef DATA
#undef RQ

const rs_cli_command rs_train_command = {
    "train",
    PROG,
    "usage: " PROG
    " (--train PAIRS.tsv | --src FILE --tgt FILE) [--dev ...] --name NAME [OPTIONS]\n\n"
    "Trains the attentive translator on sentence pairs and saves checkpoints to\n"
    "the model directory (last.ckpt each epoch, best.ckpt by dev loss, train.log.tsv,\n"
    "train.loss.tsv, train.log, and config.yaml: the --config file):\n"
    "--name NAME is $" RS_MODELS_ENV "/NAME, or models/NAME when that is not set\n"
    "('rnnsearch help models'); --out DIR is DIR.\n\n",
    NULL,
    25,
    sizeof(train_request),
    option_table};

static int was_given(const train_request *rq, const char *key)
{
    char option[RS_STR_MAX];
    snprintf(option, sizeof option, "%s", key);
    for (char *p = option; *p; p++)
        *p = *p == '_' ? '-' : *p;
    return rs_cli_given(&rq->args, option) != NULL;
}

/* The requests no option can refuse alone. */
static int check_request(train_request *rq)
{
    if (!rq->in.train_tsv == !(rq->in.train_src && rq->in.train_tgt) ||
        (rq->in.train_tsv && (rq->in.train_src || rq->in.train_tgt)))
        return rs_cli_usage_error(PROG, "give either --train PAIRS.tsv or both --src and --tgt");
    if ((rq->in.dev_src || rq->in.dev_tgt) &&
        (!rq->in.dev_src || !rq->in.dev_tgt || rq->in.dev_tsv))
        return rs_cli_usage_error(PROG, "give either --dev PAIRS.tsv or both --dev-src and "
                                        "--dev-tgt");
    if (rq->resume && rq->overwrite)
        return rs_cli_usage_error(PROG, "--resume and --overwrite contradict each other");
    if (rq->in.watch_file && rq->in.no_watch)
        return rs_cli_usage_error(PROG, "--watch and --no-watch contradict each other");
    if (rq->in.dev_align && !rq->in.dev_tsv && !rq->in.dev_src)
        return rs_cli_usage_error(PROG,
                                  "--dev-align needs a dev set (--dev or --dev-src/--dev-tgt)");
    if (rq->new_data && !rq->resume)
        return rs_cli_usage_error(
            PROG, "--new-data goes with --resume (a new run records its data anyway)");
    if (rq->out_dir && rq->name)
        return rs_cli_usage_error(PROG, "--name and --out both say where to save; give one");
    if (!rq->out_dir && !rq->name)
        return rs_cli_usage_error(PROG, "where to save the model: --name NAME (in %s) or --out DIR",
                                  rs_models_dir());
    if (!rq->in.spm_src != !rq->in.spm_tgt)
        return rs_cli_usage_error(PROG, "give both --spm-src and --spm-tgt");
    if (rq->resume && rq->in.spm_src)
        return rs_cli_usage_error(PROG, "--resume uses the checkpoint's SentencePiece models; "
                                        "--spm-src/--spm-tgt cannot be given");
    rs_config *cfg = &rq->cfg;
    if (cfg->model.shared_vocab && rq->in.src_vocab && rq->in.tgt_vocab &&
        !rs_same_file(rq->in.src_vocab, rq->in.tgt_vocab))
        return rs_cli_usage_error(PROG,
                                  "--shared-vocab is one vocabulary: give one file (--src-vocab "
                                  "or --tgt-vocab), not two (%s and %s)",
                                  rq->in.src_vocab, rq->in.tgt_vocab);
    rq->in.tokenizer_given = was_given(rq, "tokenizer");
    rq->in.opennmt_vocabs = rs_config_is_opennmt();
    rq->in.post_process_given = was_given(rq, "post_process");
    /* Subwords imply --tokenizer spm unless another tokenizer was asked for. */
    if ((cfg->model.subwords > 0 || rq->in.spm_src) && !was_given(rq, "tokenizer"))
        cfg->model.tokenizer = RS_TOKENIZER_SPM;
    if (rq->in.spm_src && cfg->model.tokenizer != RS_TOKENIZER_SPM)
        return rs_cli_usage_error(PROG, "--spm-src/--spm-tgt conflict with --tokenizer %s",
                                  rs_tokenizer_names[cfg->model.tokenizer]);
    if ((rq->in.src_vocab || rq->in.tgt_vocab) && cfg->model.tokenizer == RS_TOKENIZER_SPM)
        return rs_cli_usage_error(PROG, "--src-vocab/--tgt-vocab do not go with SentencePiece "
                                        "(--tokenizer spm, --subwords, --spm-src): its model "
                                        "carries its own vocabulary of pieces");
    /* Each optimizer's own rate unless one was asked for (config.h). */
    if (!rq->resume && !was_given(rq, "lr"))
        cfg->train.lr = rs_config_default_lr(cfg->train.optimizer);
    rs_error err;
    if (!rq->resume && rs_config_check(cfg, &err))
        return rs_cli_usage_error(PROG, "%s", err.msg);
    if (!rq->resume && cfg->model.tokenizer == RS_TOKENIZER_SPM && cfg->model.subwords <= 0 &&
        !rq->in.spm_src)
        return rs_cli_usage_error(PROG,
                                  "--tokenizer spm needs --subwords N or --spm-src/--spm-tgt");
    if (!rq->in.dev_tsv && !rq->in.dev_src && rs_train_needs_dev_set(&cfg->train))
        return rs_cli_usage_error(PROG, "%s needs a dev set (--dev or --dev-src/--dev-tgt)",
                                  rs_train_needs_dev_set(&cfg->train));
    return -1;
}

/* Parses the command line, then the --config file for what the command line
 * does not give, and checks the request; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, train_request *rq)
{
    rs_config_defaults(&rq->cfg);
    int status = rs_cli_parse(&rs_train_command, rq, &rq->args, argc, argv);
    if (status >= 0)
        return status;
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if ((status = check_request(rq)) >= 0)
        return status;
    if (rq->out_dir) {
        snprintf(rq->dir, sizeof rq->dir, "%s", rq->out_dir);
    } else {
        rs_error bad;
        if (rs_model_dir_for(rq->name, rq->dir, sizeof rq->dir, &bad))
            return rs_cli_usage_error(PROG, "%s", bad.msg);
    }
    snprintf(rq->ckpt, sizeof rq->ckpt, "%s/last.ckpt", rq->dir);
    return -1;
}

/* Why training stopped, where the models are and how to go on. */
static void print_stop(const reporter *r, const rs_train_state *state, const rs_train_config *cfg,
                       const char *dir, int argc, char **argv, int resume)
{
    rs_log_capture lines;
    if (rs_log_capture_begin(&lines))
        rs_train_report_stop(lines.f, r->reason, *rs_train_signal(), r->epoch, state, cfg, dir);
    rs_log_capture_end(&lines);
    rs_log("to continue: ");
    rs_log_capture resume_command;
    if (rs_log_capture_begin(&resume_command))
        rs_cli_resume_command(resume_command.f, argc, argv, resume, dir);
    rs_log_capture_end(&resume_command);
    if (r->reason == RS_STOP_EPOCHS || r->reason == RS_STOP_MAX_STEPS)
        rs_log("(with a larger --epochs or --max-steps)\n");
}

/* What is trained on what, said once by rank 0. */
static void print_header(const train_request *rq, const rs_train_run *run)
{
    if (rs_dist_rank() != 0)
        return;
    rs_log_capture header;
    if (rs_log_capture_begin(&header))
        rs_train_report_header(header.f, run, rq->dir, rq->resume, rq->cfg.train.max_len, PROG);
    rs_log_capture_end(&header);
    /* One block: what the --config file's toolkit would have done otherwise. */
    if (rs_config_notice(0) && rq->args.config_path) {
        rs_log("notices on %s:\n", rq->args.config_path);
        for (int i = 0; rs_config_notice(i); i++)
            rs_log("  %s\n", rs_config_notice(i));
    }
    if (rs_dist_size() > 1)
        rs_log("data-parallel over %d ranks, each computing 1/%d of every batch; "
               "%zu bytes all-reduced per step\n",
               rs_dist_size(), rs_dist_size(), run->model.layout.total * sizeof(float));
}

/* The log of the run: --log FILE, else DIR/train.log. */
static int open_log(const train_request *rq, rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", rq->dir, RS_TEXT_LOG);
    if (rq->log_path && rs_train_log_check(&rq->in, rq->args.config_path, rq->log_path, err))
        return -1;
    return rs_log_open(rq->log_path ? rq->log_path : path, err);
}

/* The exit status of a status of train/prepare.h or train/resume.h: a request
 * they refuse is bad usage. */
static int exit_status(int status)
{
    return status == 0 ? RS_EXIT_OK : status == RS_TRAIN_REFUSED ? RS_EXIT_USAGE : RS_EXIT_FAIL;
}

/* A line the library gives before slow work (rs_train_note). */
static void log_note(void *ctx, const char *text)
{
    rs_log("%s\n", text);
}

/* An exit status reached on rank 0 and agreed by every rank, printed once. */
static int agreed(int status, rs_error *err)
{
    if (rs_dist_check_exit(&status, err) && rs_dist_rank() == 0)
        rs_log(PROG ": %s\n", err->msg);
    return status;
}

/* The configuration settings given, in the table's order, as
 * rs_resume_load takes them; keys and values have room for
 * RS_CLI_MAX_CONFIG_OPTIONS. */
static rs_resume_given given_settings(const train_request *rq, const char **keys,
                                      const char **values)
{
    int count = 0;
    for (int i = 0; i < rs_cli_config_option_count(); i++) {
        const char *option, *key, *value;
        rs_cli_config_option(i, &option, &key);
        if ((value = rs_cli_given(&rq->args, option))) {
            keys[count] = key;
            values[count++] = rs_config_is_flag(key) ? NULL : value;
        }
    }
    return (rs_resume_given){keys, values, count};
}

/* --resume: the checkpoint's model and state, and its configuration with the
 * options given applied where they may change. */
static int resume_checkpoint(train_request *rq, rs_train_run *run, rs_error *err)
{
    const char *keys[RS_CLI_MAX_CONFIG_OPTIONS], *values[RS_CLI_MAX_CONFIG_OPTIONS];
    const rs_resume_given given = given_settings(rq, keys, values);
    const int has_dev = rq->in.dev_tsv || rq->in.dev_src;
    const int status = exit_status(rs_resume_load(run, rq->ckpt, &given, has_dev, err));
    if (status == RS_EXIT_OK)
        rq->cfg = rs_model_settings(&run->model);
    return status;
}

/* --resume: the data given now against the fingerprint the checkpoint
 * records, agreed by every rank (before rs_train, which is the first to
 * write into the directory). */
static int check_resumed_data(const train_request *rq, rs_train_run *run, rs_error *err)
{
    const rs_train_inputs *in = &rq->in;
    const rs_data_given sets[2] = {
        {"training", "--train", in->train_tsv, "--src", in->train_src, "--tgt", in->train_tgt},
        {"dev", "--dev", in->dev_tsv, "--dev-src", in->dev_src, "--dev-tgt", in->dev_tgt}};
    rs_data_fingerprint now;
    rs_data_fingerprint_of(&now, &run->train, &run->dev,
                           rq->cfg.train.dev_bleu ? run->dev_pairs.tgt : NULL);
    rs_resume_notes notes;
    const int status = exit_status(
        rs_resume_check_data(rq->ckpt, &run->state, &now, sets, rq->new_data, &notes, err));
    for (int i = 0; i < notes.count && rs_dist_rank() == 0; i++)
        rs_log(PROG ": %s\n", notes.text[i]);
    return agreed(status, err);
}

/* The run from a checked request: the directory claimed, the checkpoint
 * resumed or a model made, the data checked against a resumed run's, then
 * training until it stops, and how it stopped. */
static int train(train_request *rq, rs_train_run *run, int argc, char **argv)
{
    rs_error err;
    int made_here, began = 0;
    int status = exit_status(rs_train_claim_dir_agreed(rq->dir, rq->resume, rq->overwrite,
                                                       &run->lock, &made_here, &err));
    if (status != RS_EXIT_OK) {
        if (rs_dist_rank() == 0)
            rs_log(PROG ": %s\n", err.msg);
        return status;
    }
    status = RS_EXIT_FAIL;
    if (rs_dist_rank() == 0 && open_log(rq, &err))
        goto fail;
    if (rq->resume && (status = resume_checkpoint(rq, run, &err)) != RS_EXIT_OK)
        goto fail;
    if (rq->cfg.train.threads > 0 && rs_blas_threads(rq->cfg.train.threads, &err)) {
        status = RS_EXIT_FAIL;
        goto fail;
    }
    rq->in.note = log_note;
    if ((status = exit_status(rs_train_prepare(&rq->in, &rq->cfg, rq->resume, run, &err))) !=
        RS_EXIT_OK)
        goto fail;
    if (rq->resume && (status = check_resumed_data(rq, run, &err)) != RS_EXIT_OK)
        return status;
    status = RS_EXIT_FAIL;
    print_header(rq, run);
    if (rq->args.config_path && rs_dist_rank() == 0 &&
        rs_train_copy_config(rq->dir, rq->args.config_path, rq->args.config.text,
                             rq->args.config.text_size, &err))
        goto fail;
    rs_train_options options = {.report_seconds = 2.0, .stop = rs_train_signal(), .dir = rq->dir};
    if (rq->cfg.train.dev_bleu) {
        options.codec = &run->codec;
        options.dev_refs = run->dev_pairs.tgt;
    }
    options.watch = run->watch.count || run->watch.gold ? &run->watch : NULL;
    reporter rep = {rq->quiet, RS_STOP_EPOCHS, 0};
    /* The vocabularies beside the checkpoints, for --src-vocab/--tgt-vocab and
     * other tools (rewritten as they were on --resume). */
    if (rs_dist_check(rs_dist_rank() == 0 ? rs_rundir_write_vocabs(rq->dir, &run->model, &err) : 0,
                      &err))
        goto fail;
    rs_train_catch_signals();
    began = 1;
    if (rs_train(&run->model, &run->state, &run->train, &run->dev, &options, report, &rep, &err))
        goto fail;
    if (rs_dist_rank() == 0)
        print_stop(&rep, &run->state, &run->model.train, rq->dir, argc, argv, rq->resume);
    return rep.reason == RS_STOP_SIGNAL ? RS_EXIT_SIGNAL + (int)*rs_train_signal() : RS_EXIT_OK;
fail:
    if (rs_dist_rank() == 0 || !rs_dist_failure_agreed()) /* said once for all ranks */
        rs_log(PROG ": %s\n", err.msg);
    if (made_here && !began) {
        /* A run that failed before its first step in a directory it made
         * leaves no trace: its lock, its log (when there) and the directory. */
        rs_log_close();
        rs_rundir_forget(rq->dir, run->lock, !rq->log_path);
        run->lock = -1;
    }
    return status;
}

int cmd_train(int argc, char **argv)
{
    static train_request rq; /* large; one per process */
    memset(&rq, 0, sizeof rq);
    int status = parse_request(argc, argv, &rq);
    if (status < 0) {
        rs_train_run run;
        rs_train_run_init(&run);
        status = train(&rq, &run, argc, argv);
        rs_log_close();
        rs_train_run_free(&run);
    }
    rs_cli_end(&rq.args);
    return status;
}
