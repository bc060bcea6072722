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
    /* Options 0..8 are the matrices, in this order. */
    rs_matrix *const matrices[] = {&in->keys, &in->query, &in->values, &in->mask, &in->W,
                                   &in->Wq,   &in->Wk,    &in->v,      &in->b};
    enum { OPT_SCALE = 256, OPT_SCORE, OPT_DIGITS };
    static const struct option options[] = {
        {"keys", required_argument, NULL, 0},
        {"query", required_argument, NULL, 1},
        {"values", required_argument, NULL, 2},
        {"mask", required_argument, NULL, 3},
        {"weights", required_argument, NULL, 4},
        {"Wq", required_argument, NULL, 5},
        {"Wk", required_argument, NULL, 6},
        {"v", required_argument, NULL, 7},
        {"b", required_argument, NULL, 8},
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
        if (c >= 0 && c < (int)(sizeof matrices / sizeof *matrices)) {
            rs_matrix_free(matrices[c]);
            if (rs_matrix_parse(matrices[c], optarg, &err) < 0)
                return rs_cli_usage_error(PROG, "--%s: '%s': %s", options[c].name, optarg, err.msg);
            continue;
        }
        switch (c) {
        case 'h': usage(stdout); return RS_EXIT_OK;
        case OPT_SCALE: in->scale = 1; break;
        case OPT_SCORE: {
            int kind = rs_attention_kind_parse(optarg);
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
    status = RS_EXIT_FAIL;
    if (rs_explain_compute(&res, &in, &err) < 0 ||
        rs_explain_report(&in, &res, digits, &text, &err) < 0) {
        fprintf(stderr, PROG ": %s\n", err.msg);
    } else {
        fputs(text, stdout);
        if (fflush(stdout) == 0)
            status = RS_EXIT_OK;
        else
            fprintf(stderr, PROG ": cannot write the explanation: %s\n", strerror(errno));
    }
    free(text);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
    return status;
}
