/* rnnsearch bench: training and decoding speed, and peak memory, of a model of
 * given sizes on synthetic batches (random weights and token ids), so that a
 * change's effect on speed is measured, not guessed. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "decode.h"
#include "network.h"
#include "optimizer.h"

#define PROG "rnnsearch bench"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [OPTIONS]\n\n"
            "Times training steps (forward, backward, Adam) and greedy decoding of a model\n"
            "with random weights on random sentences, and reports peak memory.\n\n"
            "  --emb N --hidden N --att N --maxout N   sizes (default: 256 each)\n"
            "  --vocab N              source and target vocabulary (default: 8000)\n"
            "  --attention KIND       additive, general, dot, scaled-dot (default: additive)\n"
            "  --batch-size N         pairs per batch (default: 64)\n"
            "  --src-len N --tgt-len N  tokens per sentence (default: 15 each)\n"
            "  --steps N              training steps timed (default: 20, after 2 warm-up)\n"
            "  --threads N            BLAS threads (default: 1)\n"
            "  --help                 this help\n");
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cmd_bench(int argc, char **argv)
{
    enum { O_EMB = 1000, O_HID, O_ATT, O_MAXOUT, O_VOCAB, O_KIND, O_BATCH, O_SRC, O_TGT, O_STEPS,
           O_THREADS, O_HELP };
    static const struct option opts[] = {
        {"emb", required_argument, NULL, O_EMB}, {"hidden", required_argument, NULL, O_HID},
        {"att", required_argument, NULL, O_ATT}, {"maxout", required_argument, NULL, O_MAXOUT},
        {"vocab", required_argument, NULL, O_VOCAB}, {"attention", required_argument, NULL, O_KIND},
        {"batch-size", required_argument, NULL, O_BATCH}, {"src-len", required_argument, NULL, O_SRC},
        {"tgt-len", required_argument, NULL, O_TGT}, {"steps", required_argument, NULL, O_STEPS},
        {"threads", required_argument, NULL, O_THREADS}, {"help", no_argument, NULL, O_HELP}, {0},
    };
    rs_config cfg;
    rs_config_defaults(&cfg);
    cfg.emb = cfg.hidden = cfg.att = cfg.maxout = 256;
    int vocab = 8000, B = 64, S = 15, T = 15, steps = 20, threads = 1;
    opterr = 0;
    optind = 1;
    int c, rc = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_EMB: rc = rs_cli_int(PROG, "--emb", optarg, 1, 65536, &cfg.emb); break;
        case O_HID: rc = rs_cli_int(PROG, "--hidden", optarg, 1, 65536, &cfg.hidden); break;
        case O_ATT: rc = rs_cli_int(PROG, "--att", optarg, 1, 65536, &cfg.att); break;
        case O_MAXOUT: rc = rs_cli_int(PROG, "--maxout", optarg, 1, 65536, &cfg.maxout); break;
        case O_VOCAB: rc = rs_cli_int(PROG, "--vocab", optarg, 5, 10000000, &vocab); break;
        case O_BATCH: rc = rs_cli_int(PROG, "--batch-size", optarg, 1, 100000, &B); break;
        case O_SRC: rc = rs_cli_int(PROG, "--src-len", optarg, 1, 10000, &S); break;
        case O_TGT: rc = rs_cli_int(PROG, "--tgt-len", optarg, 1, 10000, &T); break;
        case O_STEPS: rc = rs_cli_int(PROG, "--steps", optarg, 1, 1000000, &steps); break;
        case O_THREADS: rc = rs_cli_int(PROG, "--threads", optarg, 1, 1024, &threads); break;
        case O_KIND:
            if (rs_attention_kind_parse(optarg) < 0) {
                fprintf(stderr, PROG ": --attention: '%s' is not one of additive, general, dot, scaled-dot\n", optarg);
                return RS_EXIT_USAGE;
            }
            snprintf(cfg.attention, sizeof cfg.attention, "%s", optarg);
            break;
        case O_HELP: usage(stdout); return RS_EXIT_OK;
        default:
            fprintf(stderr, PROG ": unknown option or missing value: %s\n", argv[optind - 1]);
            return RS_EXIT_USAGE;
        }
        if (rc)
            return RS_EXIT_USAGE;
    }
    openblas_set_num_threads(threads);
    cfg.src_vocab = cfg.tgt_vocab = vocab;

    rs_error err;
    rs_model model;
    rs_train_state state = {0};
    rs_workspace ws = {0};
    rs_batch batch = {0};
    rs_decoder dec = {0};
    int status = RS_EXIT_FAIL;
    int **src = NULL, **tgt = NULL, *src_len = NULL, *tgt_len = NULL;
    float *grads = NULL;
    rs_translation *out = NULL;
    if (rs_model_alloc(&model, &cfg, &err))
        goto fail;
    rs_rng rng;
    rs_rng_seed(&rng, 1);
    rs_model_init_random(&model, &rng);
    src = rs_calloc((size_t)B, sizeof(int *), &err);
    tgt = rs_calloc((size_t)B, sizeof(int *), &err);
    src_len = rs_calloc((size_t)B, sizeof(int), &err);
    tgt_len = rs_calloc((size_t)B, sizeof(int), &err);
    grads = rs_calloc(model.layout.total, sizeof(float), &err);
    out = rs_calloc((size_t)B, sizeof *out, &err);
    if (!src || !tgt || !src_len || !tgt_len || !grads || !out)
        goto fail;
    for (int b = 0; b < B; b++) {
        src_len[b] = S;
        tgt_len[b] = T;
        src[b] = rs_calloc((size_t)S, sizeof(int), &err);
        tgt[b] = rs_calloc((size_t)T, sizeof(int), &err);
        if (!src[b] || !tgt[b])
            goto fail;
        for (int j = 0; j < S; j++)
            src[b][j] = RS_RESERVED + (int)rs_rng_below(&rng, (uint64_t)vocab - RS_RESERVED);
        for (int j = 0; j < T; j++)
            tgt[b][j] = RS_RESERVED + (int)rs_rng_below(&rng, (uint64_t)vocab - RS_RESERVED);
    }
    if (rs_train_state_alloc(&state, &model, &err) ||
        rs_workspace_alloc(&ws, &model, B, S + 1, T + 1, &err) ||
        rs_batch_alloc(&batch, B, S + 1, T + 1, &err) ||
        rs_batch_fill(&batch, B, (const int *const *)src, src_len, (const int *const *)tgt, tgt_len, &err))
        goto fail;
    rs_tensors g;
    rs_tensors_bind(&g, &model.layout, grads);
    double start = 0.0;
    for (int step = -2; step < steps; step++) {
        if (step == 0)
            start = now();
        memset(grads, 0, sizeof(float) * model.layout.total);
        rs_network_forward(&ws, &model, &batch);
        rs_network_backward(&ws, &model, &batch, &g, 0.0f, 1.0f / (float)(B * (T + 1)));
        double norm = rs_grad_norm(grads, model.layout.total);
        state.step++;
        rs_adam_update(model.params, grads, rs_clip_factor(norm, 5.0f), state.adam_m, state.adam_v, model.layout.total, 1e-4f,
                       0.9f, 0.999f, 1e-8f, state.step);
    }
    double train_s = (now() - start) / steps;

    if (rs_decoder_init(&dec, &model, B, S + 1, &err))
        goto fail;
    start = now();
    int decode_rounds = 3;
    for (int r = 0; r < decode_rounds; r++) {
        /* Random weights rarely say </s>: every sentence runs to T tokens. */
        if (rs_greedy(&dec, B, (const int *const *)src, src_len, T, 0, out, &err))
            goto fail;
        for (int b = 0; b < B; b++)
            rs_translation_free(&out[b]);
    }
    double decode_s = (now() - start) / decode_rounds;
    struct rusage usage_info;
    getrusage(RUSAGE_SELF, &usage_info);
    printf("model: m=%d n=%d a=%d l=%d V=%d attention=%s, %zu parameters; batch %d x %d/%d tokens, %d BLAS thread(s)\n",
           cfg.emb, cfg.hidden, cfg.att, cfg.maxout, vocab, cfg.attention, model.layout.total, B,
           S, T, threads);
    printf("train: %.1f ms/step, %.0f target tokens/s\n", 1e3 * train_s, B * (T + 1) / train_s);
    printf("greedy decode: %.1f ms/batch, %.0f sentences/s\n", 1e3 * decode_s, B / decode_s);
    printf("peak memory: %.1f MiB\n", usage_info.ru_maxrss / 1024.0);
    status = RS_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, PROG ": %s\n", err.msg);
done:
    for (int b = 0; b < B; b++) {
        if (src)
            free(src[b]);
        if (tgt)
            free(tgt[b]);
    }
    free(src);
    free(tgt);
    free(src_len);
    free(tgt_len);
    free(grads);
    free(out);
    rs_decoder_free(&dec);
    rs_batch_free(&batch);
    rs_workspace_free(&ws);
    rs_train_state_free(&state);
    rs_model_free(&model);
    return status;
}
