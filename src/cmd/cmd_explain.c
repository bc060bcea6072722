/* rnnsearch explain: one attention step with every number printed, to check
 * by hand (or to learn from). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "eval/explain.h"

#define PROG "rnnsearch explain"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rnnsearch explain --keys M --query M [options]\n"
            "\n"
            "Works through one attention step and prints every intermediate: the scores,\n"
            "the exponentials and their sum, the softmax weights, the context vector and\n"
            "[query ; context]. One query is shown step by step; several (one per row)\n"
            "in matrix form. Arithmetic is in double precision.\n"
            "\n"
            "A matrix M is written row by row: numbers separated by ',', rows by ';',\n"
            "e.g. \"1,0;0,1;1,1\" is three rows of two. A vector is one row: \"1,2\".\n"
            "\n"
            "  --keys M        the keys k_j, one per row (required)\n"
            "  --query M       the query q, or several queries, one per row (required)\n"
            "  --values M      the values v_j, one per key (default: the keys)\n"
            "  --score S       dot, scaled-dot, general or additive (default: dot)\n"
            "                    dot         e_j = q . k_j\n"
            "                    scaled-dot  e_j = q . k_j / sqrt(dk)\n"
            "                    general     e_j = q^T W k_j      with --weights W (dq x dk)\n"
            "                    additive    e_j = v . tanh(Wq q + Wk k_j + b)\n"
            "                                with --Wq (a x dq), --Wk (a x dk), --v (a numbers)\n"
            "                                and optionally --b (a numbers; default 0)\n"
            "  --scale         also divide the scores by sqrt(dk), dk = key size (default: off;\n"
            "                  scaled-dot is dot with --scale)\n"
            "  --mask M        1 keeps a key, 0 hides it (its weight is exactly 0): one row\n"
            "                  for all queries or one row per query (default: keep all)\n"
            "  --weights M     W for the general score\n"
            "  --Wq M, --Wk M, --v V, --b V   the additive score's parameters\n"
            "  --digits N      decimals printed, 0-17 (default: 4)\n"
            "  -h, --help      this text\n"
            "\n"
            "Matrices map column vectors (y = W x) and are given row by row, as in\n"
            "docs/model.md. Before exp, each query's largest visible score m is\n"
            "subtracted: the weights are unchanged and exp cannot overflow.\n"
            "\n"
            "example: rnnsearch explain --keys \"1,0;0,1;1,1\" --query \"1,2\"\n"
            "  scores (1, 2, 3), weights (0.0900, 0.2447, 0.6652), context (0.7553, 0.9100)\n");
}

/* Parses and checks the options into in and *digits; -1 to go on, else the
 * exit status. */
static int parse_request(int argc, char **argv, rs_explain_input *in, int *digits)
{
    /* The options from OPT_KEYS to OPT_B are the matrices, in this order. */
    rs_matrix *const matrices[] = {&in->keys, &in->query, &in->values, &in->mask, &in->W,
                                   &in->Wq,   &in->Wk,    &in->v,      &in->b};
    enum {
        OPT_KEYS = RS_CLI_OPT,
        OPT_QUERY,
        OPT_VALUES,
        OPT_MASK,
        OPT_WEIGHTS,
        OPT_WQ,
        OPT_WK,
        OPT_V,
        OPT_B,
        OPT_SCALE,
        OPT_SCORE,
        OPT_DIGITS
    };
    static const struct option options[] = {
        {"keys", required_argument, NULL, OPT_KEYS},
        {"query", required_argument, NULL, OPT_QUERY},
        {"values", required_argument, NULL, OPT_VALUES},
        {"mask", required_argument, NULL, OPT_MASK},
        {"weights", required_argument, NULL, OPT_WEIGHTS},
        {"Wq", required_argument, NULL, OPT_WQ},
        {"Wk", required_argument, NULL, OPT_WK},
        {"v", required_argument, NULL, OPT_V},
        {"b", required_argument, NULL, OPT_B},
        {"scale", no_argument, NULL, OPT_SCALE},
        {"score", required_argument, NULL, OPT_SCORE},
        {"digits", required_argument, NULL, OPT_DIGITS},
        {NULL, 0, NULL, 0},
    };
    const rs_cli_number numbers[] = {{OPT_DIGITS, "--digits", 0, 17, .i = digits}, {0}};
    rs_error err;
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "", options);
    rs_cli_begin_numbers(&args, numbers);
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        if (c >= OPT_KEYS && c <= OPT_B) {
            const int k = c - OPT_KEYS;
            rs_matrix_free(matrices[k]);
            if (rs_matrix_parse(matrices[k], optarg, &err) < 0)
                return rs_cli_usage_error(PROG, "--%s: '%s': %s", options[k].name, optarg, err.msg);
            continue;
        }
        switch (c) {
        case 'h': usage(stdout); return RS_EXIT_OK;
        case OPT_SCALE: in->scale = 1; break;
        case OPT_SCORE: {
            int kind = rs_attention_kind_parse(optarg);
            if (kind == RS_ATT_NONE)
                return rs_cli_usage_error(PROG, "--score none: " RS_NO_ALIGNMENT_WHY);
            if (kind < 0)
                return rs_cli_usage_error(
                    PROG, "--score: '%s' is not one of dot, scaled-dot, general or additive",
                    optarg);
            in->score = (rs_attention_kind)kind;
            break;
        }
        default: return RS_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s' (everything is given by options)",
                                  argv[optind]);
    if (in->keys.rows == 0 || in->query.rows == 0)
        return rs_cli_usage_error(PROG, "--keys and --query are required");
    if (rs_explain_check(in, &err) < 0)
        return rs_cli_usage_error(PROG, "%s", err.msg);
    return -1;
}

int cmd_explain(int argc, char **argv)
{
    rs_explain_input in;
    memset(&in, 0, sizeof in);
    in.score = RS_ATT_DOT;
    int digits = 4;
    int status = parse_request(argc, argv, &in, &digits);
    if (status >= 0) {
        rs_explain_input_free(&in);
        return status;
    }
    rs_error err;
    rs_explain_result res;
    char *text = NULL;
    if (rs_explain_compute(&res, &in, &err) < 0 ||
        rs_explain_report(&in, &res, digits, &text, &err) < 0) {
        status = rs_cli_fail(PROG, "%s", err.msg);
    } else {
        fputs(text, stdout);
        status = fflush(stdout)
                     ? rs_cli_fail(PROG, "cannot write the explanation: %s", strerror(errno))
                     : RS_EXIT_OK;
    }
    free(text);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
    return status;
}
