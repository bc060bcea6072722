/* rnnsearch train: build vocabularies, initialise or resume a model, train it. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checkpoint.h"
#include "cli.h"
#include "commands.h"
#include "dataset.h"
#include "dist.h"
#include "fileio.h"
#include "spm.h"
#include "train.h"

#define PROG "rnnsearch train"

enum {
    OPT_TRAIN = 1000, OPT_SRC, OPT_TGT, OPT_DEV, OPT_DEV_SRC, OPT_DEV_TGT, OPT_SWAP, OPT_NAME,
    OPT_OUT, OPT_RESUME, OPT_EVAL_EVERY, OPT_DEV_TRANSLATE, OPT_QUIET, OPT_HELP, OPT_SPM_SRC,
    OPT_SPM_TGT, OPT_DEV_BLEU, OPT_CONFIG = 2000
};

static void usage(FILE *out)
{
    rs_config defaults;
    rs_config_defaults(&defaults);
    fprintf(out,
            "usage: " PROG " (--train PAIRS.tsv | --src FILE --tgt FILE) [--dev ...] --name NAME [OPTIONS]\n\n"
            "Trains the attentive translator on sentence pairs and saves checkpoints to\n"
            "models/NAME/ (last.ckpt each epoch, best.ckpt by dev loss, train.log.tsv).\n\n"
            "data:\n"
            "  --train FILE           pairs, one per line: source<TAB>target[<TAB>anything]\n"
            "  --src FILE, --tgt FILE line-aligned source and target files (instead of --train)\n"
            "  --dev FILE             dev pairs (TSV), evaluated each epoch\n"
            "  --dev-src F, --dev-tgt F  dev pairs as two files\n"
            "  --swap                 exchange source and target of TSV files\n"
            "  --name NAME            save to models/NAME (default: the training file's base name)\n"
            "  --out DIR              save to DIR instead of models/NAME\n"
            "  --resume               continue from DIR/last.ckpt (its settings; --epochs and\n"
            "                         --max-steps may be raised)\n"
            "  --eval-every N         evaluate on dev every N steps (default: 0, each epoch)\n"
            "  --dev-translate        also translate dev greedily and report exact matches\n"
            "  --dev-bleu             translate dev greedily each evaluation, report BLEU and\n"
            "                         keep best.ckpt by it (instead of by dev loss)\n"
            "  --quiet                no progress lines\n"
            "  --spm-src F, --spm-tgt F  use these SentencePiece .model files (instead of\n"
            "                         training them with --subwords N)\n\n"
            "model and training:\n");
    rs_cli_print_config_help(out, &defaults);
}

typedef struct {
    int quiet;
} reporter;

static void report(void *ctx, const rs_train_event *ev)
{
    reporter *r = ctx;
    if (rs_dist_rank() != 0) /* under mpirun, rank 0 speaks for the job */
        return;
    switch (ev->kind) {
    case RS_EV_PROGRESS:
        if (r->quiet)
            break;
        fprintf(stderr,
                "step %lld/%lld | epoch %d | loss %.4f | ppl %.2f | tok/s %.0f | gnorm %.3f | lr %.3g | eta %.0fs\n",
                (long long)ev->step, (long long)ev->total_steps, ev->epoch, ev->loss, ev->ppl,
                ev->tokens_per_s, ev->gnorm, ev->lr, ev->eta_s);
        break;
    case RS_EV_DEV:
        if (isnan(ev->dev_loss))
            fprintf(stderr, "epoch %d | step %lld | no dev set\n", ev->epoch, (long long)ev->step);
        else if (ev->dev_bleu >= 0)
            fprintf(stderr, "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev BLEU %.2f | lr %.3g%s%s\n",
                    ev->epoch, (long long)ev->step, ev->dev_loss, ev->dev_ppl, ev->dev_bleu, ev->lr,
                    ev->improved ? " | best" : "", ev->stop ? " | stopping (patience)" : "");
        else if (ev->dev_exact >= 0)
            fprintf(stderr, "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev exact %.2f%%%s\n",
                    ev->epoch, (long long)ev->step, ev->dev_loss, ev->dev_ppl, 100 * ev->dev_exact,
                    ev->improved ? " | best" : "");
        else
            fprintf(stderr, "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f%s\n", ev->epoch,
                    (long long)ev->step, ev->dev_loss, ev->dev_ppl, ev->improved ? " | best" : "");
        break;
    case RS_EV_SAVED:
        if (!r->quiet)
            fprintf(stderr, "saved %s\n", ev->path);
        break;
    case RS_EV_SKIPPED_BATCH:
        fprintf(stderr, "step %lld: non-finite loss or gradient (loss %g, gnorm %g); batch skipped\n",
                (long long)ev->step, ev->loss, ev->gnorm);
        break;
    }
}

static int read_pairs(const char *tsv, const char *src, const char *tgt, int swap, rs_pairs *out,
                      rs_error *err)
{
    if (tsv)
        return rs_pairs_read_tsv(tsv, swap, out, err);
    return swap ? rs_pairs_read_parallel(tgt, src, out, err) : rs_pairs_read_parallel(src, tgt, out, err);
}

/* models/NAME from the training file's name without directories and extension. */
static void default_name(const char *path, char *name, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(name, size, "%s", base);
    char *dot = strchr(name, '.');
    if (dot && dot != name)
        *dot = 0;
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

/* Under mpirun only rank 0 writes the model directory: it tries to now, so
 * that a directory it cannot write stops every rank before any work. */
static int probe_model_dir(const char *dir, rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.write-probe", dir);
    if (rs_make_parent_dirs(path, err))
        return -1;
    FILE *f = fopen(path, "w");
    if (!f || fclose(f))
        return rs_fail(err, "%s: cannot write in the model directory", dir);
    remove(path);
    return 0;
}

int cmd_train(int argc, char **argv)
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
        {"eval-every", required_argument, NULL, OPT_EVAL_EVERY},
        {"dev-translate", no_argument, NULL, OPT_DEV_TRANSLATE},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, OPT_HELP},
        {"spm-src", required_argument, NULL, OPT_SPM_SRC},
        {"spm-tgt", required_argument, NULL, OPT_SPM_TGT},
        {"dev-bleu", no_argument, NULL, OPT_DEV_BLEU},
    };
    rs_cli_add_config_options(opts, 17, OPT_CONFIG);
    int dev_bleu = 0;
    const char *spm_src_file = NULL, *spm_tgt_file = NULL;
    const char *train_tsv = NULL, *train_src = NULL, *train_tgt = NULL;
    const char *dev_tsv = NULL, *dev_src = NULL, *dev_tgt = NULL, *name = NULL, *out_dir = NULL;
    int swap = 0, resume = 0, quiet = 0;
    rs_train_options options = {.report_seconds = 2.0};
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_error err;
    /* Options given explicitly, to apply on top of a resumed configuration. */
    int given[RS_CLI_MAX_CONFIG_OPTIONS] = {0};
    const char *given_arg[RS_CLI_MAX_CONFIG_OPTIONS] = {0};

    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
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
        case OPT_DEV_TRANSLATE: options.dev_translate = 1; break;
        case OPT_QUIET: quiet = 1; break;
        case OPT_SPM_SRC: spm_src_file = optarg; break;
        case OPT_DEV_BLEU: dev_bleu = 1; break;
        case OPT_SPM_TGT: spm_tgt_file = optarg; break;
        case OPT_EVAL_EVERY:
            if (rs_cli_int(PROG, "--eval-every", optarg, 0, 1000000000, &options.eval_every))
                return RS_EXIT_USAGE;
            break;
        case OPT_HELP: usage(stdout); return RS_EXIT_OK;
        case '?':
            if (optopt)
                fprintf(stderr, PROG ": option needs a value or is unknown: %s\n", argv[optind - 1]);
            else
                fprintf(stderr, PROG ": unknown option %s\n", argv[optind - 1]);
            fprintf(stderr, "try '" PROG " --help'\n");
            return RS_EXIT_USAGE;
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
    char dir[4096], auto_name[256];
    if (out_dir)
        snprintf(dir, sizeof dir, "%s", out_dir);
    else {
        if (!name) {
            default_name(train_tsv ? train_tsv : train_src, auto_name, sizeof auto_name);
            name = auto_name;
        }
        snprintf(dir, sizeof dir, "models/%s", name);
    }
    options.dir = dir;
    if (cfg.batch_size < 1 || cfg.epochs < 0 || cfg.max_len < 0 || cfg.emb < 1 || cfg.hidden < 1 ||
        cfg.maxout < 1 || cfg.att < 1 || cfg.lr <= 0 || cfg.dropout < 0 || cfg.dropout >= 1 ||
        cfg.label_smoothing < 0 || cfg.label_smoothing >= 1) {
        fprintf(stderr, PROG ": sizes, --batch-size and --lr must be positive; --dropout and "
                        "--label-smoothing in [0, 1)\n");
        return RS_EXIT_USAGE;
    }
    if (rs_attention_kind_parse(cfg.attention) < 0) {
        fprintf(stderr, PROG ": --attention: '%s' is not one of additive, general, dot, scaled-dot\n",
                cfg.attention);
        return RS_EXIT_USAGE;
    }
    if (!spm_src_file != !spm_tgt_file) {
        fprintf(stderr, PROG ": give both --spm-src and --spm-tgt\n");
        return RS_EXIT_USAGE;
    }
    if (cfg.subwords > 0 || spm_src_file)
        snprintf(cfg.tokenizer, sizeof cfg.tokenizer, "spm");
    if (!strcmp(cfg.tokenizer, "spm") && cfg.subwords <= 0 && !spm_src_file) {
        fprintf(stderr, PROG ": --tokenizer spm needs --subwords N or --spm-src/--spm-tgt\n");
        return RS_EXIT_USAGE;
    }
    if (strcmp(cfg.tokenizer, "spm") && rs_tokenizer_mode_parse(cfg.tokenizer) < 0) {
        fprintf(stderr, PROG ": --tokenizer: '%s' is not one of word, char, spm\n", cfg.tokenizer);
        return RS_EXIT_USAGE;
    }

    int status = RS_EXIT_FAIL;
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

    if (rs_dist_size() > 1 &&
        rs_dist_check(rs_dist_rank() == 0 ? probe_model_dir(dir, &err) : 0, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return RS_EXIT_USAGE;
    }
    if (resume) {
        /* Every rank reads the checkpoint (rs_train checks that they agree). */
        if (rs_dist_check(rs_checkpoint_load(ckpt, &model, &state, &err), &err))
            goto fail;
        /* Only how long to train may change on resume. */
        for (int i = 0; i < RS_CLI_MAX_CONFIG_OPTIONS; i++) {
            if (!given[i])
                continue;
            const char *key = rs_cli_config_name(OPT_CONFIG + i, OPT_CONFIG);
            if (strcmp(key, "epochs") && strcmp(key, "max_steps") && strcmp(key, "save_every") &&
                strcmp(key, "threads") && strcmp(key, "max_minutes") && strcmp(key, "patience")) {
                fprintf(stderr, PROG ": --resume keeps the checkpoint's settings; only --epochs, "
                                "--max-steps, --max-minutes, --patience, --save-every and "
                                "--threads may be given\n");
                status = RS_EXIT_USAGE;
                goto done;
            }
            if (rs_config_set(&model.cfg, key, given_arg[i], &err))
                goto fail;
        }
        cfg = model.cfg;
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
        if (!strcmp(cfg.tokenizer, "spm") &&
            (rs_dist_check(rs_dist_rank() == 0 ? obtain_subwords(&cfg, &train_pairs, spm_src_file,
                                                                 spm_tgt_file, spm_blob, spm_len, &err)
                                               : 0, &err) ||
             rs_dist_broadcast_blob(&spm_blob[0], &spm_len[0], &err) ||
             rs_dist_broadcast_blob(&spm_blob[1], &spm_len[1], &err)))
            goto fail;
        for (int side = 0; side < 2 && spm_blob[0]; side++)
            if (rs_codec_set_spm(&codec, side, spm_blob[side], spm_len[side], &err))
                goto fail;
    }
    if (rs_tokenize_pairs(&train_tok, &train_pairs, &codec, train_tsv ? train_tsv : train_src, &err))
        goto fail;
    if ((dev_tsv || dev_src) &&
        rs_dist_check(read_pairs(dev_tsv, dev_src, dev_tgt, swap, &dev_pairs, &err) ||
                      rs_tokenize_pairs(&dev_tok, &dev_pairs, &codec, dev_tsv ? dev_tsv : dev_src, &err),
                      &err))
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

    if (rs_dist_rank() == 0) {
        fprintf(stderr, "%s %s: %d training pairs (%d longer than %d tokens left out), %d dev pairs\n",
                resume ? "resuming" : "training", dir, train.count, skipped, cfg.max_len, dev.count);
        fprintf(stderr, "vocabularies: %d source, %d target; %zu parameters\n", model.cfg.src_vocab,
                model.cfg.tgt_vocab, model.layout.total);
        fprintf(stderr, "configuration: ");
        rs_config_print(&model.cfg, stderr);
        if (rs_dist_size() > 1)
            fprintf(stderr, "data-parallel over %d ranks: a global batch of %d pairs, %zu bytes "
                            "all-reduced per step\n", rs_dist_size(), model.cfg.batch_size,
                    model.layout.total * sizeof(float));
    }

    if (dev_bleu && dev.count > 0) {
        options.codec = &codec;
        options.dev_refs = dev_pairs.tgt;
    }
    reporter rep = {quiet};
    if (rs_train(&model, &state, &train, &dev, &options, report, &rep, &err))
        goto fail;
    status = RS_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, PROG ": %s\n", err.msg);
done:
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
