/* rnnsearch train: build vocabularies, initialise or resume a model, train it. */
#include <cblas.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "data/dataset.h"
#include "train/dist.h"
#include "common/fileio.h"
#include "text/spm.h"
#include "train/fingerprint.h"
#include "cmd/log.h"
#include "train/rundir.h"
#include "train/train.h"
#include "train/watch.h"

#define PROG "rnnsearch train"

enum {
    OPT_TRAIN = 1000,
    OPT_SRC,
    OPT_TGT,
    OPT_DEV,
    OPT_DEV_SRC,
    OPT_DEV_TGT,
    OPT_SWAP,
    OPT_NAME,
    OPT_OUT,
    OPT_RESUME,
    OPT_OVERWRITE,
    OPT_QUIET,
    OPT_SPM_SRC,
    OPT_SPM_TGT,
    OPT_NEW_DATA,
    OPT_WATCH,
    OPT_NO_WATCH,
    OPT_DEV_ALIGN,
    OPT_DEV_ALIGN_THRESHOLD,
    OPT_LOG,
    OPT_CONFIG = 2000
};

/* "--epochs, --max-steps, … and --threads": what --resume may change. */
static void resumable_options(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; rs_config_resumable[i] && used < size; i++) {
        const char *sep = i == 0 ? "" : rs_config_resumable[i + 1] ? ", " : " and ";
        used += (size_t)snprintf(buf + used, size - used, "%s--%s", sep, rs_config_resumable[i]);
    }
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = '-';
}

static void usage(FILE *out)
{
    rs_config defaults;
    rs_config_defaults(&defaults);
    char resumable[256];
    resumable_options(resumable, sizeof resumable);
    fprintf(out,
            "usage: " PROG
            " (--train PAIRS.tsv | --src FILE --tgt FILE) [--dev ...] --name NAME [OPTIONS]\n\n"
            "Trains the attentive translator on sentence pairs and saves checkpoints to\n"
            "the model directory (last.ckpt each epoch, best.ckpt by dev loss, train.log.tsv,\n"
            "train.loss.tsv, train.log):\n"
            "--name NAME is $" RS_MODELS_ENV "/NAME, or models/NAME when that is not set\n"
            "('rnnsearch help models'); --out DIR is DIR.\n\n"
            "data:\n"
            "  --train FILE           pairs, one per line: source<TAB>target[<TAB>anything]\n"
            "  --src FILE, --tgt FILE line-aligned source and target files (instead of --train)\n"
            "  --dev FILE             dev pairs (TSV), evaluated each epoch\n"
            "  --dev-src FILE, --dev-tgt FILE  dev pairs as two files\n"
            "  --swap                 exchange source and target of TSV files\n"
            "  --name NAME            save to the models directory's NAME (or --out)\n"
            "  --out DIR              save to DIR (or --name)\n"
            "  --resume               continue exactly from DIR/last.ckpt with its settings;\n"
            "                         options given again must agree with them, except\n"
            "                         %s;\n"
            "                         the data must be that run's (checked against the\n"
            "                         fingerprint of it that the checkpoint records)\n"
            "  --new-data             with --resume: continue on other data (fine-tuning);\n"
            "                         an epoch in progress starts again from its beginning,\n"
            "                         and with another dev set best.ckpt is chosen anew\n"
            "  --overwrite            train afresh into a directory that holds a model\n"
            "                         (its checkpoints and log are replaced)\n"
            "  --config FILE          settings from a YAML file: sections data: (train, dev,\n"
            "                         src, tgt, ...), model: and training:, keys named as\n"
            "                         the options with _ for - (docs/configuration.md;\n"
            "                         'rnnsearch info -m MODEL --config' writes one);\n"
            "                         'key = value' lines are read too. Options given on\n"
            "                         the command line win\n"
            "  --quiet                no progress lines\n"
            "  --log FILE             append what standard error shows to FILE (default:\n"
            "                         DIR/train.log); every line starts with the time,\n"
            "                         ISO 8601 in UTC\n"
            "  --spm-src FILE, --spm-tgt FILE  use these SentencePiece .model files (instead\n"
            "                         of training them with --subwords N)\n"
            "  --watch FILE           sentences (SOURCE or SOURCE<TAB>TARGET lines) whose\n"
            "                         alignments every evaluation appends to DIR/watch.jsonl\n"
            "                         (default: the first %d dev pairs when there is a dev set)\n"
            "  --no-watch             no watch.jsonl\n"
            "  --dev-align FILE       gold links of the dev pairs (Pharaoh: 'i-j' sure, 'i?j'\n"
            "                         possible): each evaluation logs the alignment error rate,\n"
            "                         precision and recall of the dev forced alignments\n"
            "  --dev-align-threshold X  hard links are weights >= X (default: 0 = argmax)\n"
            "  -h, --help             this help\n\n"
            "A directory is used by one training at a time (DIR/lock). On SIGINT, SIGTERM\n"
            "or SIGHUP the current step is finished, last.ckpt saved and the resume command\n"
            "printed (exit 130, 143, 129); a second signal exits at once.\n\n"
            "model and training:\n",
            resumable, RS_WATCH_DEFAULT_COUNT);
    rs_cli_print_config_help(out, &defaults);
}

typedef struct {
    int quiet;
    rs_stop_reason reason;
    int epoch; /* of the last step (RS_EV_STOPPED) */
} reporter;

static void report(void *ctx, const rs_train_event *ev)
{
    reporter *r = ctx;
    if (rs_dist_rank() != 0 && ev->kind != RS_EV_STOPPED) /* rank 0 speaks for the job */
        return;
    switch (ev->kind) {
    case RS_EV_PROGRESS:
        if (r->quiet)
            break;
        rs_log(
            "step %lld/%lld | epoch %d | loss %.4f | ppl %.2f | tok/s %.0f | gnorm %.3f | lr %.3g | eta %.0fs\n",
            (long long)ev->step, (long long)ev->total_steps, ev->epoch, ev->loss, ev->ppl,
            ev->tokens_per_s, ev->gnorm, ev->lr, ev->eta_s);
        break;
    case RS_EV_DEV:
        if (isnan(ev->dev_loss))
            rs_log("epoch %d | step %lld | no dev set\n", ev->epoch, (long long)ev->step);
        else if (ev->dev_bleu >= 0)
            rs_log(
                "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev BLEU %.2f | lr %.3g%s%s\n",
                ev->epoch, (long long)ev->step, ev->dev_loss, ev->dev_ppl, ev->dev_bleu, ev->lr,
                ev->improved ? " | best" : "", ev->stop ? " | stopping (patience)" : "");
        else if (ev->dev_exact >= 0)
            rs_log("epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev exact %.2f%%%s\n",
                   ev->epoch, (long long)ev->step, ev->dev_loss, ev->dev_ppl, 100 * ev->dev_exact,
                   ev->improved ? " | best" : "");
        else
            rs_log("epoch %d | step %lld | dev loss %.4f | dev ppl %.2f%s\n", ev->epoch,
                   (long long)ev->step, ev->dev_loss, ev->dev_ppl, ev->improved ? " | best" : "");
        if (isfinite(ev->aer))
            rs_log("epoch %d | step %lld | dev AER %.2f%% | precision %.2f%% | recall %.2f%%\n",
                   ev->epoch, (long long)ev->step, 100 * ev->aer, 100 * ev->align_precision,
                   100 * ev->align_recall);
        break;
    case RS_EV_SAVED:
        if (!r->quiet)
            rs_log("saved %s\n", ev->path);
        break;
    case RS_EV_STOPPED:
        r->reason = ev->reason;
        r->epoch = ev->epoch;
        break;
    }
}

static int read_pairs(const char *tsv, const char *src, const char *tgt, int swap, rs_pairs *out,
                      rs_error *err)
{
    if (tsv)
        return rs_pairs_read_tsv(tsv, swap, out, err);
    return swap ? rs_pairs_read_parallel(tgt, src, out, err)
                : rs_pairs_read_parallel(src, tgt, out, err);
}

/* SentencePiece models for both sides: read from files, or trained on the
 * normalised training sentences with cfg->subwords pieces each. */
static int obtain_subwords(const rs_config *cfg, const rs_pairs *pairs, const char *src_file,
                           const char *tgt_file, char *blob[2], size_t len[2], rs_error *err)
{
    if (src_file) {
        rs_spm *spm;
        if (rs_spm_load_file(&spm, src_file, &blob[0], &len[0], err))
            return -1;
        rs_spm_free(spm);
        if (rs_spm_load_file(&spm, tgt_file, &blob[1], &len[1], err))
            return -1;
        rs_spm_free(spm);
        return 0;
    }
    char **text = rs_calloc((size_t)pairs->count + 1, sizeof(char *), err);
    if (!text)
        return -1;
    int status = 0;
    for (int side = 0; side < 2 && status == 0; side++) {
        char *const *raw = side == 0 ? pairs->src : pairs->tgt;
        for (int i = 0; i < pairs->count && status == 0; i++)
            status = rs_text_normalize(raw[i], strlen(raw[i]), cfg->lowercase, &text[i], err);
        if (status == 0) {
            rs_log("training a %d-piece SentencePiece model for the %s side\n", cfg->subwords,
                   side == 0 ? "source" : "target");
            status = rs_spm_train((const char *const *)text, pairs->count, cfg->subwords, "unigram",
                                  &blob[side], &len[side], err);
        }
        for (int i = 0; i < pairs->count; i++) {
            free(text[i]);
            text[i] = NULL;
        }
    }
    free(text);
    return status;
}

/* The first SIGINT, SIGTERM or SIGHUP asks the loop to stop after the current
 * step; a second one ends the program at once, before it touches a file.
 * Signals may land on any thread (the shards' workers too), two at once on
 * two threads: the count, taken atomically, says which came first. */
static volatile sig_atomic_t stop_signal;
static atomic_int signals_seen;

static void on_signal(int sig)
{
    if (atomic_fetch_add(&signals_seen, 1) > 0)
        _exit(128 + sig);
    stop_signal = sig;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static int was_given(const char *key, const int *given)
{
    for (int i = 0; i < RS_CLI_MAX_CONFIG_OPTIONS; i++)
        if (given[i] && !strcmp(rs_cli_config_name(OPT_CONFIG + i, OPT_CONFIG), key))
            return 1;
    return 0;
}

/* The command that resumes this run: the arguments as given, with --resume
 * instead of --overwrite, quoted for a POSIX shell where needed. */
static void print_resume_command(FILE *out, int argc, char **argv, int resume)
{
    fprintf(out, "rnnsearch train");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--overwrite") || !strcmp(a, "--new-data"))
            continue; /* the checkpoint records the data it continued on */
        if (a[strspn(a,
                     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%")]) {
            fputs(" '", out);
            for (; *a; a++)
                fputs(*a == '\'' ? "'\\''" : (char[2]){*a, 0}, out);
            fputc('\'', out);
        } else {
            fprintf(out, " %s", a);
        }
    }
    fprintf(out, "%s\n", resume ? "" : " --resume");
}

/* Why training stopped, where the models are and how to go on. */
static void print_stop(const reporter *r, const rs_train_state *state, const rs_config *cfg,
                       const char *dir, int argc, char **argv, int resume)
{
    switch (r->reason) {
    case RS_STOP_EPOCHS: rs_log("stopped: all %d epochs done", cfg->epochs); break;
    case RS_STOP_MAX_STEPS: rs_log("stopped: --max-steps %d reached", cfg->max_steps); break;
    case RS_STOP_TIME: rs_log("stopped: --max-minutes %g reached", (double)cfg->max_minutes); break;
    case RS_STOP_PATIENCE:
        rs_log("stopped: %d dev evaluations without improvement (--patience)", cfg->patience);
        break;
    case RS_STOP_SIGNAL:
        rs_log("stopped: interrupted by %s", stop_signal == SIGINT    ? "SIGINT (Ctrl-C)"
                                             : stop_signal == SIGTERM ? "SIGTERM"
                                             : stop_signal == SIGHUP  ? "SIGHUP"
                                                                      : "a signal");
        break;
    }
    rs_log(" at step %lld (epoch %d)\n", (long long)state->step, r->epoch);
    rs_log("last model: %s/last.ckpt\n", dir);
    char best[4200];
    snprintf(best, sizeof best, "%s/best.ckpt", dir);
    if (access(best, F_OK) == 0) {
        rs_log("best model: %s", best);
        if (cfg->dev_bleu && state->best_dev_bleu >= 0)
            rs_log(" (dev BLEU %.2f)", (double)state->best_dev_bleu);
        else if (isfinite(state->best_dev_loss))
            rs_log(" (dev loss %.4f)", (double)state->best_dev_loss);
        rs_log("\n");
    }
    rs_log("to continue: ");
    rs_log_capture resume_command;
    if (rs_log_capture_begin(&resume_command))
        print_resume_command(resume_command.f, argc, argv, resume);
    rs_log_capture_end(&resume_command);
    if (r->reason == RS_STOP_EPOCHS || r->reason == RS_STOP_MAX_STEPS)
        rs_log("(with a larger --epochs or --max-steps)\n");
}

/* The option that does nothing without a dev set, or NULL. */
static const char *needs_dev_set(const rs_config *cfg)
{
    return cfg->dev_bleu           ? "--dev-bleu"
           : cfg->dev_translate    ? "--dev-translate"
           : cfg->patience > 0     ? "--patience"
           : cfg->lr_decay != 1.0f ? "--lr-decay"
                                   : NULL;
}

/* On --resume, the options given must agree with the checkpoint's, except
 * those that may change (rs_config_may_change_on_resume), which are applied. */
static int apply_resume_options(rs_config *stored, const int *given, const char **given_arg,
                                rs_error *err)
{
    for (int i = 0; i < RS_CLI_MAX_CONFIG_OPTIONS; i++) {
        if (!given[i])
            continue;
        const char *key = rs_cli_config_name(OPT_CONFIG + i, OPT_CONFIG);
        rs_config asked = *stored;
        if (rs_cli_set_config(&asked, OPT_CONFIG + i, OPT_CONFIG, given_arg[i], err))
            return -1;
        if (rs_config_may_change_on_resume(key)) {
            *stored = asked;
            continue;
        }
        char was[RS_STR_MAX], now[RS_STR_MAX];
        rs_config_format(stored, key, was, sizeof was);
        rs_config_format(&asked, key, now, sizeof now);
        char resumable[256];
        resumable_options(resumable, sizeof resumable);
        if (strcmp(was, now))
            return rs_fail(err,
                           "--resume: the checkpoint was trained with %s=%s, not %s; only "
                           "%s may change on resume",
                           key, was, now, resumable);
    }
    return 0;
}

/* A set of pairs (training or dev) as given on the command line. */
typedef struct {
    const char *what; /* "training", "dev" */
    const char *tsv_option, *tsv;
    const char *src_option, *src, *tgt_option, *tgt;
} data_given;

/* How the set given now differs from the checkpoint's: `sides` 1 source,
 * 2 target, 3 both; pair counts 0 for no set. */
static void describe_change(char *buf, size_t size, const data_given *g, int sides,
                            unsigned pairs_then, unsigned pairs_now)
{
    const char *option = g->tsv ? g->tsv_option : g->src_option;
    const char *file = g->tsv ? g->tsv : g->src;
    if (pairs_then == 0) {
        snprintf(buf, size, "it was trained without a %s set, and %s %s gives one now", g->what,
                 option, file);
        return;
    }
    if (pairs_now == 0) {
        snprintf(buf, size, "it was trained with a %s set of %u pairs, and none is given now",
                 g->what, pairs_then);
        return;
    }
    const char *side = sides == 1   ? "the source side"
                       : sides == 2 ? "the target side"
                                    : "both sides";
    if (g->tsv || sides != 3)
        snprintf(buf, size, "the %s data differs from %s %s (%s; %u pairs now, %u then)", g->what,
                 g->tsv || sides == 1 ? option : g->tgt_option,
                 g->tsv || sides == 1 ? file : g->tgt, side, pairs_now, pairs_then);
    else
        snprintf(buf, size, "the %s data differs from %s %s and %s %s (%s; %u pairs now, %u then)",
                 g->what, g->src_option, g->src, g->tgt_option, g->tgt, side, pairs_now,
                 pairs_then);
}

/* --resume: the data given now against the fingerprint the checkpoint
 * records. Other data is refused (RS_EXIT_USAGE), unless --new-data accepts
 * it: then an epoch in progress on other training data starts again from its
 * beginning (its position means nothing in this data), and a dev set that
 * changed starts its records anew (a loss or BLEU on other dev pairs is no
 * measure to beat). A checkpoint from before fingerprints cannot be checked:
 * a note says so (with --new-data, its epoch in progress starts again).
 * rs_train records the fingerprint of the data given now either way. */
static int check_resumed_data(const char *ckpt, rs_train_state *state,
                              const rs_data_fingerprint *now, const data_given given[2],
                              int new_data, rs_error *err)
{
    const int speak = rs_dist_rank() == 0;
    if (!state->data.known) {
        if (speak)
            rs_log(PROG ": note: %s records no fingerprint of its data (written by an "
                        "older rnnsearch), so the data given now cannot be checked\n",
                   ckpt);
        if (new_data) /* taken at its word: the data is other */
            state->batches_done = 0;
        return RS_EXIT_OK;
    }
    const rs_data_fingerprint *then = &state->data;
    const int differ = rs_data_fingerprint_compare(then, now);
    /* 1 source, 2 target, 3 both */
    const int train_sides =
        (differ & RS_DATA_TRAIN_SRC ? 1 : 0) | (differ & RS_DATA_TRAIN_TGT ? 2 : 0);
    const int dev_sides = (differ & RS_DATA_DEV_SRC ? 1 : 0) | (differ & RS_DATA_DEV_TGT ? 2 : 0);
    if (!differ)
        return RS_EXIT_OK;
    if (new_data) {
        if (train_sides) {
            if (speak)
                rs_log(PROG ": --new-data: continuing %s on other training data%s\n", ckpt,
                       state->batches_done ? ", from the beginning of an epoch" : "");
            state->batches_done = 0;
        }
        if (dev_sides) {
            if (speak)
                rs_log(PROG ": --new-data: continuing %s with another dev set; "
                            "best.ckpt is chosen anew on it\n",
                       ckpt);
            state->best_dev_loss = INFINITY;
            state->best_dev_bleu = -1.0f;
            state->bad_evals = 0;
        }
        return RS_EXIT_OK;
    }
    char clause[2][sizeof err->msg] = {"", ""};
    if (train_sides)
        describe_change(clause[0], sizeof clause[0], &given[0], train_sides, then->train_pairs,
                        now->train_pairs);
    if (dev_sides)
        describe_change(clause[1], sizeof clause[1], &given[1], dev_sides, then->dev_pairs,
                        now->dev_pairs);
    rs_fail(err,
            "--resume: %s was trained on other data: %s%s%s. Resuming would not continue "
            "that run (its epoch order and step counts refer to its data): give the data it "
            "was trained on, or --new-data to continue training on this data (e.g. to "
            "fine-tune)",
            ckpt, clause[0], clause[0][0] && clause[1][0] ? "; " : "", clause[1]);
    return RS_EXIT_USAGE;
}

/* Locks the model directory and checks what it holds against --resume and
 * --overwrite (clearing it for --overwrite). Returns an exit status, with the
 * reason in err: RS_EXIT_USAGE for a request that does not fit the directory. */
static int claim_model_dir(const char *dir, const char *ckpt, int resume, int overwrite, int *lock,
                           rs_error *err)
{
    if (rs_train_lock(dir, lock, err))
        return RS_EXIT_FAIL;
    if (!resume && rs_train_dir_has_model(dir)) {
        if (!overwrite) {
            rs_fail(err,
                    "%s already holds a model; give --resume to continue it or "
                    "--overwrite to replace it",
                    dir);
            return RS_EXIT_USAGE;
        }
        if (rs_train_clear_dir(dir, err))
            return RS_EXIT_FAIL;
    }
    if (resume && access(ckpt, F_OK) && rs_train_dir_has_model(dir)) {
        rs_fail(err,
                "%s has no last.ckpt to resume (training stopped before its first save); "
                "start again with --overwrite",
                dir);
        return RS_EXIT_USAGE;
    }
    return RS_EXIT_OK;
}


/* What the command line and --config FILE ask for. */
typedef struct {
    const char *train_tsv, *train_src, *train_tgt, *dev_tsv, *dev_src, *dev_tgt;
    const char *name, *out_dir, *spm_src, *spm_tgt;
    const char *watch_file, *dev_align; /* --watch, --dev-align */
    const char *log_path;               /* --log, else DIR/train.log */
    int swap, resume, overwrite, quiet, new_data, no_watch;
    float align_threshold; /* --dev-align-threshold */
    rs_config cfg;
    /* Configuration options given (on the line or in the file), to check
     * against a resumed checkpoint's. */
    int given[RS_CLI_MAX_CONFIG_OPTIONS];
    const char *given_arg[RS_CLI_MAX_CONFIG_OPTIONS];
    char dir[4096], ckpt[4200];
    rs_cli_args args; /* holds the file's values */
} train_request;

/* One option, from the command line or the file (rs_cli_apply). */
static int apply_option(void *ctx, int val, const char *arg)
{
    train_request *rq = ctx;
    switch (val) {
    case OPT_TRAIN: rq->train_tsv = arg; break;
    case OPT_SRC: rq->train_src = arg; break;
    case OPT_TGT: rq->train_tgt = arg; break;
    case OPT_DEV: rq->dev_tsv = arg; break;
    case OPT_DEV_SRC: rq->dev_src = arg; break;
    case OPT_DEV_TGT: rq->dev_tgt = arg; break;
    case OPT_SWAP: rq->swap = 1; break;
    case OPT_NAME: rq->name = arg; break;
    case OPT_OUT: rq->out_dir = arg; break;
    case OPT_RESUME: rq->resume = 1; break;
    case OPT_OVERWRITE: rq->overwrite = 1; break;
    case OPT_QUIET: rq->quiet = 1; break;
    case OPT_NEW_DATA: rq->new_data = 1; break;
    case OPT_SPM_SRC: rq->spm_src = arg; break;
    case OPT_SPM_TGT: rq->spm_tgt = arg; break;
    case OPT_WATCH: rq->watch_file = arg; break;
    case OPT_LOG: rq->log_path = arg; break;
    case OPT_NO_WATCH: rq->no_watch = 1; break;
    case OPT_DEV_ALIGN: rq->dev_align = arg; break;
    case OPT_DEV_ALIGN_THRESHOLD: {
        double v;
        if (rs_cli_double(PROG, "--dev-align-threshold", arg, 0.0, 1.0, &v))
            return RS_EXIT_USAGE;
        rq->align_threshold = (float)v;
        break;
    }
    default: {
        rs_error err;
        if (val < OPT_CONFIG || val >= OPT_CONFIG + RS_CLI_MAX_CONFIG_OPTIONS)
            return RS_EXIT_USAGE; /* RS_CLI_BAD, already reported */
        if (rs_cli_set_config(&rq->cfg, val, OPT_CONFIG, arg, &err))
            return rs_cli_usage_error(PROG, "%s", err.msg);
        rq->given[val - OPT_CONFIG] = 1;
        rq->given_arg[val - OPT_CONFIG] = arg;
    }
    }
    return -1;
}

/* The requests no option can refuse alone. */
static int check_request(train_request *rq)
{
    if (!rq->train_tsv == !(rq->train_src && rq->train_tgt) ||
        (rq->train_tsv && (rq->train_src || rq->train_tgt)))
        return rs_cli_usage_error(PROG, "give either --train PAIRS.tsv or both --src and --tgt");
    if ((rq->dev_src || rq->dev_tgt) && (!rq->dev_src || !rq->dev_tgt || rq->dev_tsv))
        return rs_cli_usage_error(PROG, "give either --dev PAIRS.tsv or both --dev-src and "
                                        "--dev-tgt");
    if (rq->resume && rq->overwrite)
        return rs_cli_usage_error(PROG, "--resume and --overwrite contradict each other");
    if (rq->watch_file && rq->no_watch)
        return rs_cli_usage_error(PROG, "--watch and --no-watch contradict each other");
    if (rq->dev_align && !rq->dev_tsv && !rq->dev_src)
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
    if (!rq->spm_src != !rq->spm_tgt)
        return rs_cli_usage_error(PROG, "give both --spm-src and --spm-tgt");
    if (rq->resume && rq->spm_src)
        return rs_cli_usage_error(PROG, "--resume uses the checkpoint's SentencePiece models; "
                                        "--spm-src/--spm-tgt cannot be given");
    rs_config *cfg = &rq->cfg;
    /* Subwords imply --tokenizer spm unless another tokenizer was asked for. */
    if ((cfg->subwords > 0 || rq->spm_src) && !was_given("tokenizer", rq->given))
        cfg->tokenizer = RS_TOKENIZER_SPM;
    if (rq->spm_src && cfg->tokenizer != RS_TOKENIZER_SPM)
        return rs_cli_usage_error(PROG, "--spm-src/--spm-tgt conflict with --tokenizer %s",
                                  rs_tokenizer_names[cfg->tokenizer]);
    rs_error err;
    if (!rq->resume && rs_config_check(cfg, &err))
        return rs_cli_usage_error(PROG, "%s", err.msg);
    if (!rq->resume && cfg->tokenizer == RS_TOKENIZER_SPM && cfg->subwords <= 0 && !rq->spm_src)
        return rs_cli_usage_error(PROG,
                                  "--tokenizer spm needs --subwords N or --spm-src/--spm-tgt");
    if (!rq->dev_tsv && !rq->dev_src && needs_dev_set(cfg))
        return rs_cli_usage_error(PROG, "%s needs a dev set (--dev or --dev-src/--dev-tgt)",
                                  needs_dev_set(cfg));
    return -1;
}

/* Parses the command line, then the --config file for what the command line
 * does not give, and checks the request; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, train_request *rq)
{
    struct option opts[32 + RS_CLI_MAX_CONFIG_OPTIONS] = {
        {"train", required_argument, NULL, OPT_TRAIN},
        {"src", required_argument, NULL, OPT_SRC},
        {"tgt", required_argument, NULL, OPT_TGT},
        {"dev", required_argument, NULL, OPT_DEV},
        {"dev-src", required_argument, NULL, OPT_DEV_SRC},
        {"dev-tgt", required_argument, NULL, OPT_DEV_TGT},
        {"swap", no_argument, NULL, OPT_SWAP},
        {"name", required_argument, NULL, OPT_NAME},
        {"out", required_argument, NULL, OPT_OUT},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"overwrite", no_argument, NULL, OPT_OVERWRITE},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"spm-src", required_argument, NULL, OPT_SPM_SRC},
        {"spm-tgt", required_argument, NULL, OPT_SPM_TGT},
        {"new-data", no_argument, NULL, OPT_NEW_DATA},
        {"watch", required_argument, NULL, OPT_WATCH},
        {"no-watch", no_argument, NULL, OPT_NO_WATCH},
        {"dev-align", required_argument, NULL, OPT_DEV_ALIGN},
        {"dev-align-threshold", required_argument, NULL, OPT_DEV_ALIGN_THRESHOLD},
        {"config", required_argument, NULL, RS_CLI_CONFIG},
        {"log", required_argument, NULL, OPT_LOG},
    };
    rs_cli_add_config_options(opts, 21, OPT_CONFIG);
    rs_config_defaults(&rq->cfg);
    rs_cli_begin(&rq->args, PROG, argc, argv, "", opts);
    int c, status;
    while ((c = rs_cli_next(&rq->args)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return RS_EXIT_OK;
        }
        if ((status = apply_option(rq, c, optarg)) >= 0)
            return status;
    }
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if ((status = rs_cli_apply_config(&rq->args, "train", apply_option, rq)) >= 0 ||
        (status = check_request(rq)) >= 0)
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

/* Everything a training run holds, freed by run_free. */
typedef struct {
    int lock;
    rs_pairs train_pairs, dev_pairs;
    rs_tokenized train_tok, dev_tok;
    rs_dataset train, dev;
    rs_model model;
    rs_train_state state;
    rs_codec codec;
    rs_watch watch; /* watched sentences and dev gold links */
    char *spm_blob[2];
    size_t spm_len[2];
    int skipped; /* training pairs longer than --max-len */
} train_run;

static void run_free(train_run *run)
{
    rs_train_unlock(run->lock);
    rs_watch_free(&run->watch);
    free(run->spm_blob[0]);
    free(run->spm_blob[1]);
    rs_codec_free(&run->codec);
    rs_dataset_free(&run->train);
    rs_dataset_free(&run->dev);
    rs_tokenized_free(&run->train_tok);
    rs_tokenized_free(&run->dev_tok);
    rs_pairs_free(&run->train_pairs);
    rs_pairs_free(&run->dev_pairs);
    rs_train_state_free(&run->state);
    rs_model_free(&run->model);
}

/* --resume: the checkpoint's model and state, and its configuration with the
 * options that may change applied. Returns an exit status; err says why. */
static int resume_checkpoint(train_request *rq, train_run *run, rs_error *err)
{
    /* Every rank reads the checkpoint (rs_train checks that they agree). */
    if (rs_dist_check(rs_checkpoint_load(rq->ckpt, &run->model, &run->state, err), err))
        return RS_EXIT_FAIL;
    if (!run->state.from_checkpoint) {
        /* Weights only (average, import): resuming would restart at step 0
         * and rewrite this run's log and best.ckpt. */
        rs_fail(err,
                "--resume: %s holds weights only, no training state (step, Adam moments, data "
                "position), as `average` and `import` write; nothing was changed. Resume from "
                "the run's own last.ckpt, or train a new model in another directory",
                rq->ckpt);
        return RS_EXIT_USAGE;
    }
    if (apply_resume_options(&run->model.cfg, rq->given, rq->given_arg, err))
        return RS_EXIT_USAGE;
    rq->cfg = run->model.cfg;
    if (!rq->dev_tsv && !rq->dev_src && needs_dev_set(&rq->cfg)) {
        rs_fail(err,
                "the checkpoint was trained with %s, which needs the dev set: give it again "
                "with --dev or --dev-src/--dev-tgt",
                needs_dev_set(&rq->cfg));
        return RS_EXIT_USAGE;
    }
    return RS_EXIT_OK;
}

/* The text codec: the checkpoint's, or a new one from the configuration, with
 * SentencePiece models read or trained by rank 0 and sent to the others. */
static int make_codec(const train_request *rq, train_run *run, rs_error *err)
{
    if (rq->resume)
        return rs_codec_for_model(&run->codec, &run->model, err);
    const rs_config *cfg = &rq->cfg;
    if (rs_codec_init(&run->codec, cfg, err))
        return -1;
    if (cfg->tokenizer == RS_TOKENIZER_SPM &&
        (rs_dist_check(rs_dist_rank() == 0
                           ? obtain_subwords(cfg, &run->train_pairs, rq->spm_src, rq->spm_tgt,
                                             run->spm_blob, run->spm_len, err)
                           : 0,
                       err) ||
         rs_dist_broadcast_blob(&run->spm_blob[0], &run->spm_len[0], err) ||
         rs_dist_broadcast_blob(&run->spm_blob[1], &run->spm_len[1], err)))
        return -1;
    for (int side = 0; side < 2 && run->spm_blob[0]; side++)
        if (rs_codec_set_spm(&run->codec, side, run->spm_blob[side], run->spm_len[side], err))
            return -1;
    return 0;
}

/* A new model: vocabularies from the training data, weights from the seed. */
static int new_model(train_request *rq, train_run *run, rs_error *err)
{
    rs_config *cfg = &rq->cfg;
    rs_vocab src_counts = {0}, tgt_counts = {0}, src_vocab = {0}, tgt_vocab = {0};
    int status = -1;
    if (rs_vocab_init(&src_counts, err) || rs_vocab_init(&tgt_counts, err) ||
        rs_count_tokens(&src_counts, &run->train_tok, RS_SIDE_SRC, err) ||
        rs_count_tokens(&tgt_counts, &run->train_tok, RS_SIDE_TGT, err) ||
        rs_vocab_select(&src_vocab, &src_counts, cfg->min_freq, cfg->max_vocab, err) ||
        rs_vocab_select(&tgt_vocab, &tgt_counts, cfg->min_freq, cfg->max_vocab, err))
        goto done;
    cfg->src_vocab = src_vocab.size;
    cfg->tgt_vocab = tgt_vocab.size;
    if (rs_model_alloc(&run->model, cfg, err))
        goto done;
    run->model.src_vocab = src_vocab;
    run->model.tgt_vocab = tgt_vocab;
    memset(&src_vocab, 0, sizeof src_vocab);
    memset(&tgt_vocab, 0, sizeof tgt_vocab);
    run->model.spm_src = run->spm_blob[0], run->model.spm_src_len = run->spm_len[0];
    run->model.spm_tgt = run->spm_blob[1], run->model.spm_tgt_len = run->spm_len[1];
    run->spm_blob[0] = run->spm_blob[1] = NULL;
    rs_rng init_rng;
    rs_rng_seed(&init_rng, (uint64_t)cfg->seed ^ 0x5eedULL);
    rs_model_init_random(&run->model, &init_rng);
    status = rs_train_state_alloc(&run->state, &run->model, err);
done:
    rs_vocab_free(&src_vocab);
    rs_vocab_free(&tgt_vocab);
    rs_vocab_free(&src_counts);
    rs_vocab_free(&tgt_counts);
    return status;
}

/* The watched sentences (--watch FILE, else the first dev pairs) and the dev
 * gold links (--dev-align). */
static int setup_watch(rs_watch *w, const char *file, int off, const char *gold,
                       const rs_pairs *dev, const rs_codec *codec, rs_error *err)
{
    w->codec = codec;
    if (file ? rs_watch_read_file(w, file, err)
             : !off && rs_watch_from_pairs(w, dev->src, dev->tgt, dev->count,
                                           RS_WATCH_DEFAULT_COUNT, err))
        return -1;
    return gold ? rs_watch_read_gold(w, gold, dev->count, err) : 0;
}

/* The training and dev sets as id sequences, the watched sentences, and the
 * model they train (new, or the resumed one). */
static int prepare_data(train_request *rq, train_run *run, rs_error *err)
{
    if (rs_dist_check(read_pairs(rq->train_tsv, rq->train_src, rq->train_tgt, rq->swap,
                                 &run->train_pairs, err),
                      err) ||
        make_codec(rq, run, err) ||
        rs_tokenize_pairs(&run->train_tok, &run->train_pairs, &run->codec,
                          rq->train_tsv ? rq->train_tsv : rq->train_src, err))
        return -1;
    if ((rq->dev_tsv || rq->dev_src) &&
        rs_dist_check(
            read_pairs(rq->dev_tsv, rq->dev_src, rq->dev_tgt, rq->swap, &run->dev_pairs, err) ||
                rs_tokenize_pairs(&run->dev_tok, &run->dev_pairs, &run->codec,
                                  rq->dev_tsv ? rq->dev_tsv : rq->dev_src, err),
            err))
        return -1;
    run->watch.threshold = rq->align_threshold;
    if (setup_watch(&run->watch, rq->watch_file, rq->no_watch, rq->dev_align, &run->dev_pairs,
                    &run->codec, err))
        return -1;
    if (!rq->resume && new_model(rq, run, err))
        return -1;
    const rs_model *m = &run->model;
    if (rs_dataset_build(&run->train, &run->train_tok, &m->src_vocab, &m->tgt_vocab,
                         rq->cfg.max_len, &run->skipped, err) ||
        rs_dataset_build(&run->dev, &run->dev_tok, &m->src_vocab, &m->tgt_vocab, 0, NULL, err))
        return -1;
    rs_tokenized_free(&run->train_tok);
    rs_tokenized_free(&run->dev_tok);
    return 0;
}

/* What is trained on what, said once by rank 0. */
static void print_header(const train_request *rq, const train_run *run)
{
    if (rs_dist_rank() != 0)
        return;
    rs_log("%s %s: %d training pairs (%d longer than %d tokens left out), %d dev pairs\n",
           rq->resume ? "resuming" : "training", rq->dir, run->train.count, run->skipped,
           rq->cfg.max_len, run->dev.count);
    rs_log("vocabularies: %d source, %d target; %zu parameters\n", run->model.cfg.src_vocab,
           run->model.cfg.tgt_vocab, run->model.layout.total);
    rs_log("configuration: ");
    rs_log_capture config_line;
    if (rs_log_capture_begin(&config_line))
        rs_config_print(&run->model.cfg, config_line.f);
    rs_log_capture_end(&config_line);
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
    return rs_log_open(rq->log_path ? rq->log_path : path, err);
}

/* An exit status reached on rank 0 and agreed by every rank, printed once. */
static int agreed(int status, rs_error *err)
{
    if (rs_dist_check_exit(&status, err) && rs_dist_rank() == 0)
        rs_log(PROG ": %s\n", err->msg);
    return status;
}

/* The run from a checked request: the directory claimed, the checkpoint
 * resumed or a model made, the data checked against a resumed run's, then
 * training until it stops, and how it stopped. */
static int train(train_request *rq, train_run *run, int argc, char **argv)
{
    rs_error err;
    /* Under mpirun rank 0 alone writes the model directory: one it cannot use
     * stops every rank before any work. */
    int status = agreed(rs_dist_rank() == 0 ? claim_model_dir(rq->dir, rq->ckpt, rq->resume,
                                                              rq->overwrite, &run->lock, &err)
                                            : RS_EXIT_OK,
                        &err);
    if (status != RS_EXIT_OK)
        return status;
    status = RS_EXIT_FAIL;
    if (rs_dist_rank() == 0 && open_log(rq, &err))
        goto fail;
    if (rq->resume && (status = resume_checkpoint(rq, run, &err)) != RS_EXIT_OK)
        goto fail;
    if (rq->cfg.threads > 0)
        openblas_set_num_threads(rq->cfg.threads);
    status = RS_EXIT_FAIL;
    if (prepare_data(rq, run, &err))
        goto fail;
    if (rq->resume) {
        /* Before rs_train, which is the first to write into the directory. */
        const data_given sets[2] = {
            {"training", "--train", rq->train_tsv, "--src", rq->train_src, "--tgt", rq->train_tgt},
            {"dev", "--dev", rq->dev_tsv, "--dev-src", rq->dev_src, "--dev-tgt", rq->dev_tgt}};
        rs_data_fingerprint now;
        rs_data_fingerprint_of(&now, &run->train, &run->dev,
                               rq->cfg.dev_bleu ? run->dev_pairs.tgt : NULL);
        status =
            agreed(check_resumed_data(rq->ckpt, &run->state, &now, sets, rq->new_data, &err), &err);
        if (status != RS_EXIT_OK)
            return status;
        status = RS_EXIT_FAIL;
    }
    print_header(rq, run);
    rs_train_options options = {.report_seconds = 2.0, .stop = &stop_signal, .dir = rq->dir};
    if (rq->cfg.dev_bleu) {
        options.codec = &run->codec;
        options.dev_refs = run->dev_pairs.tgt;
    }
    options.watch = run->watch.count || run->watch.gold ? &run->watch : NULL;
    reporter rep = {rq->quiet, RS_STOP_EPOCHS, 0};
    catch_signals();
    if (rs_train(&run->model, &run->state, &run->train, &run->dev, &options, report, &rep, &err))
        goto fail;
    if (rs_dist_rank() == 0)
        print_stop(&rep, &run->state, &run->model.cfg, rq->dir, argc, argv, rq->resume);
    return rep.reason == RS_STOP_SIGNAL ? 128 + (int)stop_signal : RS_EXIT_OK;
fail:
    if (rs_dist_rank() == 0 || !rs_dist_failure_agreed()) /* said once for all ranks */
        rs_log(PROG ": %s\n", err.msg);
    return status;
}

int cmd_train(int argc, char **argv)
{
    static train_request rq; /* large; one per process */
    memset(&rq, 0, sizeof rq);
    int status = parse_request(argc, argv, &rq);
    if (status < 0) {
        train_run run = {.lock = -1};
        status = train(&rq, &run, argc, argv);
        rs_log_close();
        run_free(&run);
    }
    rs_cli_end(&rq.args);
    return status;
}
