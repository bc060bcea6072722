/* The measurements of `rnnsearch bench` (see bench.h). */
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

#include "common/clock.h"
#include "nn/attention.h"
#include "nn/linalg.h"
#include "search/ready.h"
#include "train/bench.h"
#include "train/train.h"

/* The exit status of a child that could not run its program, as the shell's. */
enum { EXEC_FAILED = 127 };

const rs_bench_size rs_bench_sizes[2] = {{"S", 128, 256, 256, 128, 64},
                                         {"M", 256, 512, 512, 256, 128}};

/* Forward GEMM FLOPs of one pair with ls source and lt target positions
 * (</s> included), model.md's terms (1 multiply-add = 2 FLOPs). */
static double pair_flops(const rs_bench_size *c, int V, double ls, double lt)
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

int rs_bench_data_load(rs_bench_data *d, const char *dir, rs_error *err)
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
    long src_tokens = 0, tgt_tokens = 0;
    for (int i = 0; i < d->train.count; i++) {
        src_tokens += d->train.src_len[i] + 1;
        tgt_tokens += d->train.tgt_len[i] + 1;
    }
    d->mean_ls = (double)src_tokens / (d->train.count ? d->train.count : 1);
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
static int make_model(rs_model *out, const rs_bench_data *d, const rs_bench_size *c, rs_error *err)
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

rs_bench_dims rs_bench_size_dims(const rs_bench_size *c, int V)
{
    return (rs_bench_dims){c->m, c->n, c->a, c->l, V};
}

/* The analytic memory bound of training, in MB: parameters, gradients (one
 * buffer per shard), two Adam moments, and the activations the backward pass
 * needs of a batch of B pairs, S source and T target positions: per source
 * position and row m (embedding) + 2·3n (gates) + 2·n (r⊙h) + 2·n (states) +
 * 2n (annotation) + a (key); per target position m + 3n + n + n + 2n
 * (context) + S (α) + S·a (attention tanh) + 2l + l (readout) + V
 * (probabilities). */
static double bound_mb(const rs_bench_size *c, const rs_model *model, int shards, double S,
                       double T, double B)
{
    const double m = c->m, n = c->n, a = c->a, l = c->l, V = model->cfg.tgt_vocab;
    double act = S * B * (m + 6 * n + 2 * n + 2 * n + 2 * n + a) +
                 T * B * (m + 3 * n + n + n + 2 * n + S + S * a + 3 * l + V);
    return 4.0 * ((3.0 + shards) * (double)model->layout.total + act) / (1024.0 * 1024.0);
}

/* The training side of a measurement: `steps` timed steps (after 2 untimed)
 * of config c on `threads` threads, each training's own (train/train.h: the
 * gradient, then clipping and Adam as model's training settings say), into
 * out's rates, step time and the analytic memory bound. */
static int time_training(const rs_bench_data *d, const rs_bench_size *c, rs_model *model,
                         int threads, int steps, rs_bench_measured *out, rs_error *err)
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
    for (int k = -2; k < steps && k + 2 < plan.batches; k++) {
        rs_update_batches u = {&d->train, &plan, k + 2, 1, .step = (int64_t)k};
        const long tokens = u.tokens = rs_train_update_tokens(&u);
        double loss, gnorm;
        double t0 = rs_clock_seconds();
        if (rs_train_gradient(&shards, &batch, model, &u, &loss, &gnorm, err))
            goto done;
        double t1 = rs_clock_seconds();
        rs_train_apply(&shards, model, &state, gnorm);
        double t2 = rs_clock_seconds();
        if (!isfinite(loss)) {
            rs_fail(err, "non-finite loss in step %d", k);
            goto done;
        }
        const int B = batch.B;
        if (k >= 0) {
            seconds += t2 - t0;
            optimizer += t2 - t1;
            for (int b = 0; b < B; b++)
                flops +=
                    3.0 * pair_flops(c, model->cfg.tgt_vocab, batch.src_len[b], batch.tgt_len[b]);
            tokens_done += tokens;
            if ((long)batch.S * batch.T * B > (long)biggest_S * biggest_T * biggest_B)
                biggest_S = batch.S, biggest_T = batch.T, biggest_B = B;
        }
    }
    out->tokens_per_s = tokens_done / seconds;
    out->gflops = flops / seconds / 1e9;
    const int nsteps = steps < plan.batches - 2 ? steps : plan.batches - 2;
    out->step_s = seconds / nsteps;
    out->optimizer_s = optimizer / nsteps;
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

int rs_bench_decode(const rs_ready *ready, const rs_source *sources, int count, int workload,
                    int threads, double *seconds, double *flops, rs_error *err)
{
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.beam = workload == RS_BENCH_BEAM64 ? 5 : 1;
    opt.n_best = 1;
    opt.length_penalty = 1.0f;
    opt.batch_size = workload == RS_BENCH_GREEDY1 ? 1 : 64;
    opt.skip_scores = 1;   /* as translate, which prints no scores */
    opt.workers = threads; /* as translate --threads: batches side by side */
    rs_translated *found = rs_calloc((size_t)(count > 0 ? count : 1), sizeof *found, err);
    rs_translator tr = {0};
    openblas_set_num_threads(threads);
    int failed = !found || rs_translator_init(&tr, &ready, 1, NULL, &opt, err);
    rs_flop_count counted = 0, *before = rs_gemm_count(&counted);
    const double t0 = rs_clock_seconds();
    if (!failed)
        failed = rs_translate_sources(&tr, count, sources, found, err);
    *seconds = rs_clock_seconds() - t0;
    rs_gemm_count(before);
    *flops = (double)atomic_load(&counted);
    for (int i = 0; !failed && i < count; i++)
        rs_translated_free(&found[i]);
    rs_translator_free(&tr);
    free(found);
    return failed ? -1 : 0;
}

/* Sentences decoded untimed before each timed decoding workload. */
enum { WARM_SENTENCES = 128 };

/* The decoding side: the first `sentences` test sentences, from ids, with
 * use readied as translate readies it (its transposed copies: use's own, or
 * made here for a plain model), through each decoding workload, into out. */
static int time_decoding(const rs_ready *use, const rs_bench_data *d, int sentences, int threads,
                         rs_bench_measured *out, rs_error *err)
{
    const int count = sentences < d->test.count ? sentences : d->test.count;
    rs_ready ready = {0};
    rs_source *sources = rs_calloc((size_t)(count > 0 ? count : 1), sizeof *sources, err);
    int failed = !sources || rs_ready_view(use, NULL, &ready, err);
    for (int i = 0; !failed && i < count; i++)
        sources[i] = (rs_source){d->test.src[i], d->test.src_len[i]};
    for (int w = RS_BENCH_GREEDY64; w < RS_BENCH_WORKLOADS && !failed; w++) {
        double seconds = 0.0, flops = 0.0;
        /* Untimed first, as training's first steps: the packed copies and
         * oneDNN's kernels are made once per process, not per sentence, and
         * a short timed run would mostly measure them. The timed call makes
         * its own workspaces (a translator each), once per worker, as a
         * `translate` run does. */
        const int warm = count < WARM_SENTENCES ? count : WARM_SENTENCES;
        failed = rs_bench_decode(&ready, sources, warm, w, threads, &seconds, &flops, err) ||
                 rs_bench_decode(&ready, sources, count, w, threads, &seconds, &flops, err);
        out->sent_s[w] = count / seconds;
        out->dec_gflops[w] = flops / seconds / 1e9;
    }
    const rs_model_config *c = &use->model->cfg;
    out->dims =
        (rs_bench_dims){c->emb, c->hidden, rs_attention_key_size(c->attention, c->hidden, c->att),
                        c->maxout, c->tgt_vocab};
    rs_ready_view_free(&ready);
    free(sources);
    return failed ? -1 : 0;
}

int rs_bench_measure(const rs_bench_data *d, const rs_bench_job *job, rs_bench_measured *out,
                     rs_error *err)
{
    rs_model model = {0};
    rs_ready trained = {0}, plain = rs_ready_plain(&model);
    const char *model_path = job->model_path;
    int status = -1;
    if (make_model(&model, d, job->c, err) ||
        time_training(d, job->c, &model, job->threads, job->steps, out, err))
        goto done;
    if (job->decode && model_path && rs_ready_load(&trained, model_path, NULL, NULL, NULL, 0, err))
        goto done;
    if (job->decode &&
        time_decoding(model_path ? &trained : &plain, d, job->sentences, job->threads, out, err))
        goto done;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    out->peak_mb = ru.ru_maxrss / 1024.0;
    status = 0;
done:
    rs_ready_free(&trained);
    release_model(&model);
    return status;
}


void rs_bench_data_free(rs_bench_data *d)
{
    rs_model_free(&d->model);
    rs_dataset_free(&d->train);
    rs_dataset_free(&d->test);
}
