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
            "the model directory (last.ckpt each epoch, best.ckpt by dev loss, train.log.tsv):\n"
            "--name NAME is $" RS_MODELS_ENV "/NAME, or models/NAME when that is not set\n"
            "('rnnsearch help models'); --out DIR is DIR.\n\n"
            "data:\n"
            "  --train FILE           pairs, one per line: source<TAB>target[<TAB>anything]\n"
            "  --src FILE, --tgt FILE line-aligned source and target files (instead of --train)\n"
            "  --dev FILE             dev pairs (TSV), evaluated each epoch\n"
            "  --dev-src F, --dev-tgt F  dev pairs as two files\n"
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
            "  --config FILE          settings as 'key = value' lines (or the configuration\n"
            "                         line training prints); options given on the command\n"
            "                         line win\n"
            "  --quiet                no progress lines\n"
            "  --spm-src F, --spm-tgt F  use these SentencePiece .model files (instead of\n"
            "                         training them with --subwords N)\n"
            "  --watch FILE           sentences (SOURCE or SOURCE<TAB>TARGET lines) whose\n"
            "                         alignments every evaluation appends to DIR/watch.jsonl\n"
            "                         (default: the first %d dev pairs when there is a dev set)\n"
            "  --no-watch             no watch.jsonl\n"
            "  --dev-align FILE       gold links of the dev pairs (Pharaoh: 'i-j' sure, 'i?j'\n"
            "                         possible): each evaluation logs the alignment error rate,\n"
            "                         precision and recall of the dev forced alignments\n"
            "  --dev-align-threshold T  hard links are weights >= T (default: 0 = argmax)\n\n"
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
        fprintf(
            stderr,
            "step %lld/%lld | epoch %d | loss %.4f | ppl %.2f | tok/s %.0f | gnorm %.3f | lr %.3g | eta %.0fs\n",
            (long long)ev->step, (long long)ev->total_steps, ev->epoch, ev->loss, ev->ppl,
            ev->tokens_per_s, ev->gnorm, ev->lr, ev->eta_s);
        break;
    case RS_EV_DEV:
        if (isnan(ev->dev_loss))
            fprintf(stderr, "epoch %d | step %lld | no dev set\n", ev->epoch, (long long)ev->step);
        else if (ev->dev_bleu >= 0)
            fprintf(
                stderr,
                "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev BLEU %.2f | lr %.3g%s%s\n",
                ev->epoch, (long long)ev->step, ev->dev_loss, ev->dev_ppl, ev->dev_bleu, ev->lr,
                ev->improved ? " | best" : "", ev->stop ? " | stopping (patience)" : "");
        else if (ev->dev_exact >= 0)
            fprintf(stderr,
                    "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev exact %.2f%%%s\n",
                    ev->epoch, (long long)ev->step, ev->dev_loss, ev->dev_ppl, 100 * ev->dev_exact,
                    ev->improved ? " | best" : "");
        else
            fprintf(stderr, "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f%s\n", ev->epoch,
                    (long long)ev->step, ev->dev_loss, ev->dev_ppl, ev->improved ? " | best" : "");
        if (isfinite(ev->aer))
            fprintf(stderr,
                    "epoch %d | step %lld | dev AER %.2f%% | precision %.2f%% | recall %.2f%%\n",
                    ev->epoch, (long long)ev->step, 100 * ev->aer, 100 * ev->align_precision,
                    100 * ev->align_recall);
        break;
    case RS_EV_SAVED:
        if (!r->quiet)
            fprintf(stderr, "saved %s\n", ev->path);
        break;
    case RS_EV_STOPPED: r->reason = ev->reason; break;
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
            fprintf(stderr, "training a %d-piece SentencePiece model for the %s side\n",
                    cfg->subwords, side == 0 ? "source" : "target");
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

/* The arguments of a --config FILE run: the file's settings as options
 * placed before the command line's (which therefore win). */
typedef struct {
    int argc;
    char **argv;  /* [argc + 1] */
    char **owned; /* the strings made here, [count] */
    int count;
} expanded_args;

static void expanded_args_free(expanded_args *a)
{
    for (int i = 0; i < a->count; i++)
        free(a->owned[i]);
    free(a->owned);
    free(a->argv);
    memset(a, 0, sizeof *a);
}

static char *own(expanded_args *a, const char *prefix, const char *text, size_t len)
{
    char *s = malloc(strlen(prefix) + len + 1);
    if (!s)
        return NULL;
    sprintf(s, "%s%.*s", prefix, (int)len, text);
    for (char *p = s + strlen(prefix); *p && *prefix; p++)
        if (*p == '_')
            *p = '-';
    a->owned[a->count++] = s;
    return s;
}

/* Reads "key = value" settings, several "key=value" items to a line as the
 * configuration printout writes them ("configuration:" and '#' comments
 * ignored); the vocabulary sizes of a printout, which come from the data,
 * are skipped. Each value is checked here so that errors name FILE:LINE. */
static int expand_config_file(const char *path, int argc, char **argv, int skip_from,
                              expanded_args *out, rs_error *err)
{
    unsigned char *data;
    size_t size;
    memset(out, 0, sizeof *out);
    if (rs_read_file(path, &data, &size, err))
        return -1;
    /* Every item has an '=', so there are at most size/2 + 1 of them. */
    size_t cap = (size_t)argc + 2 * (size / 2 + 1) + 2;
    out->argv = calloc(cap, sizeof(char *));
    out->owned = calloc(cap, sizeof(char *));
    char *text = realloc(data, size + 1);
    if (!out->argv || !out->owned || !text) {
        free(text ? text : (char *)data);
        expanded_args_free(out);
        return rs_fail(err, "out of memory reading %s", path);
    }
    text[size] = 0;
    const unsigned char *nul = memchr(text, 0, size);
    if (nul) {
        int nul_line = 1;
        for (const char *p = text; p < (const char *)nul; p++)
            nul_line += *p == '\n';
        free(text);
        expanded_args_free(out);
        return rs_fail(err, "%s:%d: a NUL byte (a configuration file is text)", path, nul_line);
    }
    out->argv[out->argc++] = argv[0];
    int line_no = 0, status = 0;
    /* A UTF-8 byte order mark, as some editors write, is not part of the first key. */
    char *start = strncmp(text, "\xEF\xBB\xBF", 3) ? text : text + 3;
    for (char *line = start; line && status == 0; line_no++) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = 0;
        line[strcspn(line, "#")] = 0;
        /* "key = value" → "key=value" */
        char *w = line;
        for (char *r = line; *r; r++) {
            const char *next = r + strspn(r, " \t");
            if ((*r == ' ' || *r == '\t') && (*next == '=' || (w > line && w[-1] == '=')))
                continue;
            *w++ = *r;
        }
        *w = 0;
        char *save = NULL;
        for (char *item = strtok_r(line, " \t\r", &save); item && status == 0;
             item = strtok_r(NULL, " \t\r", &save)) {
            if (!strcmp(item, "configuration:"))
                continue;
            char *eq = strchr(item, '=');
            if (!eq || eq == item) {
                status = rs_fail(err, "%s:%d: '%s' is not key = value", path, line_no + 1, item);
                break;
            }
            *eq = 0;
            for (char *p = item; *p; p++)
                if (*p == '-')
                    *p = '_';
            if (!strcmp(item, "src_vocab") || !strcmp(item, "tgt_vocab"))
                continue;
            rs_config scratch;
            rs_config_defaults(&scratch);
            if (rs_config_set_option(&scratch, item, eq + 1, err)) {
                char inner[sizeof err->msg];
                snprintf(inner, sizeof inner, "%s", err->msg);
                status = rs_fail(err, "%s:%d: %s", path, line_no + 1, inner);
                break;
            }
            if (rs_config_is_flag(item)) {
                if (!strcmp(eq + 1, "1") && !own(out, "--", item, strlen(item)))
                    status = rs_fail(err, "out of memory reading %s", path);
                if (status == 0 && !strcmp(eq + 1, "1"))
                    out->argv[out->argc++] = out->owned[out->count - 1];
                continue;
            }
            char *option = own(out, "--", item, strlen(item));
            char *value = option ? own(out, "", eq + 1, strlen(eq + 1)) : NULL;
            if (!value)
                status = rs_fail(err, "out of memory reading %s", path);
            else {
                out->argv[out->argc++] = option;
                out->argv[out->argc++] = value;
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    free(text);
    for (int i = 1; i < argc && status == 0; i++)
        if (i != skip_from && !(i == skip_from + 1 && !strcmp(argv[skip_from], "--config")))
            out->argv[out->argc++] = argv[i];
    if (status)
        expanded_args_free(out);
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
    case RS_STOP_EPOCHS: fprintf(stderr, "stopped: all %d epochs done", cfg->epochs); break;
    case RS_STOP_MAX_STEPS:
        fprintf(stderr, "stopped: --max-steps %d reached", cfg->max_steps);
        break;
    case RS_STOP_TIME:
        fprintf(stderr, "stopped: --max-minutes %g reached", (double)cfg->max_minutes);
        break;
    case RS_STOP_PATIENCE:
        fprintf(stderr, "stopped: %d dev evaluations without improvement (--patience)",
                cfg->patience);
        break;
    case RS_STOP_SIGNAL: fprintf(stderr, "stopped: signal %d", (int)stop_signal); break;
    }
    fprintf(stderr, " at step %lld (epoch %d)\n", (long long)state->step, state->epoch);
    fprintf(stderr, "last model: %s/last.ckpt\n", dir);
    char best[4200];
    snprintf(best, sizeof best, "%s/best.ckpt", dir);
    if (access(best, F_OK) == 0) {
        fprintf(stderr, "best model: %s", best);
        if (cfg->dev_bleu && state->best_dev_bleu >= 0)
            fprintf(stderr, " (dev BLEU %.2f)", (double)state->best_dev_bleu);
        else if (isfinite(state->best_dev_loss))
            fprintf(stderr, " (dev loss %.4f)", (double)state->best_dev_loss);
        fputc('\n', stderr);
    }
    fprintf(stderr, "to continue: ");
    print_resume_command(stderr, argc, argv, resume);
    if (r->reason == RS_STOP_EPOCHS || r->reason == RS_STOP_MAX_STEPS)
        fprintf(stderr, "(with a larger --epochs or --max-steps)\n");
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
            fprintf(stderr,
                    PROG ": note: %s records no fingerprint of its data (written by an "
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
                fprintf(stderr, PROG ": --new-data: continuing %s on other training data%s\n", ckpt,
                        state->batches_done ? ", from the beginning of an epoch" : "");
            state->batches_done = 0;
        }
        if (dev_sides) {
            if (speak)
                fprintf(stderr,
                        PROG ": --new-data: continuing %s with another dev set; "
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

static int train(int argc, char **argv, int orig_argc, char **orig_argv);

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

/* --config FILE (anywhere on the line) is expanded before options are parsed. */
int cmd_train(int argc, char **argv)
{
    const char *first_config = NULL;
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        const char *path = !strcmp(argv[i], "--config") && i + 1 < argc ? argv[++i]
                           : !strncmp(argv[i], "--config=", 9)          ? argv[i] + 9
                                                                        : NULL;
        if (path && first_config)
            return rs_cli_usage_error(PROG,
                                      "--config given twice (%s and %s): give one "
                                      "configuration file; options on the command line add to it",
                                      first_config, path);
        if (path)
            first_config = path;
    }
    for (int i = 1; i < argc; i++) {
        const char *path = NULL;
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            path = argv[i + 1];
        else if (!strncmp(argv[i], "--config=", 9))
            path = argv[i] + 9;
        else if (!strcmp(argv[i], "--"))
            break;
        if (!path)
            continue;
        expanded_args args;
        rs_error err;
        if (expand_config_file(path, argc, argv, i, &args, &err)) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            return RS_EXIT_USAGE;
        }
        int status = train(args.argc, args.argv, argc, argv);
        expanded_args_free(&args);
        return status;
    }
    return train(argc, argv, argc, argv);
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

static int train(int argc, char **argv, int orig_argc, char **orig_argv)
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
    };
    rs_cli_add_config_options(opts, 19, OPT_CONFIG);
    const char *watch_file = NULL, *dev_align = NULL;
    int no_watch = 0;
    rs_watch watch = {0};
    const char *spm_src_file = NULL, *spm_tgt_file = NULL;
    const char *train_tsv = NULL, *train_src = NULL, *train_tgt = NULL;
    const char *dev_tsv = NULL, *dev_src = NULL, *dev_tgt = NULL, *name = NULL, *out_dir = NULL;
    int swap = 0, resume = 0, overwrite = 0, quiet = 0, new_data = 0;
    rs_train_options options = {.report_seconds = 2.0, .stop = &stop_signal};
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_error err;
    /* Options given explicitly, to check against a resumed configuration. */
    int given[RS_CLI_MAX_CONFIG_OPTIONS] = {0};
    const char *given_arg[RS_CLI_MAX_CONFIG_OPTIONS] = {0};

    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "", opts);
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        switch (c) {
        case OPT_TRAIN: train_tsv = optarg; break;
        case OPT_SRC: train_src = optarg; break;
        case OPT_TGT: train_tgt = optarg; break;
        case OPT_DEV: dev_tsv = optarg; break;
        case OPT_DEV_SRC: dev_src = optarg; break;
        case OPT_DEV_TGT: dev_tgt = optarg; break;
        case OPT_SWAP: swap = 1; break;
        case OPT_NAME: name = optarg; break;
        case OPT_OUT: out_dir = optarg; break;
        case OPT_RESUME: resume = 1; break;
        case OPT_OVERWRITE: overwrite = 1; break;
        case OPT_QUIET: quiet = 1; break;
        case OPT_NEW_DATA: new_data = 1; break;
        case OPT_SPM_SRC: spm_src_file = optarg; break;
        case OPT_SPM_TGT: spm_tgt_file = optarg; break;
        case OPT_WATCH: watch_file = optarg; break;
        case OPT_NO_WATCH: no_watch = 1; break;
        case OPT_DEV_ALIGN: dev_align = optarg; break;
        case OPT_DEV_ALIGN_THRESHOLD: {
            double v;
            if (rs_cli_double(PROG, "--dev-align-threshold", optarg, 0.0, 1.0, &v))
                return RS_EXIT_USAGE;
            watch.threshold = (float)v;
            break;
        }
        case 'h': usage(stdout); return RS_EXIT_OK;
        case RS_CLI_BAD: return RS_EXIT_USAGE; /* already reported */
        default:
            if (c >= OPT_CONFIG && c < OPT_CONFIG + RS_CLI_MAX_CONFIG_OPTIONS) {
                if (rs_cli_set_config(&cfg, c, OPT_CONFIG, optarg, &err)) {
                    fprintf(stderr, PROG ": %s\n", err.msg);
                    return RS_EXIT_USAGE;
                }
                given[c - OPT_CONFIG] = 1;
                given_arg[c - OPT_CONFIG] = optarg;
            }
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        return RS_EXIT_USAGE;
    }
    if (!train_tsv == !(train_src && train_tgt) || (train_tsv && (train_src || train_tgt))) {
        fprintf(stderr, PROG ": give either --train PAIRS.tsv or both --src and --tgt\n");
        return RS_EXIT_USAGE;
    }
    if ((dev_src || dev_tgt) && (!dev_src || !dev_tgt || dev_tsv)) {
        fprintf(stderr, PROG ": give either --dev PAIRS.tsv or both --dev-src and --dev-tgt\n");
        return RS_EXIT_USAGE;
    }
    if (resume && overwrite) {
        fprintf(stderr, PROG ": --resume and --overwrite contradict each other\n");
        return RS_EXIT_USAGE;
    }
    if (watch_file && no_watch)
        return rs_cli_usage_error(PROG, "--watch and --no-watch contradict each other");
    if (dev_align && !dev_tsv && !dev_src)
        return rs_cli_usage_error(PROG,
                                  "--dev-align needs a dev set (--dev or --dev-src/--dev-tgt)");
    if (new_data && !resume) {
        fprintf(stderr,
                PROG ": --new-data goes with --resume (a new run records its data anyway)\n");
        return RS_EXIT_USAGE;
    }
    char dir[4096];
    if (out_dir && name)
        return rs_cli_usage_error(PROG, "--name and --out both say where to save; give one");
    if (!out_dir && !name)
        return rs_cli_usage_error(PROG,
                                  "where to save the model: --name NAME (in %s) or --out "
                                  "DIR",
                                  rs_models_dir());
    if (out_dir) {
        snprintf(dir, sizeof dir, "%s", out_dir);
    } else {
        rs_error bad;
        if (rs_model_dir_for(name, dir, sizeof dir, &bad))
            return rs_cli_usage_error(PROG, "%s", bad.msg);
    }
    options.dir = dir;
    if (!spm_src_file != !spm_tgt_file) {
        fprintf(stderr, PROG ": give both --spm-src and --spm-tgt\n");
        return RS_EXIT_USAGE;
    }
    if (resume && spm_src_file) {
        fprintf(stderr, PROG ": --resume uses the checkpoint's SentencePiece models; "
                             "--spm-src/--spm-tgt cannot be given\n");
        return RS_EXIT_USAGE;
    }
    /* Subwords imply --tokenizer spm unless another tokenizer was asked for. */
    if ((cfg.subwords > 0 || spm_src_file) && !was_given("tokenizer", given))
        cfg.tokenizer = RS_TOKENIZER_SPM;
    if (spm_src_file && cfg.tokenizer != RS_TOKENIZER_SPM) {
        fprintf(stderr, PROG ": --spm-src/--spm-tgt conflict with --tokenizer %s\n",
                rs_tokenizer_names[cfg.tokenizer]);
        return RS_EXIT_USAGE;
    }
    if (!resume && rs_config_check(&cfg, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return RS_EXIT_USAGE;
    }
    if (!resume && cfg.tokenizer == RS_TOKENIZER_SPM && cfg.subwords <= 0 && !spm_src_file) {
        fprintf(stderr, PROG ": --tokenizer spm needs --subwords N or --spm-src/--spm-tgt\n");
        return RS_EXIT_USAGE;
    }
    if (!dev_tsv && !dev_src && needs_dev_set(&cfg)) {
        fprintf(stderr, PROG ": %s needs a dev set (--dev or --dev-src/--dev-tgt)\n",
                needs_dev_set(&cfg));
        return RS_EXIT_USAGE;
    }

    int status = RS_EXIT_FAIL, lock = -1;
    rs_pairs train_pairs = {0}, dev_pairs = {0};
    rs_tokenized train_tok = {0}, dev_tok = {0};
    rs_dataset train = {0}, dev = {0};
    rs_model model = {0};
    rs_train_state state = {0};
    rs_vocab src_counts = {0}, tgt_counts = {0};
    rs_codec codec = {0};
    char *spm_blob[2] = {NULL, NULL};
    size_t spm_len[2] = {0, 0};
    char ckpt[4200];
    snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", dir);

    /* Under mpirun rank 0 alone writes the model directory: one it cannot use
     * stops every rank before any work. */
    status = rs_dist_rank() == 0 ? claim_model_dir(dir, ckpt, resume, overwrite, &lock, &err)
                                 : RS_EXIT_OK;
    if (rs_dist_check_exit(&status, &err)) {
        if (rs_dist_rank() == 0)
            fprintf(stderr, PROG ": %s\n", err.msg);
        goto done;
    }
    status = RS_EXIT_FAIL;
    if (resume) {
        /* Every rank reads the checkpoint (rs_train checks that they agree). */
        if (rs_dist_check(rs_checkpoint_load(ckpt, &model, &state, &err), &err))
            goto fail;
        if (!state.from_checkpoint) {
            /* Weights only (average, import): resuming would restart at step 0
             * and rewrite this run's log and best.ckpt. */
            fprintf(stderr,
                    PROG ": --resume: %s holds weights only, no training state (step, "
                         "Adam moments, data position), as `average` and `import` write; "
                         "nothing was changed. Resume from the run's own last.ckpt, or "
                         "train a new model in another directory\n",
                    ckpt);
            status = RS_EXIT_USAGE;
            goto done;
        }
        if (apply_resume_options(&model.cfg, given, given_arg, &err)) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            status = RS_EXIT_USAGE;
            goto done;
        }
        cfg = model.cfg;
        if (!dev_tsv && !dev_src && needs_dev_set(&cfg)) {
            fprintf(stderr,
                    PROG ": the checkpoint was trained with %s, which needs the dev set: "
                         "give it again with --dev or --dev-src/--dev-tgt\n",
                    needs_dev_set(&cfg));
            status = RS_EXIT_USAGE;
            goto done;
        }
    }
    if (cfg.threads > 0)
        openblas_set_num_threads(cfg.threads);
    if (rs_dist_check(read_pairs(train_tsv, train_src, train_tgt, swap, &train_pairs, &err), &err))
        goto fail;
    if (resume) {
        if (rs_codec_for_model(&codec, &model, &err))
            goto fail;
    } else {
        if (rs_codec_init(&codec, &cfg, &err))
            goto fail;
        /* Rank 0 reads or trains the SentencePiece models and sends them to the others. */
        if (cfg.tokenizer == RS_TOKENIZER_SPM &&
            (rs_dist_check(rs_dist_rank() == 0
                               ? obtain_subwords(&cfg, &train_pairs, spm_src_file, spm_tgt_file,
                                                 spm_blob, spm_len, &err)
                               : 0,
                           &err) ||
             rs_dist_broadcast_blob(&spm_blob[0], &spm_len[0], &err) ||
             rs_dist_broadcast_blob(&spm_blob[1], &spm_len[1], &err)))
            goto fail;
        for (int side = 0; side < 2 && spm_blob[0]; side++)
            if (rs_codec_set_spm(&codec, side, spm_blob[side], spm_len[side], &err))
                goto fail;
    }
    if (rs_tokenize_pairs(&train_tok, &train_pairs, &codec, train_tsv ? train_tsv : train_src,
                          &err))
        goto fail;
    if ((dev_tsv || dev_src) &&
        rs_dist_check(
            read_pairs(dev_tsv, dev_src, dev_tgt, swap, &dev_pairs, &err) ||
                rs_tokenize_pairs(&dev_tok, &dev_pairs, &codec, dev_tsv ? dev_tsv : dev_src, &err),
            &err))
        goto fail;
    if (setup_watch(&watch, watch_file, no_watch, dev_align, &dev_pairs, &codec, &err))
        goto fail;

    if (!resume) {
        rs_vocab src_vocab, tgt_vocab;
        if (rs_vocab_init(&src_counts, &err) || rs_vocab_init(&tgt_counts, &err) ||
            rs_count_tokens(&src_counts, &train_tok, RS_SIDE_SRC, &err) ||
            rs_count_tokens(&tgt_counts, &train_tok, RS_SIDE_TGT, &err))
            goto fail;
        if (rs_vocab_select(&src_vocab, &src_counts, cfg.min_freq, cfg.max_vocab, &err))
            goto fail;
        if (rs_vocab_select(&tgt_vocab, &tgt_counts, cfg.min_freq, cfg.max_vocab, &err)) {
            rs_vocab_free(&src_vocab);
            goto fail;
        }
        cfg.src_vocab = src_vocab.size;
        cfg.tgt_vocab = tgt_vocab.size;
        if (rs_model_alloc(&model, &cfg, &err)) {
            rs_vocab_free(&src_vocab);
            rs_vocab_free(&tgt_vocab);
            goto fail;
        }
        model.src_vocab = src_vocab;
        model.tgt_vocab = tgt_vocab;
        model.spm_src = spm_blob[0], model.spm_src_len = spm_len[0];
        model.spm_tgt = spm_blob[1], model.spm_tgt_len = spm_len[1];
        spm_blob[0] = spm_blob[1] = NULL;
        rs_rng init_rng;
        rs_rng_seed(&init_rng, (uint64_t)cfg.seed ^ 0x5eedULL);
        rs_model_init_random(&model, &init_rng);
        if (rs_train_state_alloc(&state, &model, &err))
            goto fail;
    }
    int skipped = 0;
    if (rs_dataset_build(&train, &train_tok, &model.src_vocab, &model.tgt_vocab, cfg.max_len,
                         &skipped, &err) ||
        rs_dataset_build(&dev, &dev_tok, &model.src_vocab, &model.tgt_vocab, 0, NULL, &err))
        goto fail;
    rs_tokenized_free(&train_tok);
    rs_tokenized_free(&dev_tok);
    if (resume) {
        /* Before rs_train, which is the first to write into the directory. */
        const data_given sets[2] = {
            {"training", "--train", train_tsv, "--src", train_src, "--tgt", train_tgt},
            {"dev", "--dev", dev_tsv, "--dev-src", dev_src, "--dev-tgt", dev_tgt}};
        rs_data_fingerprint now;
        rs_data_fingerprint_of(&now, &train, &dev, cfg.dev_bleu ? dev_pairs.tgt : NULL);
        status = check_resumed_data(ckpt, &state, &now, sets, new_data, &err);
        if (rs_dist_check_exit(&status, &err)) {
            if (rs_dist_rank() == 0)
                fprintf(stderr, PROG ": %s\n", err.msg);
            goto done;
        }
        status = RS_EXIT_FAIL;
    }

    if (rs_dist_rank() == 0) {
        fprintf(
            stderr, "%s %s: %d training pairs (%d longer than %d tokens left out), %d dev pairs\n",
            resume ? "resuming" : "training", dir, train.count, skipped, cfg.max_len, dev.count);
        fprintf(stderr, "vocabularies: %d source, %d target; %zu parameters\n", model.cfg.src_vocab,
                model.cfg.tgt_vocab, model.layout.total);
        fprintf(stderr, "configuration: ");
        rs_config_print(&model.cfg, stderr);
        if (rs_dist_size() > 1)
            fprintf(stderr,
                    "data-parallel over %d ranks, each computing 1/%d of every batch; "
                    "%zu bytes all-reduced per step\n",
                    rs_dist_size(), rs_dist_size(), model.layout.total * sizeof(float));
    }

    if (cfg.dev_bleu) {
        options.codec = &codec;
        options.dev_refs = dev_pairs.tgt;
    }
    options.watch = watch.count || watch.gold ? &watch : NULL;
    reporter rep = {quiet, RS_STOP_EPOCHS};
    catch_signals();
    if (rs_train(&model, &state, &train, &dev, &options, report, &rep, &err))
        goto fail;
    if (rs_dist_rank() == 0)
        print_stop(&rep, &state, &model.cfg, dir, orig_argc, orig_argv, resume);
    status = rep.reason == RS_STOP_SIGNAL ? 128 + (int)stop_signal : RS_EXIT_OK;
    goto done;
fail:
    if (rs_dist_rank() == 0 || !rs_dist_failure_agreed()) /* said once for all ranks */
        fprintf(stderr, PROG ": %s\n", err.msg);
done:
    rs_train_unlock(lock);
    rs_watch_free(&watch);
    free(spm_blob[0]);
    free(spm_blob[1]);
    rs_codec_free(&codec);
    rs_vocab_free(&src_counts);
    rs_vocab_free(&tgt_counts);
    rs_dataset_free(&train);
    rs_dataset_free(&dev);
    rs_tokenized_free(&train_tok);
    rs_tokenized_free(&dev_tok);
    rs_pairs_free(&train_pairs);
    rs_pairs_free(&dev_pairs);
    rs_train_state_free(&state);
    rs_model_free(&model);
    return status;
}
