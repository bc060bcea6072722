/* rnnsearch serve: the web explorer and JSON API (serve.h) over one or more
 * models, until SIGINT or SIGTERM. */
#include <cblas.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "model/locate.h"
#include "nn/network.h"
#include "search/translate.h"
#include "serve/run.h"
#include "serve/models.h"
#include "serve/serve.h"

#define PROG "rnnsearch serve"
#define MAX_MODELS RS_SERVE_MAX_MODELS
#define MAX_HOSTS 16

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

static int set_model(void *req, const char *arg)
{
    serve_request *rq = req;
    if (rq->n_models == MAX_MODELS)
        return rs_cli_usage_error(PROG, "-m: at most %d models", MAX_MODELS);
    rq->model_args[rq->n_models++] = arg;
    return -1;
}

/* Numeric only, decided as the server decides it (rs_serve_loopback): a
 * name here would fail only once the models are loaded. */
static int set_host(void *req, const char *arg)
{
    if (rs_serve_loopback(arg) < 0)
        return rs_cli_usage_error(PROG, "--host: '%s' is not a numeric IPv4 or IPv6 address", arg);
    ((serve_request *)req)->opt.host = arg;
    return -1;
}

static int set_quiet(void *req, const char *arg)
{
    ((serve_request *)req)->opt.log = NULL;
    return -1;
}

static int set_allow_host(void *req, const char *arg)
{
    serve_request *rq = req;
    if (rq->opt.n_allow_hosts == MAX_HOSTS)
        return rs_cli_usage_error(PROG, "--allow-host: at most %d names", MAX_HOSTS);
    rq->allow_hosts[rq->opt.n_allow_hosts++] = arg;
    return -1;
}

static int set_token(void *req, const char *arg)
{
    rs_error err;
    if (rs_serve_token_check(arg, &err))
        return rs_cli_usage_error(PROG, "--token: %s", err.msg);
    ((serve_request *)req)->opt.token = arg;
    return -1;
}

#define RQ serve_request
#define SECTION .section = "serve"
#define STR(x) STR_(x)
#define STR_(x) #x
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_CALL, .set = set_model, .value = "MODEL", .flags = RS_CLI_REPEAT,
     .help = "a model to serve (at least one; at most " STR(MAX_MODELS) ")"},
    {"host", .kind = RS_CLI_CALL, RS_AT(RQ, opt.host), .value = "ADDR", .set = set_host, SECTION,
     .help = "numeric address to listen on (default: 127.0.0.1); an\n"
             "address that is not loopback (127.0.0.0/8, ::1), such as\n"
             "0.0.0.0, :: or 10.1.2.3, is reachable from a network, and\n"
             "then a token is required"},
    {"allow-host", .kind = RS_CLI_CALL, .set = set_allow_host, .value = "NAME", SECTION,
     .flags = RS_CLI_REPEAT,
     .help = "accept requests whose Host header names NAME, besides\n"
             "localhost, 127.0.0.1, ::1 and ADDR (repeatable; at most " STR(MAX_HOSTS) ")"},
    {"token", .kind = RS_CLI_CALL, .set = set_token, .value = "TOKEN", SECTION, .group = 1,
     .help = "require TOKEN on every request but the page's\n"
             "(Authorization: Bearer, or ?token=; the page keeps it in\n"
             "its origin's storage); 8-128 of A-Z a-z 0-9 - _ ."},
    {"no-token", .kind = RS_CLI_FLAG, RS_AT(RQ, no_token), SECTION, .group = 1,
     .help = "on an address that is not loopback, serve without a token\n"
             "(anyone who can reach the port can use the server; on\n"
             "every address, 0.0.0.0 or ::, any Host is accepted, so\n"
             "any web page can use it by DNS rebinding)"},
    {"port", .kind = RS_CLI_INT, RS_AT(RQ, opt.port), 0, 65535, "N", SECTION,
     .help = "TCP port, 0 for any free one (default: %D)"},
    {"threads", .kind = RS_CLI_INT, RS_AT(RQ, opt.threads), 1, 64, "N", SECTION,
     .help = "decoding workers, each with its own workspace (default: %D)"},
    {"queue", .kind = RS_CLI_INT, RS_AT(RQ, opt.queue), 1, 100000, "N", SECTION,
     .help = "requests waiting for a worker at most; more get 503\n"
             "(default: %D)"},
    {"connections", .kind = RS_CLI_INT, RS_AT(RQ, opt.connections), 1, 10000, "N", SECTION,
     .help = "open connections at most (default: %D)"},
    {"max-body", .kind = RS_CLI_INT, RS_AT(RQ, max_body), 64, 1 << 30, "BYTES", SECTION,
     .help = "largest request body; larger get 413 (default: %D)"},
    {"max-chars", .kind = RS_CLI_INT, RS_AT(RQ, opt.max_chars), 1, 1000000, "N", SECTION,
     .help = "longest text, source or target in characters; longer\n"
             "get 413 (default: %D)"},
    {"max-batch", .kind = RS_CLI_INT, RS_AT(RQ, opt.max_batch), 1, RS_MAX_BATCH, "N", SECTION,
     .help = "most sentences one translate request may hold (a \"text\"\n"
             "list, or POST /translator/translate); more get 413\n"
             "(default: %D)"},
    {"max-beam", .kind = RS_CLI_INT, RS_AT(RQ, opt.max_beam), 1, 256, "K", SECTION,
     .help = "largest beam and n_best a request may ask for (default: %D)"},
    {"max-answer", .kind = RS_CLI_INT, RS_AT(RQ, max_answer), 4096, 1 << 30, "BYTES", SECTION,
     .help = "largest answer (alignments and SVG pictures included);\n"
             "a request whose answer would be larger gets 413\n"
             "(default: %D)"},
    {"timeout", .kind = RS_CLI_INT, RS_AT(RQ, opt.timeout), 1, 86400, "SECONDS", SECTION,
     .help = "a request must arrive whole within this time of its\n"
             "connection opening (or of the previous answer), else the\n"
             "connection is closed; requests that waited this long for\n"
             "a worker get 503; at a stop, answers being sent get this\n"
             "long to finish (default: %D)"},
    {"run", .kind = RS_CLI_STRING, RS_AT(RQ, opt.run_dir), .value = "DIR", SECTION,
     .help = "the training run whose learning curves and watched\n"
             "alignments (train.log.tsv, watch.jsonl) the page's training\n"
             "view shows, following it while it trains (default: the\n"
             "first model's directory, when it holds either file and\n"
             "not everyone may write to it)"},
    {"quiet", .kind = RS_CLI_CALL, .set = set_quiet, .help = "no log line per request"},
    {"int8", .kind = RS_CLI_FLAG, RS_AT(RQ, int8), SECTION,
     .help = "translate with int8 copies of the decoder's weights, as\n"
             "translate --int8 (alignments and scores of given\n"
             "targets stay exact; default: off)"},
    {"config", .kind = RS_CLI_CONFIG_FILE, .value = "FILE",
     .help = "settings from the serve: section of a YAML file (keys\n"
             "named as the options, _ for -; the model from training:\n"
             "out or name when -m is not given); options on the\n"
             "command line win"},
    RS_CLI_HELP_ROW,
    {0},
};
#undef SECTION
#undef RQ

const rs_cli_command rs_serve_command = {
    "serve",
    PROG,
    "usage: " PROG " -m MODEL [-m MODEL2 ...] [OPTIONS]\n\n"
    "Serves a page to explore translations, beams and alignment matrices, and\n"
    "a JSON API (POST /api/translate, POST /api/align, GET /api/models, and\n"
    "OpenNMT-py's POST /translator/translate; see docs/serve.md), until\n"
    "interrupted. MODEL is a checkpoint file or a directory models/NAME;\n"
    "requests name a model by its directory or file name (the first is the\n"
    "default).\n\n",
    "\nSIGINT or SIGTERM stops the server: no new connections, queued requests are\n"
    "answered and answers being sent finish (at most --timeout); a second signal\n"
    "ends it at once.\n",
    22,
    sizeof(serve_request),
    option_table};

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
        if (rs_serve_token_new(rq->token, sizeof rq->token))
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
    rs_serve_options_default(&rq->opt);
    rq->opt.log = log_line;
    rq->max_body = (int)rq->opt.max_body, rq->max_answer = (int)rq->opt.max_answer;
    const int status = rs_cli_parse(&rs_serve_command, rq, &rq->args, argc, argv);
    return status >= 0 ? status : check_request(argc, argv, rq);
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
    const int second = rs_server_stop_or_signal(server, stop);
    if (second) {
        fprintf(stderr, PROG ": %s again, exiting at once\n",
                second == SIGINT ? "interrupted" : "terminated");
        _exit(RS_EXIT_SIGNAL + second);
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
    static rs_serve_models models;
    status = RS_EXIT_FAIL;
    rs_error err;
    rs_server *server = NULL;
    if (rs_serve_models_load(&models, rq.model_args, rq.n_models,
                             &(rs_ready_options){.int8 = rq.int8}, &err))
        goto fail;
    /* SIGINT and SIGTERM are taken by sigwait, so every thread started from
     * here on must block them; a client gone away is an error, not a signal. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (rs_server_start(&server, models.served, rq.n_models, &rq.opt, &err))
        goto fail;
    print_banner(&rq, server, models.names);
    serve_until_stopped(server, &stop, rq.opt.timeout);
    status = RS_EXIT_OK;
    goto done;
fail:
    rs_cli_fail(PROG, "%s", err.msg);
done:
    rs_serve_models_free(&models);
    rs_cli_end(&rq.args);
    return status;
}
