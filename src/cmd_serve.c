/* rnnsearch serve: the web explorer and JSON API (serve.h) over one or more
 * models, until SIGINT or SIGTERM. */
#include <cblas.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "serve.h"

#define PROG "rnnsearch serve"
#define MAX_MODELS 16

static void usage(FILE *out, const rs_serve_options *d)
{
    fprintf(out,
            "usage: " PROG " -m MODEL [-m MODEL2 ...] [OPTIONS]\n\n"
            "Serves a page to explore translations, beams and alignment matrices, and\n"
            "a JSON API (POST /api/translate, POST /api/align, GET /api/models; see\n"
            "docs/serve.md), until interrupted. MODEL is a checkpoint file or a directory\n"
            "models/NAME; requests name a model by its directory or file name (the first\n"
            "is the default).\n\n"
            "  -m, --model MODEL   a model to serve (at least one; at most %d)\n"
            "  --host ADDR         numeric address to listen on (default: %s; 0.0.0.0 or ::\n"
            "                      open it to the network)\n"
            "  --port N            TCP port, 0 for any free one (default: %d)\n"
            "  --threads N         decoding workers, each with its own workspace (default: %d)\n"
            "  --queue N           requests waiting for a worker at most; more get 503\n"
            "                      (default: %d)\n"
            "  --connections N     open connections at most (default: %d)\n"
            "  --max-body BYTES    largest request body; larger get 413 (default: %zu)\n"
            "  --max-chars N       longest text, source or target in characters; longer\n"
            "                      get 413 (default: %d)\n"
            "  --max-beam K        largest beam and n_best a request may ask for (default: %d)\n"
            "  --timeout SECONDS   idle connections are closed, slower bodies get 408 and\n"
            "                      requests that waited this long for a worker 503 (default: %d)\n"
            "  --quiet             no log line per request\n"
            "  -h, --help          this help\n",
            MAX_MODELS, d->host, d->port, d->threads, d->queue, d->connections, d->max_body,
            d->max_chars, d->max_beam, d->timeout);
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

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, PROG ": %s\n", line);
}

int cmd_serve(int argc, char **argv)
{
    enum { OPT_HOST = 1000, OPT_PORT, OPT_THREADS, OPT_QUEUE, OPT_CONNECTIONS, OPT_BODY,
           OPT_CHARS, OPT_BEAM, OPT_TIMEOUT, OPT_QUIET };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"host", required_argument, NULL, OPT_HOST},
        {"port", required_argument, NULL, OPT_PORT},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"queue", required_argument, NULL, OPT_QUEUE},
        {"connections", required_argument, NULL, OPT_CONNECTIONS},
        {"max-body", required_argument, NULL, OPT_BODY},
        {"max-chars", required_argument, NULL, OPT_CHARS},
        {"max-beam", required_argument, NULL, OPT_BEAM},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {0},
    };
    rs_serve_options opt, defaults;
    rs_serve_options_default(&defaults);
    opt = defaults;
    opt.log = log_line;
    const char *model_args[MAX_MODELS];
    int n_models = 0, max_body = (int)defaults.max_body;
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "m:", opts);
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        switch (c) {
        case 'm':
            if (n_models == MAX_MODELS)
                return rs_cli_usage_error(PROG, "-m: at most %d models", MAX_MODELS);
            model_args[n_models++] = optarg;
            break;
        case OPT_HOST: opt.host = optarg; break;
        case OPT_PORT: if (rs_cli_int(PROG, "--port", optarg, 0, 65535, &opt.port)) return RS_EXIT_USAGE; break;
        case OPT_THREADS: if (rs_cli_int(PROG, "--threads", optarg, 1, 64, &opt.threads)) return RS_EXIT_USAGE; break;
        case OPT_QUEUE: if (rs_cli_int(PROG, "--queue", optarg, 1, 100000, &opt.queue)) return RS_EXIT_USAGE; break;
        case OPT_CONNECTIONS: if (rs_cli_int(PROG, "--connections", optarg, 1, 10000, &opt.connections)) return RS_EXIT_USAGE; break;
        case OPT_BODY: if (rs_cli_int(PROG, "--max-body", optarg, 64, 1 << 30, &max_body)) return RS_EXIT_USAGE; break;
        case OPT_CHARS: if (rs_cli_int(PROG, "--max-chars", optarg, 1, 1000000, &opt.max_chars)) return RS_EXIT_USAGE; break;
        case OPT_BEAM: if (rs_cli_int(PROG, "--max-beam", optarg, 1, 256, &opt.max_beam)) return RS_EXIT_USAGE; break;
        case OPT_TIMEOUT: if (rs_cli_int(PROG, "--timeout", optarg, 1, 86400, &opt.timeout)) return RS_EXIT_USAGE; break;
        case OPT_QUIET: opt.log = NULL; break;
        case 'h': usage(stdout, &defaults); return RS_EXIT_OK;
        default: /* RS_CLI_BAD, already reported */
            return RS_EXIT_USAGE;
        }
    }
    opt.max_body = (size_t)max_body;
    if (n_models == 0)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);

    /* Each worker decodes on one BLAS thread: the workers are the parallelism. */
    openblas_set_num_threads(1);
    rs_model models[MAX_MODELS];
    rs_codec codecs[MAX_MODELS];
    rs_serve_model served[MAX_MODELS];
    char names[MAX_MODELS][256];
    int loaded = 0, status = RS_EXIT_FAIL;
    rs_error err;
    rs_server *server = NULL;
    for (; loaded < n_models; loaded++) {
        if (rs_cli_load_model(model_args[loaded], &models[loaded], &codecs[loaded], &err))
            goto fail;
        model_name(model_args[loaded], names[loaded], sizeof names[loaded]);
        served[loaded] = (rs_serve_model){names[loaded], &models[loaded], &codecs[loaded]};
    }
    /* SIGINT and SIGTERM are taken by sigwait below, so every thread started
     * from here on must block them; a client gone away is an error, not a signal. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (rs_server_start(&server, served, n_models, &opt, &err))
        goto fail;
    const char *open = strchr(opt.host, ':') ? "[" : "", *close = strchr(opt.host, ':') ? "]" : "";
    fprintf(stderr, PROG ": http://%s%s%s:%d/ models:", open, opt.host, close, rs_server_port(server));
    for (int i = 0; i < n_models; i++)
        fprintf(stderr, " %s%s", names[i], i ? "" : " (default)");
    fprintf(stderr, " | threads %d | queue %d | connections %d | max-body %zu | max-chars %d | "
                    "max-beam %d | timeout %d s\n",
            opt.threads, opt.queue, opt.connections, opt.max_body, opt.max_chars, opt.max_beam,
            opt.timeout);
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, PROG ": %s, stopping\n", sig == SIGINT ? "interrupted" : "terminated");
    rs_server_stop(server);
    status = RS_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, PROG ": %s\n", err.msg);
done:
    for (int i = 0; i < loaded; i++) {
        rs_codec_free(&codecs[i]);
        rs_model_free(&models[i]);
    }
    return status;
}
