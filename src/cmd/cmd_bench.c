/* rnnsearch bench: the speed and memory of training and translation on real
 * data, measured by train/bench.h, as one table. Each measurement runs in a
 * child process, so its peak RSS is its own. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accel/gemm_road.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "common/clock.h"
#include "cmd/commands.h"
#include "train/bench.h"

#define PROG "rnnsearch bench"

/* The numbers of a table row; those < 0 print as "-". */
typedef struct {
    double rate, gflops, of_bound, rss_mb, bound_mb;
} row_values;

/* One table row. */
typedef struct {
    char work[48], config[8], unit[16];
    int threads;
    row_values v;
} row;

#define MAX_ROWS 64

/* Runs rs_bench_measure in a child process (its own peak RSS), result through a pipe. */
static int measure_apart(const rs_bench_data *d, const rs_bench_job *job, rs_bench_measured *out,
                         rs_error *err)
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
        rs_bench_measured m;
        memset(&m, 0, sizeof m);
        rs_error child_err = {{0}};
        int rc = rs_bench_measure(d, job, &m, &child_err);
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
                          "GFLOP/s", "of_bound", "peak_RSS_MB", "bound_MB"};
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
        cell(of, sizeof of, v->of_bound < 0 ? -1 : 100 * v->of_bound, "%.0f%%");
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

static int set_configs(void *req, const char *arg)
{
    static const char *const configs[] = {"S", "M", "S,M", "M,S"};
    bench_request *rq = req;
    int k;
    if (rs_cli_choice(PROG, "--configs", arg, configs, 4, &k))
        return RS_EXIT_USAGE;
    rq->use_config[0] = k != 1;
    rq->use_config[1] = k != 0;
    return -1;
}

static int set_threads(void *req, const char *arg)
{
    bench_request *rq = req;
    rq->nthreads = parse_list(arg, rq->thread_list, 8, RS_MAX_THREADS);
    if (rq->nthreads < 1)
        return rs_cli_usage_error(PROG, "--threads: '%s' is not a list like 1,2", arg);
    return -1;
}

#define RQ bench_request
static const rs_cli_option option_table[] = {
    {"data", .kind = RS_CLI_STRING, RS_AT(RQ, data), .value = "DIR",
     .help = "Multi30k: train.de, train.en, test_2016_flickr.de, each\n"
             "plain or .gz (required; dev/train-multi30k.sh says where\n"
             "to get it)"},
    {"configs", .kind = RS_CLI_CALL, .set = set_configs, .value = "LIST",
     .help = "S, M or S,M (default: S,M)"},
    {"threads", .kind = RS_CLI_CALL, .set = set_threads, .value = "LIST",
     .help = "1, 2 or 1,2 ... (default: 1,2)"},
    {"steps", .kind = RS_CLI_INT, RS_AT(RQ, steps), 1, 100000, "N",
     .help = "training steps timed per run, after 2 untimed (default: %D;\n"
             "M runs a third of them, at least 3)"},
    {"sentences", .kind = RS_CLI_INT, RS_AT(RQ, sentences), 1, 1000000, "N",
     .help = "test sentences translated per decoding run (default: %D)"},
    {"model", .kind = RS_CLI_STRING, RS_AT(RQ, model_path), .value = "FILE",
     .help = "translate with this model (a word-level, lower-cased one)\n"
             "instead of S after its timed steps"},
    {"tsv", .kind = RS_CLI_FLAG, RS_AT(RQ, tsv), .help = "the table as tab-separated values"},
    {"help", 'h', RS_CLI_HELP, .label = "--help", .help = "this help"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "bench",
    PROG,
    "usage: " PROG " [OPTIONS]\n\n"
    "Measures the machine's bound, each GEMM road's rate on a training step's\n"
    "shapes (forward and backward products; RNNSEARCH_GEMM chooses the road the\n"
    "rest runs on), then training (target tokens/s, GFLOP/s and their share of the\n"
    "best road's rate, peak memory, time per step and the optimizer's share of it)\n"
    "and translation (sentences/s, greedy and beam) on Multi30k de-en, for two\n"
    "model sizes: S (emb 128, hidden 256, att 256, maxout 128, batch 64) and M\n"
    "(256, 512, 512, 256, batch 128), with 1 and 2 threads. Prints one table.\n\n",
    NULL,
    18,
    sizeof(bench_request),
    option_table};

/* Parses and checks the options into rq; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, bench_request *rq)
{
    *rq = (bench_request){
        .use_config = {1, 1}, .thread_list = {1, 2}, .nthreads = 2, .steps = 12, .sentences = 128};
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, rq, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if (!rq->data)
        return rs_cli_usage_error(PROG, "no data given (--data DIR: Multi30k's train.de, train.en "
                                        "and test_2016_flickr.de)");
    return -1;
}

/* The rows of one configuration: sgemm per thread count, then training (and,
 * on the first one-thread run, translation) per thread count. */
static int bench_config(const rs_bench_data *d, const bench_request *rq, int ci, row *rows,
                        int *nrows, int *decoded, rs_error *err)
{
    const rs_bench_size *cfg = &rs_bench_sizes[ci];
    const int V = d->model.cfg.tgt_vocab;
    double bound[8];
    for (int t = 0; t < rq->nthreads; t++) {
        const int threads = rq->thread_list[t];
        rs_bench_gemm_rate rates[RS_BENCH_ROADS];
        const int nroads = rs_bench_gemm_rates(cfg, V, threads, d->mean_lt, rates, err);
        if (nroads < 0)
            return -1;
        bound[t] = 0.0;
        for (int k = 0; k < nroads; k++) {
            char work[64];
            snprintf(work, sizeof work, "GEMM %s, step's shapes", rates[k].road);
            add_row(
                rows, nrows, work, cfg->name, threads, "GFLOP/s",
                (row_values){rates[k].best, rates[k].best, rates[k].worst / rates[k].best, -1, -1});
            bound[t] = rates[k].best > bound[t] ? rates[k].best : bound[t];
        }
    }
    const int n_steps = ci == 0 ? rq->steps : (rq->steps / 3 > 3 ? rq->steps / 3 : 3);
    for (int t = 0; t < rq->nthreads; t++) {
        const int threads = rq->thread_list[t];
        rs_bench_measured m;
        memset(&m, 0, sizeof m);
        const int decode = !*decoded && threads == 1;
        fprintf(stderr, "%s, %d thread(s): %d steps%s...\n", cfg->name, threads, n_steps,
                decode ? ", then translation" : "");
        const rs_bench_job job = {cfg, threads, n_steps, decode, rq->sentences, rq->model_path};
        if (measure_apart(d, &job, &m, err))
            return -1;
        add_row(rows, nrows, "train", cfg->name, threads, "tgt tok/s",
                (row_values){m.tokens_per_s, m.gflops, m.gflops / bound[t], m.peak_mb, m.bound_mb});
        if (threads == 1) {
            add_row(rows, nrows, "  step", cfg->name, 1, "ms/step",
                    (row_values){1e3 * m.step_s, -1, -1, -1, -1});
            add_row(rows, nrows, "  step: optimizer", cfg->name, 1, "ms/step",
                    (row_values){1e3 * m.optimizer_s, -1,
                                 m.step_s > 0 ? m.optimizer_s / m.step_s : -1, -1, -1});
        }
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
    rs_bench_data d;
    memset(&d, 0, sizeof d);
    double t_start = rs_clock_seconds();
    row rows[MAX_ROWS];
    int nrows = 0, decoded = 0;
    int failed = rs_bench_data_load(&d, rq.data, &err);
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
            printf("rnnsearch bench on %s (%d pairs, target vocabulary %d), products on the %s "
                   "road (%s); \"of_bound\": training's GFLOP/s as a share of the best GEMM "
                   "road's on the step's shapes, a GEMM row's worst round as a share of its "
                   "best, the optimizer's share of the step\n",
                   rq.data, d.train.count, d.model.cfg.tgt_vocab, rs_gemm_road_name(),
                   rs_gemm_road_kernel());
        print_rows(rows, nrows, rq.tsv);
    }
    fprintf(stderr, "bench took %.0f s\n", rs_clock_seconds() - t_start);
    rs_bench_data_free(&d);
    return failed ? RS_EXIT_FAIL : RS_EXIT_OK;
}
