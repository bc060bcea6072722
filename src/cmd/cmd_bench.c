/* rnnsearch bench: the speed and memory of training and translation on real
 * data (Multi30k de→en, word tokens, lower-cased, min-freq 2, as the PyTorch
 * twin's ab-train.sh prepares it; docs/performance.md), beside what the
 * machine's sgemm can do on the same shapes.
 *
 * Configurations: S = m128 n256 a256 l128, batch 64; M = m256 n512 a512 l256,
 * batch 128. FLOPs are those of the GEMMs of model.md on each pair's true
 * lengths (no padding), forward ×3 for a training step (backward: two GEMMs per
 * forward GEMM); the attention's per-pair tanh and weighted sums are not in the
 * count (as in the twin's flops.py "GEMM part"). Each measurement runs
 * in a child process, so its peak RSS is its own. */
#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "search/translate.h"
#include "cmd/cli.h"
#include "common/clock.h"
#include "cmd/commands.h"
#include "data/dataset.h"
#include "search/decode.h"
#include "nn/linalg.h"
#include "nn/optimizer.h"
#include "nn/shards.h"

#define PROG "rnnsearch bench"

/* The exit status of a child that could not run its program, as the shell's. */
enum { EXEC_FAILED = 127 };

static void usage(FILE *out)
{
    fprintf(out, "usage: " PROG " [OPTIONS]\n\n"
                 "Measures training (target tokens/s, GFLOP/s against sgemm, peak memory, time by\n"
                 "layer) and translation (sentences/s, greedy and beam) on Multi30k de-en, for\n"
                 "two model sizes: S (emb 128, hidden 256, att 256, maxout 128, batch 64) and\n"
                 "M (256, 512, 512, 256, batch 128), with 1 and 2 threads. Prints one table.\n\n"
                 "  --data DIR      Multi30k: train.de, train.en, test_2016_flickr.de, each\n"
                 "                  plain or .gz (required; scripts/train-multi30k.sh says where\n"
                 "                  to get it)\n"
                 "  --configs LIST  S, M or S,M (default: S,M)\n"
                 "  --threads LIST  1, 2 or 1,2 ... (default: 1,2)\n"
                 "  --steps N       training steps timed per run, after 2 untimed (default: 12;\n"
                 "                  M runs a third of them, at least 3)\n"
                 "  --sentences N   test sentences translated per decoding run (default: 128)\n"
                 "  --model FILE    translate with this model (a word-level, lower-cased one)\n"
                 "                  instead of S after its timed steps\n"
                 "  --tsv           the table as tab-separated values\n"
                 "  --help          this help\n");
}

typedef struct {
    const char *name;
    int m, n, a, l, batch;
} size_config;

static const size_config CONFIGS[] = {{"S", 128, 256, 256, 128, 64},
                                      {"M", 256, 512, 512, 256, 128}};

/* Forward GEMM FLOPs of one pair with ls source and lt target positions
 * (</s> included), model.md's terms (1 multiply-add = 2 FLOPs). */
static double pair_flops(const size_config *c, int V, double ls, double lt)
{
    const double m = c->m, n = c->n, a = c->a, l = c->l;
    return ls * 2 * 2 * m * 3 * n             /* encoder input projections, both directions */
           + ls * 2 * 2 * n * 3 * n           /* encoder recurrences */
           + 2 * n * n                        /* initial state */
           + ls * 2 * 2 * n * a               /* attention keys */
           + lt * 2 * n * a                   /* attention queries */
           + lt * 2 * (m + 2 * n) * 3 * n     /* decoder input projection */
           + lt * 2 * n * 3 * n               /* decoder recurrence */
           + lt * 2 * (n + m + 2 * n) * 2 * l /* deep output */
           + lt * 2 * l * V;                  /* output layer */
}

/* The numbers of a table row; those < 0 print as "-". */
typedef struct {
    double rate, gflops, of_sgemm, rss_mb, bound_mb;
} row_values;

/* One table row. */
typedef struct {
    char work[48], config[8], unit[16];
    int threads;
    row_values v;
} row;

#define MAX_ROWS 64

typedef struct {
    rs_model model;
    rs_dataset train, test;
    double mean_lt; /* mean target positions of a training pair, </s> included */
} bench_data;

/* Decompresses path.gz into dir/name when only the .gz exists; returns the path to read. */
static int plain_file(const char *data, const char *name, const char *tmpdir, char *out, size_t cap,
                      rs_error *err)
{
    struct stat st;
    snprintf(out, cap, "%s/%s", data, name);
    if (stat(out, &st) == 0)
        return 0;
    char gz[4200];
    snprintf(gz, sizeof gz, "%s/%s.gz", data, name);
    if (stat(gz, &st) != 0)
        return rs_fail(err, "%s: no such file (nor %s.gz); give --data DIR", out, out);
    snprintf(out, cap, "%s/%s", tmpdir, name);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return rs_fail(err, "%s: %s", out, strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1);
        execlp("gzip", "gzip", "-dc", "--", gz, (char *)NULL);
        _exit(EXEC_FAILED);
    }
    close(fd);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
        return rs_fail(err, "%s: gzip -dc failed", gz);
    return 0;
}

/* Multi30k de→en: vocabularies from train (min-freq 2), train and test as ids. */
static int load_data(bench_data *d, const char *dir, rs_error *err)
{
    char tmp[] = "/tmp/rnnsearch-bench-XXXXXX";
    if (!mkdtemp(tmp))
        return rs_fail(err, "cannot make a temporary directory: %s", strerror(errno));
    char de[4400], en[4400], test_de[4400];
    rs_pairs pairs = {0}, test_pairs = {0};
    rs_lines test_lines = {0};
    rs_tokenized tok = {0}, test_tok = {0};
    rs_vocab counts[2] = {{0}, {0}}, vocab[2] = {{0}, {0}};
    rs_codec codec = {0};
    rs_config cfg;
    rs_config_defaults(&cfg);
    cfg.model.lowercase = 1;
    cfg.train.min_freq = 2;
    int status = -1;
    if (plain_file(dir, "train.de", tmp, de, sizeof de, err) ||
        plain_file(dir, "train.en", tmp, en, sizeof en, err) ||
        plain_file(dir, "test_2016_flickr.de", tmp, test_de, sizeof test_de, err) ||
        rs_pairs_read_parallel(de, en, &pairs, err) || rs_lines_read(test_de, &test_lines, err) ||
        rs_codec_init(&codec, &cfg.model, err) || rs_tokenize_pairs(&tok, &pairs, &codec, de, err))
        goto done;
    /* The test side as pairs with itself: the target side is not used. */
    test_pairs.count = test_pairs.capacity = test_lines.count;
    test_pairs.src = test_pairs.tgt = test_lines.lines;
    if (rs_tokenize_pairs(&test_tok, &test_pairs, &codec, test_de, err))
        goto done;
    for (int side = 0; side < 2; side++)
        if (rs_vocab_init(&counts[side], err) || rs_count_tokens(&counts[side], &tok, side, err) ||
            rs_vocab_select(&vocab[side], &counts[side], cfg.train.min_freq, cfg.train.max_vocab,
                            err))
            goto done;
    cfg.model.src_vocab = vocab[0].size;
    cfg.model.tgt_vocab = vocab[1].size;
    if (rs_model_alloc(&d->model, &cfg, err))
        goto done;
    d->model.src_vocab = vocab[0];
    d->model.tgt_vocab = vocab[1];
    memset(vocab, 0, sizeof vocab);
    if (rs_dataset_build(&d->train, &tok, &d->model.src_vocab, &d->model.tgt_vocab,
                         cfg.train.max_len, NULL, err) ||
        rs_dataset_build(&d->test, &test_tok, &d->model.src_vocab, &d->model.tgt_vocab, 0, NULL,
                         err))
        goto done;
    long tgt_tokens = 0;
    for (int i = 0; i < d->train.count; i++)
        tgt_tokens += d->train.tgt_len[i] + 1;
    d->mean_lt = (double)tgt_tokens / (d->train.count ? d->train.count : 1);
    status = 0;
done:
    rs_tokenized_free(&tok);
    rs_tokenized_free(&test_tok);
    for (int side = 0; side < 2; side++) {
        rs_vocab_free(&counts[side]);
        rs_vocab_free(&vocab[side]);
    }
    rs_codec_free(&codec);
    rs_pairs_free(&pairs);
    rs_lines_free(&test_lines);
    char path[4400];
    for (int i = 0; i < 3; i++) {
        static const char *const names[] = {"train.de", "train.en", "test_2016_flickr.de"};
        snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
        unlink(path);
    }
    rmdir(tmp);
    return status;
}

/* The model of size c over the data's vocabularies (the vocabularies are
 * borrowed: the caller must not free them through this model). */
static int make_model(rs_model *out, const bench_data *d, const size_config *c, rs_error *err)
{
    rs_config cfg = rs_model_settings(&d->model);
    cfg.model.emb = c->m, cfg.model.hidden = c->n, cfg.model.att = c->a, cfg.model.maxout = c->l,
    cfg.train.batch_size = c->batch;
    if (rs_model_alloc(out, &cfg, err))
        return -1;
    rs_rng rng;
    rs_rng_seed(&rng, 1);
    rs_model_init_random(out, &rng);
    out->src_vocab = d->model.src_vocab;
    out->tgt_vocab = d->model.tgt_vocab;
    return 0;
}

static void release_model(rs_model *m)
{
    memset(&m->src_vocab, 0, sizeof m->src_vocab);
    memset(&m->tgt_vocab, 0, sizeof m->tgt_vocab);
    rs_model_free(m);
}

/* sgemm GFLOP/s over the shapes of a step of c (output layer, decoder input
 * projection, recurrence; forward products) with BLAS on `threads` threads. */
static double sgemm_rate(const size_config *c, int V, int threads, double mean_lt)
{
    const int B = c->batch, R = (int)(B * mean_lt), n = c->n, in = c->m + 2 * c->n;
    const int shapes[][3] = {{R, V, c->l}, {R, 3 * n, in}, {B, 2 * n, n}, {B, n, n}};
    size_t most = 0;
    for (int s = 0; s < 4; s++) {
        size_t need = (size_t)shapes[s][0] * shapes[s][2] + (size_t)shapes[s][1] * shapes[s][2] +
                      (size_t)shapes[s][0] * shapes[s][1];
        most = need > most ? need : most;
    }
    float *buf = calloc(most, sizeof(float));
    if (!buf)
        return NAN;
    for (size_t i = 0; i < most; i++)
        buf[i] = (float)(i % 7) * 0.01f;
    openblas_set_num_threads(threads);
    double flops = 0.0, seconds = 0.0;
    for (int s = 0; s < 4; s++) {
        const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *A = buf, *Bm = buf + (size_t)M * K, *C = Bm + (size_t)N * K;
        const double one = 2.0 * M * N * K;
        int reps = (int)(3e9 / one) + 1; /* about 3 GFLOP of work per shape */
        /* C = A Bmᵀ */
        rs_matmul_forward(RS_MAT(C, M, N), RS_CMAT(A, M, K), RS_CMAT(Bm, N, K), 0.0f);
        double t0 = rs_clock_seconds();
        for (int r = 0; r < reps; r++)
            rs_matmul_forward(RS_MAT(C, M, N), RS_CMAT(A, M, K), RS_CMAT(Bm, N, K), 0.0f);
        seconds += rs_clock_seconds() - t0;
        flops += one * reps;
    }
    free(buf);
    return flops / seconds / 1e9;
}

typedef struct {
    double tokens_per_s, gflops, peak_mb, bound_mb;
    double optimizer;          /* seconds/step in the optimizer */
    double greedy[2], beam[2]; /* sentences/s at batch 1 and 64 */
} measured;

/* The analytic memory bound of training, in MB: parameters, gradients (one
 * buffer per shard), two Adam moments, and the activations the backward pass
 * needs of a batch of B pairs, S source and T target positions: per source
 * position and row m (embedding) + 2·3n (gates) + 2·n (r⊙h) + 2·n (states) +
 * 2n (annotation) + a (key); per target position m + 3n + n + n + 2n
 * (context) + S (α) + S·a (attention tanh) + 2l + l (readout) + V
 * (probabilities). */
static double bound_mb(const size_config *c, const rs_model *model, int shards, double S, double T,
                       double B)
{
    const double m = c->m, n = c->n, a = c->a, l = c->l, V = model->cfg.tgt_vocab;
    double act = S * B * (m + 6 * n + 2 * n + 2 * n + 2 * n + a) +
                 T * B * (m + 3 * n + n + n + 2 * n + S + S * a + 3 * l + V);
    return 4.0 * ((3.0 + shards) * (double)model->layout.total + act) / (1024.0 * 1024.0);
}

/* The training side of a measurement: `steps` timed steps (after 2 untimed)
 * of config c on `threads` threads into out's rates, the optimizer's time and the
 * analytic memory bound. */
static int time_training(const bench_data *d, const size_config *c, rs_model *model, int threads,
                         int steps, measured *out, rs_error *err)
{
    rs_train_state state = {0};
    rs_shards shards = {0};
    rs_batch batch = {0};
    rs_epoch_plan plan = {0};
    float *grads = NULL;
    int status = -1;
    int max_S = 1, max_T = 1;
    rs_dataset_max_lengths(&d->train, &max_S, &max_T);
    rs_rng rng;
    rs_rng_seed(&rng, 7);
    if (rs_train_state_alloc(&state, model, err) ||
        !(grads = rs_calloc(model->layout.total, sizeof(float), err)) ||
        rs_epoch_plan_make(&plan, &d->train, c->batch, 0, &rng, err) ||
        rs_shards_init(&shards, model, threads, c->batch, max_S, max_T, grads, err) ||
        rs_batch_alloc(&batch, c->batch, max_S, max_T, err))
        goto done;
    openblas_set_num_threads(1);
    double flops = 0.0, seconds = 0.0, optimizer = 0.0;
    long tokens_done = 0;
    int biggest_S = 1, biggest_T = 1, biggest_B = 1;
    const rs_adam_settings adam = {0.002f, 0.9f, 0.999f, 1e-8f};
    for (int k = -2; k < steps && k + 2 < plan.batches; k++) {
        int B = plan.start[k + 3] - plan.start[k + 2];
        if (rs_batch_from_dataset(&batch, &d->train, plan.order + plan.start[k + 2], B, err))
            goto done;
        long tokens = 0;
        double batch_flops = 0.0;
        for (int b = 0; b < B; b++) {
            tokens += batch.tgt_len[b];
            batch_flops +=
                3.0 * pair_flops(c, model->cfg.tgt_vocab, batch.src_len[b], batch.tgt_len[b]);
        }
        double t0 = rs_clock_seconds();
        double loss = rs_shards_step(&shards, model, &batch, (rs_dropout_rates){0}, (uint64_t)k,
                                     0.0f, tokens, 0);
        double t1 = rs_clock_seconds();
        state.step++;
        rs_shards_adam(&shards, model->params, rs_clip_factor(shards.grad_norm, 5.0f), state.adam_m,
                       state.adam_v, &adam, state.step);
        double t2 = rs_clock_seconds();
        if (!isfinite(loss)) {
            rs_fail(err, "non-finite loss in step %d", k);
            goto done;
        }
        if (k >= 0) {
            seconds += t2 - t0;
            optimizer += t2 - t1;
            flops += batch_flops;
            tokens_done += tokens;
            if ((long)batch.S * batch.T * B > (long)biggest_S * biggest_T * biggest_B)
                biggest_S = batch.S, biggest_T = batch.T, biggest_B = B;
        }
    }
    out->tokens_per_s = tokens_done / seconds;
    out->gflops = flops / seconds / 1e9;
    const int nsteps = steps < plan.batches - 2 ? steps : plan.batches - 2;
    out->optimizer = optimizer / nsteps;
    out->bound_mb = bound_mb(c, model, shards.count, biggest_S, biggest_T, biggest_B);
    status = 0;
done:
    rs_batch_free(&batch);
    rs_shards_free(&shards);
    rs_epoch_plan_free(&plan);
    free(grads);
    rs_train_state_free(&state);
    return status;
}

/* The translation side: the first `sentences` test sentences through the
 * translation pipeline, as `rnnsearch translate` decodes them (its length
 * order, its per-sentence limit 2·k + 10), from ids, on one BLAS thread:
 * greedy and beam 5, at batch 1 and 64, into out's sentences/s. */
static int time_translation(const rs_model *use, const bench_data *d, int sentences, measured *out,
                            rs_error *err)
{
    const int count = sentences < d->test.count ? sentences : d->test.count;
    openblas_set_num_threads(1);
    rs_source *sources = rs_calloc((size_t)count, sizeof *sources, err);
    rs_translated *found = rs_calloc((size_t)count, sizeof *found, err);
    int failed = !sources || !found;
    for (int i = 0; !failed && i < count; i++)
        sources[i] = (rs_source){d->test.src[i], d->test.src_len[i]};
    static const int sizes[2] = {1, 64};
    for (int run = 0; run < 4 && !failed; run++) {
        const int beam = run / 2;
        rs_translate_options opt;
        rs_translate_options_default(&opt);
        opt.beam = beam ? 5 : 1;
        opt.n_best = 1;
        opt.length_penalty = 1.0f;
        opt.batch_size = sizes[run % 2];
        rs_translator tr = {0};
        failed = rs_translator_init(&tr, &use, 1, NULL, &opt, err);
        double t0 = rs_clock_seconds();
        if (!failed)
            failed = rs_translate_sources(&tr, count, sources, found, err);
        (beam ? out->beam : out->greedy)[run % 2] = count / (rs_clock_seconds() - t0);
        for (int i = 0; !failed && i < count; i++)
            rs_translated_free(&found[i]);
        rs_translator_free(&tr);
    }
    free(sources);
    free(found);
    return failed ? -1 : 0;
}

/* One measurement: `steps` training steps of config c on `threads` threads;
 * with decode set, then the translation speeds over `sentences` test
 * sentences, with the model at model_path (when not NULL) or the one just
 * trained. */
typedef struct {
    const size_config *c;
    int threads, steps, decode, sentences;
    const char *model_path;
} measurement;

static int measure(const bench_data *d, const measurement *job, measured *out, rs_error *err)
{
    rs_model model = {0}, trained = {0};
    const char *model_path = job->model_path;
    int status = -1;
    if (make_model(&model, d, job->c, err) ||
        time_training(d, job->c, &model, job->threads, job->steps, out, err))
        goto done;
    if (job->decode && model_path && rs_cli_load_model(model_path, &trained, NULL, err))
        goto done;
    if (job->decode &&
        time_translation(model_path ? &trained : &model, d, job->sentences, out, err))
        goto done;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    out->peak_mb = ru.ru_maxrss / 1024.0;
    status = 0;
done:
    rs_model_free(&trained);
    release_model(&model);
    return status;
}

/* Runs measure() in a child process (its own peak RSS), result through a pipe. */
static int measure_apart(const bench_data *d, const measurement *job, measured *out, rs_error *err)
{
    int fd[2];
    if (pipe(fd))
        return rs_fail(err, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return rs_fail(err, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        measured m;
        memset(&m, 0, sizeof m);
        rs_error child_err = {{0}};
        int rc = measure(d, job, &m, &child_err);
        if (rc)
            rs_cli_fail(PROG, "%s", child_err.msg);
        ssize_t w = write(fd[1], &m, sizeof m);
        _exit(rc || w != (ssize_t)sizeof m ? RS_EXIT_FAIL : RS_EXIT_OK);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], out, sizeof *out);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof *out || !WIFEXITED(status) || WEXITSTATUS(status))
        return rs_fail(err, "the %s measurement with %d thread(s) failed", job->c->name,
                       job->threads);
    return 0;
}

static void add_row(row *rows, int *count, const char *work, const char *config, int threads,
                    const char *unit, row_values v)
{
    if (*count >= MAX_ROWS)
        return;
    row *r = &rows[(*count)++];
    snprintf(r->work, sizeof r->work, "%s", work);
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    r->threads = threads;
    r->v = v;
}

static void cell(char *buf, size_t cap, double v, const char *fmt)
{
    if (v < 0 || isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, fmt, v);
}

static void print_rows(const row *rows, int count, int tsv)
{
    const char *head[] = {"work",    "config",   "threads",     "rate",    "unit",
                          "GFLOP/s", "of_sgemm", "peak_RSS_MB", "bound_MB"};
    if (tsv)
        printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", head[0], head[1], head[2], head[3], head[4],
               head[5], head[6], head[7], head[8]);
    else
        printf("%-30s %-6s %7s %9s %-11s %8s %8s %11s %8s\n", head[0], head[1], head[2], head[3],
               head[4], head[5], head[6], head[7], head[8]);
    for (int i = 0; i < count; i++) {
        const row *r = &rows[i];
        char rate[32], gf[32], of[32], rss[32], bound[32];
        const row_values *v = &r->v;
        cell(rate, sizeof rate, v->rate, v->rate < 100 ? "%.2f" : "%.0f");
        cell(gf, sizeof gf, v->gflops, "%.1f");
        cell(of, sizeof of, v->of_sgemm < 0 ? -1 : 100 * v->of_sgemm, "%.0f%%");
        cell(rss, sizeof rss, v->rss_mb, "%.0f");
        cell(bound, sizeof bound, v->bound_mb, "%.0f");
        if (tsv)
            printf("%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r->work, r->config, r->threads, rate,
                   r->unit, gf, of, rss, bound);
        else
            printf("%-30s %-6s %7d %9s %-11s %8s %8s %11s %8s\n", r->work, r->config, r->threads,
                   rate, r->unit, gf, of, rss, bound);
    }
}

/* "1,2" → list; returns the count or -1. */
static int parse_list(const char *arg, int *out, int cap, int max)
{
    int count = 0;
    const char *p = arg;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > max || count >= cap || (*end && *end != ','))
            return -1;
        out[count++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return count;
}

/* What the command line asks for. */
typedef struct {
    const char *data, *model_path;
    int use_config[2], thread_list[8], nthreads, steps, sentences, tsv;
} bench_request;

/* Parses and checks the options into rq; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, bench_request *rq)
{
    enum {
        OPT_DATA = RS_CLI_OPT,
        OPT_CONFIGS,
        OPT_THREADS,
        OPT_STEPS,
        OPT_SENTENCES,
        OPT_MODEL,
        OPT_TSV
    };
    static const struct option opts[] = {
        {"data", required_argument, NULL, OPT_DATA},
        {"configs", required_argument, NULL, OPT_CONFIGS},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"steps", required_argument, NULL, OPT_STEPS},
        {"sentences", required_argument, NULL, OPT_SENTENCES},
        {"model", required_argument, NULL, OPT_MODEL},
        {"tsv", no_argument, NULL, OPT_TSV},
        {0},
    };
    *rq = (bench_request){
        .use_config = {1, 1}, .thread_list = {1, 2}, .nthreads = 2, .steps = 12, .sentences = 128};
    const rs_cli_number numbers[] = {
        {OPT_STEPS, "--steps", 1, 100000, .i = &rq->steps},
        {OPT_SENTENCES, "--sentences", 1, 1000000, .i = &rq->sentences},
        {0},
    };
    static const char *const configs[] = {"S", "M", "S,M", "M,S"};
    int c, k;
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "", opts);
    rs_cli_begin_numbers(&args, numbers);
    while ((c = rs_cli_next(&args)) != -1) {
        switch (c) {
        case OPT_DATA: rq->data = optarg; break;
        case OPT_MODEL: rq->model_path = optarg; break;
        case OPT_TSV: rq->tsv = 1; break;
        case OPT_CONFIGS:
            if (rs_cli_choice(PROG, "--configs", optarg, configs, 4, &k))
                return RS_EXIT_USAGE;
            rq->use_config[0] = k != 1;
            rq->use_config[1] = k != 0;
            break;
        case OPT_THREADS:
            rq->nthreads = parse_list(optarg, rq->thread_list, 8, 256);
            if (rq->nthreads < 1)
                return rs_cli_usage_error(PROG, "--threads: '%s' is not a list like 1,2", optarg);
            break;
        case 'h': usage(stdout); return RS_EXIT_OK;
        default: /* RS_CLI_BAD, already reported */ return RS_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if (!rq->data)
        return rs_cli_usage_error(PROG, "no data given (--data DIR: Multi30k's train.de, train.en "
                                        "and test_2016_flickr.de)");
    return -1;
}

/* The rows of one configuration: sgemm per thread count, then training (and,
 * on the first one-thread run, translation) per thread count. */
static int bench_config(const bench_data *d, const bench_request *rq, int ci, row *rows, int *nrows,
                        int *decoded, rs_error *err)
{
    const size_config *cfg = &CONFIGS[ci];
    const int V = d->model.cfg.tgt_vocab;
    double sgemm[8];
    for (int t = 0; t < rq->nthreads; t++) {
        const int threads = rq->thread_list[t];
        sgemm[t] = sgemm_rate(cfg, V, threads, d->mean_lt);
        add_row(rows, nrows, "sgemm, the step's shapes", cfg->name, threads, "GFLOP/s",
                (row_values){sgemm[t], sgemm[t], -1, -1, -1});
    }
    const int n_steps = ci == 0 ? rq->steps : (rq->steps / 3 > 3 ? rq->steps / 3 : 3);
    for (int t = 0; t < rq->nthreads; t++) {
        const int threads = rq->thread_list[t];
        measured m;
        memset(&m, 0, sizeof m);
        const int decode = !*decoded && threads == 1;
        fprintf(stderr, "%s, %d thread(s): %d steps%s...\n", cfg->name, threads, n_steps,
                decode ? ", then translation" : "");
        const measurement job = {cfg, threads, n_steps, decode, rq->sentences, rq->model_path};
        if (measure_apart(d, &job, &m, err))
            return -1;
        add_row(rows, nrows, "train", cfg->name, threads, "tgt tok/s",
                (row_values){m.tokens_per_s, m.gflops, m.gflops / sgemm[t], m.peak_mb, m.bound_mb});
        if (threads == 1)
            add_row(rows, nrows, "  step: optimizer", cfg->name, 1, "ms/step",
                    (row_values){1e3 * m.optimizer, -1, -1, -1, -1});
        if (decode) {
            *decoded = 1;
            const char *which = rq->model_path ? "given" : cfg->name;
            char work[48];
            for (int beam = 0; beam < 2; beam++)
                for (int s = 0; s < 2; s++) {
                    snprintf(work, sizeof work, "%s, batch %d", beam ? "beam 5" : "greedy",
                             s ? 64 : 1);
                    add_row(rows, nrows, work, which, 1, "sent/s",
                            (row_values){(beam ? m.beam : m.greedy)[s], -1, -1, -1, -1});
                }
        }
    }
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    bench_request rq;
    int status = parse_request(argc, argv, &rq);
    if (status >= 0)
        return status;
    rs_error err;
    bench_data d;
    memset(&d, 0, sizeof d);
    double t_start = rs_clock_seconds();
    row rows[MAX_ROWS];
    int nrows = 0, decoded = 0;
    int failed = load_data(&d, rq.data, &err);
    if (!failed)
        fprintf(stderr, "%s: %d training pairs, vocabularies %d / %d, %d test sentences\n", rq.data,
                d.train.count, d.model.cfg.src_vocab, d.model.cfg.tgt_vocab, d.test.count);
    for (int ci = 0; ci < 2 && !failed; ci++)
        failed = rq.use_config[ci] && bench_config(&d, &rq, ci, rows, &nrows, &decoded, &err);
    if (failed)
        rs_cli_fail(PROG, "%s", err.msg);
    /* What was measured before a failure is printed too. */
    if (nrows > 0) {
        if (!rq.tsv)
            printf("rnnsearch bench on %s (%d pairs, target vocabulary %d); the \"of_sgemm\" "
                   "column of step rows is the share of the step\n",
                   rq.data, d.train.count, d.model.cfg.tgt_vocab);
        print_rows(rows, nrows, rq.tsv);
    }
    fprintf(stderr, "bench took %.0f s\n", rs_clock_seconds() - t_start);
    rs_model_free(&d.model);
    rs_dataset_free(&d.train);
    rs_dataset_free(&d.test);
    return failed ? RS_EXIT_FAIL : RS_EXIT_OK;
}
