/* rnnsearch serve: the web explorer and JSON API (serve.h) over one or more
 * models, until SIGINT or SIGTERM. */
#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cmd/commands.h"
#include "model/locate.h"
#include "nn/network.h"
#include "search/translate.h"
#include "serve/run.h"
#include "serve/serve.h"

#define PROG "rnnsearch serve"
#define MAX_MODELS 16
#define MAX_HOSTS 16

static void usage(FILE *out, const rs_serve_options *d)
{
    fprintf(out,
            "usage: " PROG " -m MODEL [-m MODEL2 ...] [OPTIONS]\n\n"
            "Serves a page to explore translations, beams and alignment matrices, and\n"
            "a JSON API (POST /api/translate, POST /api/align, GET /api/models, and\n"
            "OpenNMT-py's POST /translator/translate; see docs/serve.md), until\n"
            "interrupted. MODEL is a checkpoint file or a directory models/NAME;\n"
            "requests name a model by its directory or file name (the first is the\n"
            "default).\n\n"
            "  -m, --model MODEL   a model to serve (at least one; at most %d)\n"
            "  --host ADDR         numeric address to listen on (default: %s); an\n"
            "                      address that is not loopback (127.0.0.0/8, ::1), such as\n"
            "                      0.0.0.0, :: or 10.1.2.3, is reachable from a network, and\n"
            "                      then a token is required\n"
            "  --allow-host NAME   accept requests whose Host header names NAME, besides\n"
            "                      localhost, 127.0.0.1, ::1 and ADDR (repeatable; at most %d)\n"
            "  --token TOKEN       require TOKEN on every request but the page's\n"
            "                      (Authorization: Bearer, or ?token=; the page keeps it in\n"
            "                      its origin's storage); 8-128 of A-Z a-z 0-9 - _ .\n"
            "  --no-token          on an address that is not loopback, serve without a token\n"
            "                      (anyone who can reach the port can use the server; on\n"
            "                      every address, 0.0.0.0 or ::, any Host is accepted, so\n"
            "                      any web page can use it by DNS rebinding)\n"
            "  --port N            TCP port, 0 for any free one (default: %d)\n"
            "  --threads N         decoding workers, each with its own workspace (default: %d)\n"
            "  --queue N           requests waiting for a worker at most; more get 503\n"
            "                      (default: %d)\n"
            "  --connections N     open connections at most (default: %d)\n"
            "  --max-body BYTES    largest request body; larger get 413 (default: %zu)\n"
            "  --max-chars N       longest text, source or target in characters; longer\n"
            "                      get 413 (default: %d)\n"
            "  --max-batch N       most sentences one translate request may hold (a \"text\"\n"
            "                      list, or POST /translator/translate); more get 413\n"
            "                      (default: %d)\n"
            "  --max-beam K        largest beam and n_best a request may ask for (default: %d)\n"
            "  --max-answer BYTES  largest answer (alignments and SVG pictures included);\n"
            "                      a request whose answer would be larger gets 413\n"
            "                      (default: %zu)\n"
            "  --timeout SECONDS   a request must arrive whole within this time of its\n"
            "                      connection opening (or of the previous answer), else the\n"
            "                      connection is closed; requests that waited this long for\n"
            "                      a worker get 503; at a stop, answers being sent get this\n"
            "                      long to finish (default: %d)\n"
            "  --run DIR           the training run whose learning curves and watched\n"
            "                      alignments (train.log.tsv, watch.jsonl) the page's training\n"
            "                      view shows, following it while it trains (default: the\n"
            "                      first model's directory, when it holds either file and\n"
            "                      not everyone may write to it)\n"
            "  --quiet             no log line per request\n"
            "  --int8              translate with int8 copies of the decoder's weights, as\n"
            "                      translate --int8 (alignments and scores of given\n"
            "                      targets stay exact; default: off)\n"
            "  --config FILE       settings from the serve: section of a YAML file (keys\n"
            "                      named as the options, _ for -; the model from training:\n"
            "                      out or name when -m is not given); options on the\n"
            "                      command line win\n"
            "  -h, --help          this help\n\n"
            "SIGINT or SIGTERM stops the server: no new connections, queued requests are\n"
            "answered and answers being sent finish (at most --timeout); a second signal\n"
            "ends it at once.\n",
            MAX_MODELS, d->host, MAX_HOSTS, d->port, d->threads, d->queue, d->connections,
            d->max_body, d->max_chars, d->max_batch, d->max_beam, d->max_answer, d->timeout);
}

/* The name requests use for a model: "models/dates", "models/dates/best.ckpt"
 * and "dates" are all "dates"; "x/other.ckpt" is "other". */
static void model_name(const char *arg, char *name, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", arg);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((!strcmp(base, "best.ckpt") || !strcmp(base, "last.ckpt")) && base > path) {
        base[-1] = '\0';
        char *dir = strrchr(path, '/');
        base = dir ? dir + 1 : path;
    } else if (n > 5 && !strcmp(path + n - 5, ".ckpt") && base < path + n - 5) {
        path[n - 5] = '\0';
    }
    snprintf(name, size, "%s", base);
}

/* 32 hex digits from the system's random source. */
static int random_token(char *token, size_t size)
{
    unsigned char bytes[16];
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, bytes, sizeof bytes);
    close(fd);
    if (n != (ssize_t)sizeof bytes || size < 2 * sizeof bytes + 1)
        return -1;
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(token + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

typedef struct {
    rs_server *server;
    atomic_int done;
} stopping;

static void *stop_main(void *arg)
{
    stopping *st = arg;
    rs_server_stop(st->server);
    atomic_store(&st->done, 1);
    return NULL;
}

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, PROG ": %s\n", line);
}

/* What the command line asks for. */
typedef struct {
    rs_serve_options opt;
    const char *model_args[MAX_MODELS], *allow_hosts[MAX_HOSTS];
    int n_models;
    int open;                           /* listening on an address that is not loopback */
    int any_address;                    /* listening on every address (0.0.0.0, ::) */
    int max_body, max_answer, no_token; /* checked as ints, kept as sizes */
    int int8;                           /* --int8: translations with int8 weights */
    char token[64];
    char run_dir[4096];
    char shared_dir[4096]; /* a default run directory left out: anyone may write there */
    rs_cli_args args;      /* holds the --config file's values */
} serve_request;

enum {
    OPT_HOST = RS_CLI_OPT,
    OPT_PORT,
    OPT_THREADS,
    OPT_QUEUE,
    OPT_CONNECTIONS,
    OPT_BODY,
    OPT_CHARS,
    OPT_BATCH,
    OPT_BEAM,
    OPT_TIMEOUT,
    OPT_QUIET,
    OPT_ALLOW_HOST,
    OPT_TOKEN,
    OPT_NO_TOKEN,
    OPT_ANSWER,
    OPT_RUN,
    OPT_INT8
};

/* One option, from the command line or the --config file (rs_cli_apply);
 * the numeric ones are parse_request's table. */
static int apply_option(void *ctx, int val, const char *arg)
{
    serve_request *rq = ctx;
    rs_serve_options *opt = &rq->opt;
    switch (val) {
    case 'm':
        if (rq->n_models == MAX_MODELS)
            return rs_cli_usage_error(PROG, "-m: at most %d models", MAX_MODELS);
        rq->model_args[rq->n_models++] = arg;
        break;
    case OPT_HOST: opt->host = arg; break;
    case OPT_QUIET: opt->log = NULL; break;
    case OPT_ALLOW_HOST:
        if (opt->n_allow_hosts == MAX_HOSTS)
            return rs_cli_usage_error(PROG, "--allow-host: at most %d names", MAX_HOSTS);
        rq->allow_hosts[opt->n_allow_hosts++] = arg;
        break;
    case OPT_TOKEN: opt->token = arg; break;
    case OPT_NO_TOKEN: rq->no_token = 1; break;
    case OPT_RUN: opt->run_dir = arg; break;
    case OPT_INT8: rq->int8 = 1; break;
    default: /* RS_CLI_BAD, already reported */ return RS_EXIT_USAGE;
    }
    return -1;
}

/* What the command line and the file give, completed and checked: the model
 * from the file's training section, sizes, the token of an open address and
 * the default run directory; -1 to go on, else the exit status. */
static int check_request(int argc, char **argv, serve_request *rq)
{
    rs_serve_options *opt = &rq->opt;
    const char *trained = rs_cli_config_model(&rq->args);
    if (rq->n_models == 0 && trained)
        rq->model_args[rq->n_models++] = trained;
    opt->max_body = (size_t)rq->max_body;
    opt->max_answer = (size_t)rq->max_answer;
    opt->allow_hosts = rq->allow_hosts;
    if (opt->token && rq->no_token)
        return rs_cli_usage_error(PROG, "--token and --no-token contradict each other");
    opt->no_token = rq->no_token;
    /* Decided on the parsed address: ::0 and 0:0:0:0:0:0:0:0 are ::, and
     * 10.1.2.3 is as reachable as 0.0.0.0 by those who can route to it. */
    rq->open = rs_serve_loopback(opt->host) == 0;
    rq->any_address = rs_serve_any_address(opt->host) == 1;
    if (rq->open && !opt->token && !rq->no_token) {
        if (random_token(rq->token, sizeof rq->token))
            return rs_cli_fail(PROG, "cannot read /dev/urandom for a token");
        opt->token = rq->token;
    }
    if (rq->n_models == 0)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL, or out: or name: in the "
                                        "training: section of --config FILE)");
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    struct stat st;
    if (opt->run_dir && (stat(opt->run_dir, &st) || !S_ISDIR(st.st_mode)))
        return rs_cli_usage_error(PROG, "--run %s: not a directory", opt->run_dir);
    if (!opt->run_dir) {
        rs_run_dir_of_model(rq->model_args[0], rq->run_dir, sizeof rq->run_dir, rq->shared_dir);
        opt->run_dir = rq->run_dir[0] ? rq->run_dir : NULL;
    }
    return -1;
}

/* Parses and checks the options, then the --config file's for what the
 * command line does not give, into rq; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, serve_request *rq)
{
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"host", required_argument, NULL, OPT_HOST},
        {"port", required_argument, NULL, OPT_PORT},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"queue", required_argument, NULL, OPT_QUEUE},
        {"connections", required_argument, NULL, OPT_CONNECTIONS},
        {"max-body", required_argument, NULL, OPT_BODY},
        {"max-chars", required_argument, NULL, OPT_CHARS},
        {"max-batch", required_argument, NULL, OPT_BATCH},
        {"max-beam", required_argument, NULL, OPT_BEAM},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
        {"token", required_argument, NULL, OPT_TOKEN},
        {"no-token", no_argument, NULL, OPT_NO_TOKEN},
        {"max-answer", required_argument, NULL, OPT_ANSWER},
        {"run", required_argument, NULL, OPT_RUN},
        {"int8", no_argument, NULL, OPT_INT8},
        {"config", required_argument, NULL, RS_CLI_CONFIG},
        {0},
    };
    rs_serve_options defaults, *opt = &rq->opt;
    rs_serve_options_default(&defaults);
    *opt = defaults;
    opt->log = log_line;
    rq->max_body = (int)defaults.max_body, rq->max_answer = (int)defaults.max_answer;
    const rs_cli_number numbers[] = {
        {OPT_PORT, "--port", 0, 65535, .i = &opt->port},
        {OPT_THREADS, "--threads", 1, 64, .i = &opt->threads},
        {OPT_QUEUE, "--queue", 1, 100000, .i = &opt->queue},
        {OPT_CONNECTIONS, "--connections", 1, 10000, .i = &opt->connections},
        {OPT_BODY, "--max-body", 64, 1 << 30, .i = &rq->max_body},
        {OPT_CHARS, "--max-chars", 1, 1000000, .i = &opt->max_chars},
        {OPT_BATCH, "--max-batch", 1, RS_MAX_BATCH, .i = &opt->max_batch},
        {OPT_BEAM, "--max-beam", 1, 256, .i = &opt->max_beam},
        {OPT_TIMEOUT, "--timeout", 1, 86400, .i = &opt->timeout},
        {OPT_ANSWER, "--max-answer", 4096, 1 << 30, .i = &rq->max_answer},
        {0},
    };
    rs_cli_begin(&rq->args, PROG, argc, argv, "m:", opts);
    rs_cli_begin_numbers(&rq->args, numbers);
    int c, status;
    while ((c = rs_cli_next(&rq->args)) != -1) {
        if (c == 'h') {
            usage(stdout, &defaults);
            return RS_EXIT_OK;
        }
        if ((status = apply_option(rq, c, optarg)) >= 0)
            return status;
    }
    if ((status = rs_cli_apply_config(&rq->args, "serve", apply_option, rq)) >= 0)
        return status;
    return check_request(argc, argv, rq);
}

/* The address to open (with the token), the models and the limits. */
static void print_banner(const serve_request *rq, const rs_server *server, char names[][256])
{
    const char *open = strchr(rq->opt.host, ':') ? "[" : "",
               *close = strchr(rq->opt.host, ':') ? "]" : "";
    if (rq->open)
        fprintf(stderr, PROG ": warning: listening on %s (%s): anyone who can reach port %d %s\n",
                rq->any_address ? "every network address" : "an address that is not loopback",
                rq->opt.host, rs_server_port(server),
                rq->opt.token ? "and has the token can use this server"
                              : "can use this server (--no-token)");
    fprintf(stderr, PROG ": http://%s%s%s:%d/%s%s models:", open, rq->opt.host, close,
            rs_server_port(server), rq->opt.token ? "?token=" : "",
            rq->opt.token ? rq->opt.token : "");
    for (int i = 0; i < rq->n_models; i++)
        fprintf(stderr, " %s%s", names[i], i ? "" : " (default)");
    fprintf(stderr,
            " | threads %d | queue %d | connections %d | max-body %zu | max-chars %d | "
            "max-batch %d | max-beam %d | timeout %d s\n",
            rq->opt.threads, rq->opt.queue, rq->opt.connections, rq->opt.max_body,
            rq->opt.max_chars, rq->opt.max_batch, rq->opt.max_beam, rq->opt.timeout);
    if (rq->opt.run_dir)
        fprintf(stderr, PROG ": training view of %s (on the page, below the explorer)\n",
                rq->opt.run_dir);
    if (rq->shared_dir[0])
        fprintf(stderr,
                PROG ": no training view of %s: anyone may write there (--run %s shows it "
                     "anyway)\n",
                rq->shared_dir, rq->shared_dir);
}

/* Waits for SIGINT or SIGTERM (blocked in every thread: `stop`), then stops
 * the server beside this thread, which exits at once on a second signal. */
static void serve_until_stopped(rs_server *server, const sigset_t *stop, int timeout)
{
    int sig = 0;
    sigwait(stop, &sig);
    fprintf(stderr,
            PROG ": %s, stopping (answers in transfer get up to %d s; a second signal "
                 "ends it at once)\n",
            sig == SIGINT ? "interrupted by SIGINT (Ctrl-C)" : "terminated by SIGTERM", timeout);
    /* The stop runs beside this thread, which waits for it or for a second signal. */
    stopping st;
    st.server = server;
    atomic_init(&st.done, 0);
    pthread_t stopper;
    if (pthread_create(&stopper, NULL, stop_main, &st)) {
        stop_main(&st);
    } else {
        const struct timespec tick = {0, 50000000L};
        while (!atomic_load(&st.done)) {
            int second = sigtimedwait(stop, NULL, &tick);
            if (second > 0) {
                fprintf(stderr, PROG ": %s again, exiting at once\n",
                        second == SIGINT ? "interrupted" : "terminated");
                _exit(RS_EXIT_SIGNAL + second);
            }
        }
        pthread_join(stopper, NULL);
    }
}

int cmd_serve(int argc, char **argv)
{
    static serve_request rq;
    int status = parse_request(argc, argv, &rq);
    if (status >= 0) {
        rs_cli_end(&rq.args);
        return status;
    }

    /* Each worker decodes on one BLAS thread: the workers are the parallelism. */
    openblas_set_num_threads(1);
    rs_model models[MAX_MODELS];
    rs_codec codecs[MAX_MODELS];
    rs_serve_model served[MAX_MODELS];
    char names[MAX_MODELS][256];
    int loaded = 0;
    status = RS_EXIT_FAIL;
    rs_error err;
    rs_server *server = NULL;
    for (; loaded < rq.n_models; loaded++) {
        if (rs_ready_model_load(rq.model_args[loaded], &(rs_ready_options){.int8 = rq.int8},
                                &models[loaded], &codecs[loaded], NULL, 0, &err))
            goto fail;
        model_name(rq.model_args[loaded], names[loaded], sizeof names[loaded]);
        served[loaded] = (rs_serve_model){names[loaded], &models[loaded], &codecs[loaded]};
    }
    /* SIGINT and SIGTERM are taken by sigwait, so every thread started from
     * here on must block them; a client gone away is an error, not a signal. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (rs_server_start(&server, served, rq.n_models, &rq.opt, &err))
        goto fail;
    print_banner(&rq, server, names);
    serve_until_stopped(server, &stop, rq.opt.timeout);
    status = RS_EXIT_OK;
    goto done;
fail:
    rs_cli_fail(PROG, "%s", err.msg);
done:
    for (int i = 0; i < loaded; i++) {
        rs_codec_free(&codecs[i]);
        rs_model_free(&models[i]);
    }
    rs_cli_end(&rq.args);
    return status;
}
