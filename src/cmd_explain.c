/* rnnsearch explain: one attention step with every number printed, to check
 * by hand (or to learn from). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "explain.h"

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
            "  --help          this text\n"
            "\n"
            "Matrices map column vectors (y = W x) and are given row by row, as in\n"
            "docs/model.md. Before exp, each query's largest visible score m is\n"
            "subtracted: the weights are unchanged and exp cannot overflow.\n"
            "\n"
            "example: rnnsearch explain --keys \"1,0;0,1;1,1\" --query \"1,2\"\n"
            "  scores (1, 2, 3), weights (0.0900, 0.2447, 0.6652), context (0.7553, 0.9100)\n");
}

/* A GNU-style long option with a value: "--name value" or "--name=value". */
static int take_option(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i] + 2;
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    if (a[n] == '=')
        *value = a + n + 1;
    else if (*i + 1 < argc)
        *value = argv[++*i];
    else
        *value = NULL;
    return 1;
}

int cmd_explain(int argc, char **argv)
{
    rs_explain_input in;
    memset(&in, 0, sizeof in);
    in.score = RS_SCORE_DOT;
    int digits = 4, status = 2;
    rs_error err;
    struct {
        const char *name;
        rs_matrix *m;
    } matrices[] = {{"keys", &in.keys}, {"query", &in.query}, {"values", &in.values},
                    {"mask", &in.mask}, {"weights", &in.W},   {"Wq", &in.Wq},
                    {"Wk", &in.Wk},     {"v", &in.v},         {"b", &in.b}};
    const int nmatrices = (int)(sizeof matrices / sizeof matrices[0]);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            status = 0;
            goto done;
        }
        if (strcmp(a, "--scale") == 0) {
            in.scale = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, PROG ": unexpected argument '%s' (everything is given by options)\n",
                    a);
            goto usage_error;
        }
        int matched = 0;
        for (int k = 0; k < nmatrices && !matched; k++) {
            if (!take_option(argc, argv, &i, matrices[k].name, &v))
                continue;
            matched = 1;
            if (!v) {
                fprintf(stderr, PROG ": --%s needs a value\n", matrices[k].name);
                goto usage_error;
            }
            rs_matrix_free(matrices[k].m);
            if (rs_matrix_parse(matrices[k].m, v, &err) < 0) {
                fprintf(stderr, PROG ": --%s \"%s\": %s\n", matrices[k].name, v, err.msg);
                goto usage_error;
            }
        }
        if (matched)
            continue;
        if (take_option(argc, argv, &i, "score", &v)) {
            int kind = rs_score_kind_parse(v);
            if (kind < 0) {
                fprintf(stderr, PROG ": --score takes dot, scaled-dot, general or additive\n");
                goto usage_error;
            }
            in.score = (rs_score_kind)kind;
        } else if (take_option(argc, argv, &i, "digits", &v)) {
            char *end;
            long d = v ? strtol(v, &end, 10) : -1;
            if (!v || end == v || *end || d < 0 || d > 17) {
                fprintf(stderr, PROG ": --digits takes a whole number from 0 to 17\n");
                goto usage_error;
            }
            digits = (int)d;
        } else {
            fprintf(stderr, PROG ": unknown option %s\n", a);
            goto usage_error;
        }
    }
    if (in.keys.rows == 0 || in.query.rows == 0) {
        fprintf(stderr, PROG ": --keys and --query are required\n");
        goto usage_error;
    }
    if (rs_explain_check(&in, &err) < 0) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto usage_error;
    }

    rs_explain_result res;
    char *text = NULL;
    status = 1;
    if (rs_explain_compute(&res, &in, &err) < 0 ||
        rs_explain_report(&in, &res, digits, &text, &err) < 0) {
        fprintf(stderr, PROG ": %s\n", err.msg);
    } else {
        fputs(text, stdout);
        if (fflush(stdout) == 0)
            status = 0;
        else
            fprintf(stderr, PROG ": cannot write the explanation: %s\n", strerror(errno));
    }
    free(text);
    rs_explain_result_free(&res);
    goto done;

usage_error:
    fprintf(stderr, "Try 'rnnsearch explain --help'.\n");
    status = 2;
done:
    rs_explain_input_free(&in);
    return status;
}
