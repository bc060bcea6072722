/* rnnsearch bench: the speed and memory of training and decoding on real
 * data, measured by train/bench.h, against the machine's bound on the same
 * products (train/bench_bound.h), as one table (train/bench_table.h). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel/gemm_road.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "common/clock.h"
#include "cmd/commands.h"
#include "train/bench_table.h"

#define PROG "rnnsearch bench"

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
    const char *data;
    int use_config[2], tsv;
    rs_bench_plan plan;     /* threads, steps, sentences, model, roads */
    const char *bound_only; /* the hidden --bound-only SPEC: bench's own children */
    int side_by_side;       /* the hidden --side-by-side, with --bound-only */
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
    rq->plan.nthreads = parse_list(arg, rq->plan.threads, 8, RS_MAX_THREADS);
    if (rq->plan.nthreads < 1)
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
    {"steps", .kind = RS_CLI_INT, RS_AT(RQ, plan.steps), 1, 100000, "N",
     .help = "training steps timed per run, after 2 untimed, for each size\n"
             "(default: %D)"},
    {"sentences", .kind = RS_CLI_INT, RS_AT(RQ, plan.sentences), 1, 1000000, "N",
     .help = "test sentences decoded per decoding run, after the first 128\n"
             "untimed (default: %D, all of test_2016)"},
    {"model", .kind = RS_CLI_STRING, RS_AT(RQ, plan.model_path), .value = "FILE",
     .help = "decode with this model (a word-level, lower-cased one)\n"
             "instead of each size's after its timed steps, under the\n"
             "first size only"},
    {"roads", .kind = RS_CLI_FLAG, RS_AT(RQ, plan.roads),
     .help = "a row for every road of the bound, not only the best\n"
             "(ROAD xT: T products side by side, one thread each)"},
    {"tsv", .kind = RS_CLI_FLAG, RS_AT(RQ, tsv), .help = "the table as tab-separated values"},
    /* No help: bench re-runs itself with it under each OpenBLAS core type
     * (train/bench_bound.h); it prints the rates of the products SPEC lists
     * on the first --threads count. */
    {"bound-only", .kind = RS_CLI_STRING, RS_AT(RQ, bound_only), .value = "SPEC"},
    /* No help either: with it, --bound-only times --threads copies of each
     * product side by side, one thread each (the bound's side-by-side form). */
    {"side-by-side", .kind = RS_CLI_FLAG, RS_AT(RQ, side_by_side)},
    {"help", 'h', RS_CLI_HELP, .label = "--help", .help = "this help"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "bench",
    PROG,
    "usage: " PROG " [OPTIONS]\n\n"
    "Measures training (target tokens/s, peak memory, time per step and the\n"
    "optimizer's share of it) and decoding (greedy and beam 5 at batch 64, greedy\n"
    "at batch 1: sentences/s) on Multi30k de-en, each with the GFLOP/s of its\n"
    "matrix products and their share of the machine's bound: the best rate the\n"
    "GEMM roads this processor runs (OpenBLAS under each core type it supports,\n"
    "oneDNN) reach on that workload's own products (GEMV for batch 1), best of\n"
    "three interleaved rounds, with the spread of its rounds. RNNSEARCH_GEMM\n"
    "chooses the road the workloads run on. Two model sizes: S (emb 128, hidden\n"
    "256, att 256, maxout 128, batch 64) and M (256, 512, 512, 256, batch 128),\n"
    "with 1 and 2 threads. Prints one table.\n\n",
    NULL,
    18,
    sizeof(bench_request),
    option_table};

/* Parses and checks the options into rq; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, bench_request *rq)
{
    *rq = (bench_request){.use_config = {1, 1},
                          .plan = {.threads = {1, 2},
                                   .nthreads = 2,
                                   .steps = 24,
                                   .sentences = 1000,
                                   .exe = "/proc/self/exe",
                                   .log = stderr,
                                   .prog = PROG}};
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, rq, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if (rq->side_by_side && !rq->bound_only)
        return rs_cli_usage_error(PROG, "--side-by-side goes with --bound-only SPEC");
    if (!rq->data && !rq->bound_only)
        return rs_cli_usage_error(PROG, "no data given (--data DIR: Multi30k's train.de, train.en "
                                        "and test_2016_flickr.de)");
    return -1;
}

/* --bound-only SPEC: the rates of SPEC's products on the road chosen (the
 * parent sets OPENBLAS_CORETYPE and RNNSEARCH_GEMM), on stdout: each split
 * over the first --threads count, or with --side-by-side that many copies
 * side by side. */
static int bound_only(const bench_request *rq)
{
    static rs_bench_product products[RS_BENCH_MAX_PRODUCTS];
    static double rates[RS_BENCH_MAX_PRODUCTS];
    rs_error err;
    const int count = rs_bench_spec_parse(rq->bound_only, products, RS_BENCH_MAX_PRODUCTS, &err);
    if (count < 0)
        return rs_cli_usage_error(PROG, "%s", err.msg);
    const int threads = rq->plan.threads[0];
    openblas_set_num_threads(threads);
    rs_gemm_road_onednn_threads(1); /* the split form splits every product */
    if (rs_bench_products_time(products, count, rq->side_by_side ? threads : 1, rates, &err))
        rs_cli_fail(PROG, "%s", err.msg);
    rs_bench_rates_print(stdout, rs_gemm_road_kernel(), products, rates, count);
    return fflush(stdout) ? RS_EXIT_FAIL : RS_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
    bench_request rq;
    int status = parse_request(argc, argv, &rq);
    if (status >= 0)
        return status;
    if (rq.bound_only)
        return bound_only(&rq);
    rs_error err;
    rs_bench_data d;
    memset(&d, 0, sizeof d);
    double t_start = rs_clock_seconds();
    static rs_bench_table table;
    int failed = rs_bench_data_load(&d, rq.data, &err);
    if (!failed)
        fprintf(stderr, "%s: %d training pairs, vocabularies %d / %d, %d test sentences\n", rq.data,
                d.train.count, d.model.cfg.src_vocab, d.model.cfg.tgt_vocab, d.test.count);
    for (int ci = 0; ci < 2 && !failed; ci++)
        failed = rq.use_config[ci] && rs_bench_table_size(&table, &d, &rq.plan, ci, &err);
    if (failed)
        rs_cli_fail(PROG, "%s", err.msg);
    /* What was measured before a failure is printed too. */
    if (table.count > 0) {
        if (!rq.tsv)
            printf("rnnsearch bench on %s (%d pairs, target vocabulary %d), workloads on the "
                   "%s road (%s); \"of_bound\": a workload's GFLOP/s as a share of the bound's "
                   "(the best road's on its products, named beneath it), the optimizer's share "
                   "of the step; \"spread\": a road's worst round as a share of its best\n",
                   rq.data, d.train.count, d.model.cfg.tgt_vocab, rs_gemm_road_name(),
                   rs_gemm_road_kernel());
        rs_bench_table_print(stdout, &table, rq.tsv);
    }
    fprintf(stderr, "bench took %.0f s\n", rs_clock_seconds() - t_start);
    rs_bench_data_free(&d);
    return failed ? RS_EXIT_FAIL : RS_EXIT_OK;
}
