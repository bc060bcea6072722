/* rnnsearch explain: one attention step with every number printed, to check
 * by hand (or to learn from). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cmd/commands.h"
#include "eval/explain.h"
#include "eval/explain_step.h"

#define PROG "rnnsearch explain"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: rnnsearch explain -m MODEL \"sentence\" --step I [--target \"text\"] [options]\n"
        "       rnnsearch explain --keys M --query M [options]\n"
        "\n"
        "With a model: one real decoder step of a trained model, worked as\n"
        "docs/model.md writes it: s_{i-1}, the annotations h_j, the keys U_a h_j + b_a,\n"
        "W_a s_{i-1}, the scores e_ij, the weights alpha_ij, the context c_i, the GRU's\n"
        "gates z, r and candidate g, the new state s_i, the deep output t~ before\n"
        "maxout, t after it, and the most probable words. The model's own code gives\n"
        "s_{i-1} and h_j; step i is recomputed from its weights in double precision\n"
        "(and compared with the model's float32 step).\n"
        "\n"
        "  -m, --model MODEL  a checkpoint, run directory or model name\n"
        "  --step I        the step, from 1 (step i reads y_{i-1}, y_0 = <s>; required)\n"
        "  --target TEXT   the prefix y_1 ... y_{i-1} (default: the greedy translation's)\n"
        "  --top K         words shown with their probabilities (default: 5)\n"
        "  --all           every vector in full (default: up to 8 entries in full,\n"
        "                  longer ones abbreviated, with their norm)\n"
        "  --digits N      decimals printed, 0-17 (default: 4)\n"
        "\n"
        "Without a model: a hand-made attention step from the numbers given.\n"
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
        "  --score S       additive, general, scaled-dot or dot (default: additive,\n"
        "                  the models' score)\n"
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
        "  --Co M, --Uo M, --Vo M, --bo V  the deep output's weights (docs/model.md):\n"
        "                  t~ = U_o s + V_o e + C_o c + b_o (2l rows each), then maxout\n"
        "                  t[k] = max(t~[2k], t~[2k+1]); terms not given are left out\n"
        "  --state M       s, the new decoder state U_o reads (default: the query)\n"
        "  --emb M         e, the previous word's embedding V_o reads\n"
        "  --digits N      decimals printed, 0-17 (default: 4)\n"
        "  -h, --help      this text\n"
        "\n"
        "Matrices map column vectors (y = W x) and are given row by row, as in\n"
        "docs/model.md. Before exp, each query's largest visible score m is\n"
        "subtracted: the weights are unchanged and exp cannot overflow.\n"
        "\n"
        "example: rnnsearch explain --score dot --keys \"1,0;0,1;1,1\" --query \"1,2\"\n"
        "  scores (1, 2, 3), weights (0.0900, 0.2447, 0.6652), context (0.7553, 0.9100)\n");
}

/* The options of a real step (-m). */
typedef struct {
    const char *model, *sentence, *target;
    int step, top, all, digits;
    int score_given;
} model_request;

/* Parses and checks the options into in and rq; -1 to go on, else the exit
 * status. */
static int parse_request(int argc, char **argv, rs_explain_input *in, model_request *rq)
{
    /* The options from OPT_KEYS to OPT_BO are the matrices, in this order. */
    rs_matrix *const matrices[] = {&in->keys, &in->query, &in->values, &in->mask, &in->W,
                                   &in->Wq,   &in->Wk,    &in->v,      &in->b,    &in->state,
                                   &in->emb,  &in->Uo,    &in->Vo,     &in->Co,   &in->bo};
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
        OPT_STATE,
        OPT_EMB,
        OPT_UO,
        OPT_VO,
        OPT_CO,
        OPT_BO,
        OPT_SCALE,
        OPT_SCORE,
        OPT_DIGITS,
        OPT_STEP,
        OPT_TARGET,
        OPT_TOP,
        OPT_ALL,
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
        {"state", required_argument, NULL, OPT_STATE},
        {"emb", required_argument, NULL, OPT_EMB},
        {"Uo", required_argument, NULL, OPT_UO},
        {"Vo", required_argument, NULL, OPT_VO},
        {"Co", required_argument, NULL, OPT_CO},
        {"bo", required_argument, NULL, OPT_BO},
        {"scale", no_argument, NULL, OPT_SCALE},
        {"score", required_argument, NULL, OPT_SCORE},
        {"digits", required_argument, NULL, OPT_DIGITS},
        {"model", required_argument, NULL, 'm'},
        {"step", required_argument, NULL, OPT_STEP},
        {"target", required_argument, NULL, OPT_TARGET},
        {"top", required_argument, NULL, OPT_TOP},
        {"all", no_argument, NULL, OPT_ALL},
        {NULL, 0, NULL, 0},
    };
    const rs_cli_number numbers[] = {{OPT_DIGITS, "--digits", 0, 17, .i = &rq->digits},
                                     {OPT_STEP, "--step", 1, 1000000, .i = &rq->step},
                                     {OPT_TOP, "--top", 1, 1000, .i = &rq->top},
                                     {0}};
    rs_error err;
    rs_cli_args args;
    int toy_given = 0;
    rs_cli_begin(&args, PROG, argc, argv, "m:", options);
    rs_cli_begin_numbers(&args, numbers);
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        if (c >= OPT_KEYS && c <= OPT_BO) {
            const int k = c - OPT_KEYS;
            toy_given = 1;
            rs_matrix_free(matrices[k]);
            if (rs_matrix_parse(matrices[k], optarg, &err) < 0)
                return rs_cli_usage_error(PROG, "--%s: '%s': %s", options[k].name, optarg, err.msg);
            continue;
        }
        switch (c) {
        case 'h': usage(stdout); return RS_EXIT_OK;
        case 'm':
            if (rs_cli_once(PROG, "-m", &rq->model, optarg))
                return RS_EXIT_USAGE;
            break;
        case OPT_TARGET: rq->target = optarg; break;
        case OPT_ALL: rq->all = 1; break;
        case OPT_SCALE: in->scale = 1, toy_given = 1; break;
        case OPT_SCORE: {
            int kind = rs_attention_kind_parse(optarg);
            if (kind == RS_ATT_NONE)
                return rs_cli_usage_error(PROG, "--score none: " RS_NO_ALIGNMENT_WHY);
            if (kind < 0)
                return rs_cli_usage_error(
                    PROG, "--score: '%s' is not one of additive, general, scaled-dot or dot",
                    optarg);
            in->score = (rs_attention_kind)kind;
            rq->score_given = 1;
            break;
        }
        default: return RS_EXIT_USAGE;
        }
    }
    /* rs_cli_next stores --step itself, from 1: 0 is "not given" */
    const int step_given = rq->step > 0;
    if (rq->model) {
        if (toy_given || rq->score_given)
            return rs_cli_usage_error(PROG, "--keys, --query and the other numbers (and --score) "
                                            "are for a hand-made step; with -m the model gives "
                                            "them");
        if (optind >= argc)
            return rs_cli_usage_error(PROG, "-m needs the sentence: explain -m MODEL \"sentence\" "
                                            "--step I");
        if (argc - optind > 1)
            return rs_cli_usage_error(PROG, "one sentence, in quotes: unexpected argument '%s'",
                                      argv[optind + 1]);
        if (!step_given)
            return rs_cli_usage_error(PROG, "--step is required with -m (steps count from 1)");
        rq->sentence = argv[optind];
        return -1;
    }
    if (step_given || rq->target || rq->all)
        return rs_cli_usage_error(PROG, "--step, --target and --all explain a model's step: "
                                        "give -m MODEL");
    if (optind < argc)
        return rs_cli_usage_error(PROG,
                                  "unexpected argument '%s' (a sentence needs -m MODEL; a "
                                  "hand-made step is given by options)",
                                  argv[optind]);
    if (in->keys.rows == 0 || in->query.rows == 0)
        return rs_cli_usage_error(PROG, "--keys and --query are required (or -m MODEL)");
    if (in->score == RS_ATT_ADDITIVE && !rq->score_given && !rs_matrix_given(&in->Wq) &&
        !rs_matrix_given(&in->Wk) && !rs_matrix_given(&in->v))
        return rs_cli_usage_error(PROG, "the default score is additive, as the models' is: "
                                        "give --Wq, --Wk and --v, or --score dot for the "
                                        "parameter-free q . k");
    if (rs_explain_check(in, &err) < 0)
        return rs_cli_usage_error(PROG, "%s", err.msg);
    return -1;
}

/* Writes an explanation to standard output: the exit status. */
static int print_explanation(const char *text)
{
    fputs(text, stdout);
    return fflush(stdout) ? rs_cli_fail(PROG, "cannot write the explanation: %s", strerror(errno))
                          : RS_EXIT_OK;
}

/* explain -m: load the model, work the step, print it. */
static int explain_model(const model_request *rq)
{
    rs_model model;
    rs_codec codec;
    rs_error err;
    memset(&model, 0, sizeof model);
    memset(&codec, 0, sizeof codec);
    if (rs_cli_load_model(rq->model, &model, &codec, &err))
        return rs_cli_fail(PROG, "%s", err.msg);
    rs_explained_step x;
    char *text = NULL;
    int status;
    const rs_explain_step_request srq = {rq->sentence, rq->target, rq->step};
    if (rs_explain_step_compute(&x, &model, &codec, &srq, &err) < 0) {
        /* what is wrong is the request (the step, the model's kind) */
        status = rs_cli_usage_error(PROG, "%s", err.msg);
    } else if (rs_explain_step_report(&x, &model, rq->digits, rq->all ? -1 : 8, rq->top, &text,
                                      &err) < 0) {
        status = rs_cli_fail(PROG, "%s", err.msg);
    } else {
        status = print_explanation(text);
    }
    free(text);
    rs_explained_step_free(&x);
    rs_codec_free(&codec);
    rs_model_free(&model);
    return status;
}

int cmd_explain(int argc, char **argv)
{
    rs_explain_input in;
    memset(&in, 0, sizeof in);
    in.score = RS_ATT_ADDITIVE; /* the models' score (docs/model.md) */
    model_request rq = {.top = 5, .digits = 4};
    int status = parse_request(argc, argv, &in, &rq);
    if (status >= 0 || rq.model) {
        rs_explain_input_free(&in);
        return status >= 0 ? status : explain_model(&rq);
    }
    const int digits = rq.digits;
    rs_error err;
    rs_explain_result res;
    char *text = NULL;
    if (rs_explain_compute(&res, &in, &err) < 0 ||
        rs_explain_report(&in, &res, digits, &text, &err) < 0) {
        status = rs_cli_fail(PROG, "%s", err.msg);
    } else {
        status = print_explanation(text);
    }
    free(text);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
    return status;
}
