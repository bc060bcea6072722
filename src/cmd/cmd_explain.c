/* rnnsearch explain: one attention step with every number printed, to check
 * by hand (or to learn from). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "eval/explain.h"
#include "eval/explain_step.h"

#define PROG "rnnsearch explain"

/* The options of a real step (-m). */
typedef struct {
    const char *model, *sentence, *target;
    int step, top, all, digits;
    int score_given;
    int attend, attend_given; /* --attend J */
    const char *alpha;        /* --alpha A1,A2,...: as given */
    double *alpha_values;     /* [n_alpha] parsed */
    int n_alpha;
} model_request;

/* What the command line asks for: a real step (rq) or a hand-made one (in). */
typedef struct {
    rs_explain_input in;
    model_request rq;
} explain_request;

/* A matrix option: "1,0;0,1" into its rs_matrix (a second one replaces it). */
static int parse_matrix(const char *prog, const char *opt, const char *arg, void *field)
{
    rs_error err;
    rs_matrix_free(field);
    if (rs_matrix_parse(field, arg, &err) < 0) {
        rs_cli_usage_error(prog, "%s: '%s': %s", opt, arg, err.msg);
        return -1;
    }
    return 0;
}

static int set_score(void *req, const char *arg)
{
    explain_request *x = req;
    const int kind = rs_attention_kind_parse(arg);
    if (kind == RS_ATT_NONE)
        return rs_cli_usage_error(PROG, "--score none: " RS_NO_ALIGNMENT_WHY);
    if (kind < 0)
        return rs_cli_usage_error(
            PROG, "--score: '%s' is not one of additive, general, scaled-dot or dot", arg);
    x->in.score = (rs_attention_kind)kind;
    x->rq.score_given = 1;
    return -1;
}

#define RQ explain_request
#define MATRIX(name, member, ...)                                                                  \
    {                                                                                              \
        name, .kind = RS_CLI_PARSE, RS_AT(RQ, in.member), .parse = parse_matrix, __VA_ARGS__       \
    }
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_STRING, RS_AT(RQ, rq.model), .value = "MODEL",
     .help = "a checkpoint, run directory or model name"},
    {"step", .kind = RS_CLI_INT, RS_AT(RQ, rq.step), 1, 1000000, "I",
     .help = "the step, from 1 (step i reads y_{i-1}, y_0 = <s>; required)"},
    {"target", .kind = RS_CLI_STRING, RS_AT(RQ, rq.target), .value = "TEXT",
     .help = "the prefix y_1 ... y_{i-1} (default: the greedy translation's)"},
    {"attend", .kind = RS_CLI_INT, RS_AT(RQ, rq.attend), -1000000, 1000000, "J",
     .help = "push the attention: step I looks at source position J\n"
             "alone (α_I = one-hot J, positions from 1, </s> last); the\n"
             "context, state and output of step I follow from it, greedy\n"
             "decoding goes on from there, and the translation before\n"
             "and after the push is shown"},
    {"alpha", .kind = RS_CLI_STRING, RS_AT(RQ, rq.alpha), .value = "A1,A2,...",
     .help = "push the attention to the weights given, one per source\n"
             "position (</s> last), each 0 or more, summing to 1; as\n"
             "--attend otherwise"},
    {"top", .kind = RS_CLI_INT, RS_AT(RQ, rq.top), 1, 1000, "K",
     .help = "words shown with their probabilities (default: %D)"},
    {"all", .kind = RS_CLI_FLAG, RS_AT(RQ, rq.all),
     .help = "every vector in full (default: up to 8 entries in full,\n"
             "longer ones abbreviated, with their norm)"},
    {"digits", .kind = RS_CLI_INT, RS_AT(RQ, rq.digits), 0, 17, "N",
     .help = "decimals printed, 0-17 (default: %D)"},
    {.kind = RS_CLI_TEXT,
     .help = "\nWithout a model: a hand-made attention step from the numbers given.\n\n"
             "Works through one attention step and prints every intermediate: the scores,\n"
             "the exponentials and their sum, the softmax weights, the context vector and\n"
             "[query ; context]. One query is shown step by step; several (one per row)\n"
             "in matrix form. Arithmetic is in double precision.\n\n"
             "A matrix M is written row by row: numbers separated by ',', rows by ';',\n"
             "e.g. \"1,0;0,1;1,1\" is three rows of two. A vector is one row: \"1,2\".\n\n"},
    MATRIX("keys", keys, .value = "M", .help = "the keys k_j, one per row (required)"),
    MATRIX("query", query, .value = "M",
           .help = "the query q, or several queries, one per row (required)"),
    MATRIX("values", values, .value = "M",
           .help = "the values v_j, one per key (default: the keys)"),
    {"score", .kind = RS_CLI_CALL, .set = set_score, .value = "S",
     .help = "additive, general, scaled-dot or dot (default: additive,\n"
             "the models' score)\n"
             "  dot         e_j = q . k_j\n"
             "  scaled-dot  e_j = q . k_j / sqrt(dk)\n"
             "  general     e_j = q^T W k_j      with --weights W (dq x dk)\n"
             "  additive    e_j = v . tanh(Wq q + Wk k_j + b)\n"
             "              with --Wq (a x dq), --Wk (a x dk), --v (a numbers)\n"
             "              and optionally --b (a numbers; default 0)"},
    {"scale", .kind = RS_CLI_FLAG, RS_AT(RQ, in.scale),
     .help = "also divide the scores by sqrt(dk), dk = key size (default: off;\n"
             "scaled-dot is dot with --scale)"},
    MATRIX("mask", mask, .value = "M",
           .help = "1 keeps a key, 0 hides it (its weight is exactly 0): one row\n"
                   "for all queries or one row per query (default: keep all)"),
    MATRIX("weights", W, .value = "M", .help = "W for the general score"),
    MATRIX("Wq", Wq, .label = "--Wq M, --Wk M, --v V, --b V ",
           .help = "the additive score's parameters"),
    MATRIX("Wk", Wk),
    MATRIX("v", v),
    MATRIX("b", b),
    MATRIX("Co", Co, .label = "--Co M, --Uo M, --Vo M, --bo V",
           .help = "the deep output's weights (docs/model.md):\n"
                   "t~ = U_o s + V_o e + C_o c + b_o (2l rows each), then maxout\n"
                   "t[k] = max(t~[2k], t~[2k+1]); terms not given are left out"),
    MATRIX("Uo", Uo),
    MATRIX("Vo", Vo),
    MATRIX("bo", bo),
    MATRIX("state", state, .value = "M",
           .help = "s, the new decoder state U_o reads (default: the query)"),
    MATRIX("emb", emb, .value = "M", .help = "e, the previous word's embedding V_o reads"),
    /* --digits again: it prints both kinds of step. */
    {.kind = RS_CLI_TEXT, .label = "--digits N", .help = "decimals printed, 0-17 (default: 4)"},
    {"help", 'h', RS_CLI_HELP, .help = "this text"},
    {0},
};
#undef MATRIX
#undef RQ

static const rs_cli_command command = {
    "explain",
    PROG,
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
    "\n",
    "\n"
    "Matrices map column vectors (y = W x) and are given row by row, as in\n"
    "docs/model.md. Before exp, each query's largest visible score m is\n"
    "subtracted: the weights are unchanged and exp cannot overflow.\n"
    "\n"
    "example: rnnsearch explain --score dot --keys \"1,0;0,1;1,1\" --query \"1,2\"\n"
    "  scores (1, 2, 3), weights (0.0900, 0.2447, 0.6652), context (0.7553, 0.9100)\n",
    18,
    sizeof(explain_request),
    option_table};

/* --alpha's list "0.1,0.9" into rq->alpha_values; -1 to go on, else the exit
 * status. */
static int parse_alpha(model_request *rq)
{
    const char *p = rq->alpha;
    int count = 1;
    for (const char *q = p; *q; q++)
        count += *q == ',';
    if (!(rq->alpha_values = calloc((size_t)count, sizeof *rq->alpha_values)))
        return rs_cli_usage_error(PROG, "out of memory");
    for (int k = 0; k < count; k++) {
        char *end;
        errno = 0;
        rq->alpha_values[k] = strtod(p, &end);
        if (end == p || errno || (*end && *end != ','))
            return rs_cli_usage_error(PROG,
                                      "--alpha '%s': value %d is not a number (weights separated "
                                      "by commas: 0.1,0.9)",
                                      rq->alpha, k + 1);
        p = end + (*end == ',');
    }
    rq->n_alpha = count;
    return -1;
}

/* Whether a hand-made step's option was given (a matrix, or --scale). */
static int toy_given(const rs_cli_args *args)
{
    for (const rs_cli_option *o = option_table; o->kind != RS_CLI_END; o++)
        if ((o->kind == RS_CLI_PARSE || !strcmp(o->name ? o->name : "", "scale")) &&
            rs_cli_given(args, o->name))
            return 1;
    return 0;
}

/* Parses and checks the options into x; -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, explain_request *x)
{
    rs_explain_input *in = &x->in;
    model_request *rq = &x->rq;
    rs_error err;
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, x, &args, argc, argv);
    const int toy = toy_given(&args);
    rq->attend_given = rs_cli_given(&args, "attend") != NULL;
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    /* rs_cli_next stores --step itself, from 1: 0 is "not given" */
    const int step_given = rq->step > 0;
    if (rq->model) {
        if (toy || rq->score_given)
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
        return rq->alpha ? parse_alpha(rq) : -1;
    }
    if (step_given || rq->target || rq->all || rq->attend_given || rq->alpha)
        return rs_cli_usage_error(PROG, "--step, --target, --all, --attend and --alpha explain a "
                                        "model's step: give -m MODEL");
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
    rs_ready model;
    rs_codec codec;
    rs_error err;
    memset(&model, 0, sizeof model);
    memset(&codec, 0, sizeof codec);
    if (rs_cli_load_model(rq->model, &model, &codec, &err))
        return rs_cli_fail(PROG, "%s", err.msg);
    rs_explained_step x;
    char *text = NULL;
    int status;
    const rs_explain_step_request srq = {rq->sentence,     rq->target, rq->step,
                                         rq->attend_given, rq->attend, rq->alpha_values,
                                         rq->n_alpha,      0};
    if (rs_explain_step_compute(&x, &model, &codec, &srq, &err) < 0) {
        /* what is wrong is the request (the step, the model's kind) */
        status = rs_cli_usage_error(PROG, "%s", err.msg);
    } else if (rs_explain_step_report(&x, model.model, rq->digits, rq->all ? -1 : 8, rq->top, &text,
                                      &err) < 0) {
        status = rs_cli_fail(PROG, "%s", err.msg);
    } else {
        status = print_explanation(text);
    }
    free(text);
    rs_explained_step_free(&x);
    rs_codec_free(&codec);
    rs_ready_free(&model);
    return status;
}

int cmd_explain(int argc, char **argv)
{
    explain_request x = {.rq = {.top = 5, .digits = 4}};
    rs_explain_input in_ = {0}, *const in = &x.in;
    *in = in_;
    in->score = RS_ATT_ADDITIVE; /* the models' score (docs/model.md) */
    const model_request *rq = &x.rq;
    int status = parse_request(argc, argv, &x);
    if (status >= 0 || rq->model) {
        rs_explain_input_free(in);
        if (status < 0)
            status = explain_model(rq);
        free(x.rq.alpha_values);
        return status;
    }
    const int digits = rq->digits;
    rs_error err;
    rs_explain_result res;
    char *text = NULL;
    if (rs_explain_compute(&res, in, &err) < 0 ||
        rs_explain_report(in, &res, digits, &text, &err) < 0) {
        status = rs_cli_fail(PROG, "%s", err.msg);
    } else {
        status = print_explanation(text);
    }
    free(text);
    rs_explain_result_free(&res);
    rs_explain_input_free(in);
    return status;
}
