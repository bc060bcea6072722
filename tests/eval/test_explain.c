/* The attention walk-through: known answers computed by hand, the printed
 * report, and bad input. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/explain.h"
#include "testdir.h"
#include "testprog.h"

static void parse(rs_matrix *m, const char *text)
{
    rs_error err = {{0}};
    ck_assert_msg(rs_matrix_parse(m, text, &err) == 0, "\"%s\": %s", text, err.msg);
}

/* keys (1,0),(0,1),(1,1), query (1,2), dot: scores (1,2,3). */
static void known_input(rs_explain_input *in)
{
    memset(in, 0, sizeof *in);
    in->score = RS_ATT_DOT;
    parse(&in->keys, "1,0;0,1;1,1");
    parse(&in->query, "1,2");
}

static void compute(rs_explain_result *res, const rs_explain_input *in)
{
    rs_error err = {{0}};
    ck_assert_msg(rs_explain_compute(res, in, &err) == 0, "%s", err.msg);
}

START_TEST(test_parse)
{
    rs_matrix m;
    parse(&m, " 1, -2.5 ;3e1,4 ");
    ck_assert_int_eq(m.rows, 2);
    ck_assert_int_eq(m.cols, 2);
    ck_assert_double_eq(m.v[1], -2.5);
    ck_assert_double_eq(m.v[2], 30.0);
    rs_matrix_free(&m);

    rs_error err = {{0}};
    ck_assert_int_eq(rs_matrix_parse(&m, "1,0;0,1,2", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "row 2 has 3 numbers but row 1 has 2"));
    ck_assert_ptr_null(m.v);
    ck_assert_int_eq(rs_matrix_parse(&m, "1,abc", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "'abc'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a number"));
    ck_assert_int_eq(rs_matrix_parse(&m, "1,2x", &err), -1);
    ck_assert_int_eq(rs_matrix_parse(&m, "1,,2", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "missing"));
    ck_assert_int_eq(rs_matrix_parse(&m, "1;", &err), -1);
    ck_assert_int_eq(rs_matrix_parse(&m, "", &err), -1);
    ck_assert_int_eq(rs_matrix_parse(&m, "nan", &err), -1);
    ck_assert_int_eq(rs_matrix_parse(&m, "1,inf", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "finite"));
}
END_TEST

START_TEST(test_known_answer)
{
    rs_explain_input in;
    rs_explain_result res;
    known_input(&in);
    compute(&res, &in);
    for (int j = 0; j < 3; j++)
        ck_assert_double_eq(res.scores[j], j + 1.0);
    double s = exp(1.0) + exp(2.0) + exp(3.0);
    const double want[3] = {0.0900, 0.2447, 0.6652};
    for (int j = 0; j < 3; j++) {
        ck_assert_double_eq_tol(res.weights[j], exp(j + 1.0) / s, 1e-15);
        ck_assert_double_eq_tol(res.weights[j], want[j], 0.5e-4);
    }
    /* the shifted exponentials and their sum: exp(e_j - 3) */
    ck_assert_double_eq(res.max[0], 3.0);
    ck_assert_double_eq_tol(res.exps[0], exp(-2.0), 1e-15);
    ck_assert_double_eq_tol(res.sums[0], exp(-2.0) + exp(-1.0) + 1.0, 1e-15);
    ck_assert_double_eq_tol(res.context[0], 0.7553, 0.5e-4);
    ck_assert_double_eq_tol(res.context[1], 0.9100, 0.5e-4);
    ck_assert_double_eq_tol(res.context[0], res.weights[0] + res.weights[2], 1e-15);
    ck_assert_int_eq(res.l, 0); /* no deep output asked for, none computed */
    ck_assert_ptr_null(res.tpre);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
}
END_TEST

START_TEST(test_softmax_15211)
{
    /* one-dimensional keys 1,5,2,1,1 and query 1: the scores are the keys */
    rs_explain_input in;
    rs_explain_result res;
    memset(&in, 0, sizeof in);
    in.score = RS_ATT_DOT;
    parse(&in.keys, "1;5;2;1;1");
    parse(&in.query, "1");
    compute(&res, &in);
    const double want[5] = {0.0166, 0.9052, 0.0451, 0.0166, 0.0166};
    double sum = 0.0;
    for (int j = 0; j < 5; j++) {
        ck_assert_double_eq_tol(res.weights[j], want[j], 0.5e-4);
        sum += res.weights[j];
    }
    ck_assert_double_eq_tol(sum, 1.0, 1e-15);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
}
END_TEST

START_TEST(test_mask_and_scale)
{
    rs_explain_input in;
    rs_explain_result res;
    known_input(&in);
    parse(&in.mask, "1,0,1");
    compute(&res, &in);
    /* a hidden key gets exactly 0 and the others share the weight */
    ck_assert(res.weights[1] == 0.0);
    ck_assert(res.exps[1] == 0.0);
    ck_assert(isinf(res.scores[1]) && res.scores[1] < 0);
    ck_assert_double_eq_tol(res.weights[0], exp(1.0) / (exp(1.0) + exp(3.0)), 1e-15);
    ck_assert_double_eq_tol(res.weights[0] + res.weights[2], 1.0, 1e-15);
    rs_explain_result_free(&res);

    /* --scale divides by sqrt(dk); scaled-dot is the same thing */
    rs_matrix_free(&in.mask);
    in.scale = 1;
    compute(&res, &in);
    for (int j = 0; j < 3; j++)
        ck_assert_double_eq_tol(res.scores[j], (j + 1.0) / sqrt(2.0), 1e-15);
    double w0 = res.weights[0];
    rs_explain_result_free(&res);
    in.scale = 0;
    in.score = RS_ATT_SCALED_DOT;
    compute(&res, &in);
    ck_assert_double_eq(res.weights[0], w0);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
}
END_TEST

START_TEST(test_general_and_additive)
{
    rs_explain_input in;
    rs_explain_result res;
    known_input(&in);
    in.score = RS_ATT_GENERAL;
    /* q^T W = (1, 4), so the scores are (1, 4, 5) */
    parse(&in.W, "1,0;0,2");
    compute(&res, &in);
    ck_assert_double_eq(res.scores[0], 1.0);
    ck_assert_double_eq(res.scores[1], 4.0);
    ck_assert_double_eq(res.scores[2], 5.0);
    rs_explain_result_free(&res);
    rs_matrix_free(&in.W);

    /* Wq = Wk = I, v = (1, 1): e_j = tanh(q_1 + k_j1) + tanh(q_2 + k_j2) */
    in.score = RS_ATT_ADDITIVE;
    parse(&in.Wq, "1,0;0,1");
    parse(&in.Wk, "1,0;0,1");
    parse(&in.v, "1,1");
    compute(&res, &in);
    ck_assert_double_eq_tol(res.scores[0], tanh(2.0) + tanh(2.0), 1e-15);
    ck_assert_double_eq_tol(res.scores[1], tanh(1.0) + tanh(3.0), 1e-15);
    ck_assert_double_eq_tol(res.scores[2], tanh(2.0) + tanh(3.0), 1e-15);
    rs_explain_result_free(&res);
    /* a bias adds to Wq q before tanh; v may be given as a column */
    rs_matrix_free(&in.v);
    parse(&in.v, "1;1");
    parse(&in.b, "-1,0.5");
    compute(&res, &in);
    ck_assert_double_eq_tol(res.scores[0], tanh(1.0) + tanh(2.5), 1e-15);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
}
END_TEST

START_TEST(test_several_queries)
{
    rs_explain_input in;
    rs_explain_result res;
    known_input(&in);
    rs_matrix_free(&in.query);
    parse(&in.query, "1,2;0,1");
    parse(&in.values, "1,2,3;4,5,6;7,8,9");
    compute(&res, &in);
    /* row 1 is the known answer, row 2 has scores (0, 1, 1) */
    ck_assert_double_eq_tol(res.weights[0], 0.0900, 0.5e-4);
    double s = 1.0 + 2.0 * exp(1.0);
    ck_assert_double_eq_tol(res.weights[3], 1.0 / s, 1e-15);
    ck_assert_double_eq_tol(res.weights[4], exp(1.0) / s, 1e-15);
    ck_assert_double_eq_tol(res.context[3], (1.0 + 4.0 * exp(1.0) + 7.0 * exp(1.0)) / s, 1e-14);
    ck_assert_int_eq(res.dv, 3);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
}
END_TEST

START_TEST(test_bad_input)
{
    rs_explain_input in;
    rs_explain_result res;
    rs_error err = {{0}};
    known_input(&in);
    rs_matrix_free(&in.query);
    parse(&in.query, "1,2,3");
    ck_assert_int_eq(rs_explain_compute(&res, &in, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "one size"));
    rs_matrix_free(&in.query);
    parse(&in.query, "1,2");

    parse(&in.mask, "0,0,0");
    ck_assert_int_eq(rs_explain_check(&in, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "hides every key"));
    rs_matrix_free(&in.mask);
    parse(&in.mask, "1,0");
    ck_assert_int_eq(rs_explain_check(&in, &err), -1);
    rs_matrix_free(&in.mask);
    parse(&in.mask, "1,0.5,1");
    ck_assert_int_eq(rs_explain_check(&in, &err), -1);
    rs_matrix_free(&in.mask);

    parse(&in.values, "1;2");
    ck_assert_int_eq(rs_explain_check(&in, &err), -1);
    rs_matrix_free(&in.values);

    in.score = RS_ATT_GENERAL;
    ck_assert_int_eq(rs_explain_check(&in, &err), -1);
    parse(&in.W, "1,0,0;0,1,0");
    ck_assert_int_eq(rs_explain_check(&in, &err), -1);
    in.score = RS_ATT_DOT;
    ck_assert_int_eq(rs_explain_check(&in, &err), -1); /* W given to dot */
    rs_matrix_free(&in.W);
    in.score = RS_ATT_ADDITIVE;
    parse(&in.Wq, "1,0;0,1");
    parse(&in.Wk, "1,0");
    parse(&in.v, "1,1");
    ck_assert_int_eq(rs_explain_check(&in, &err), -1);
    ck_assert_int_eq(rs_attention_kind_parse("cosine"), -1);
    ck_assert_int_eq(rs_attention_kind_parse("scaled-dot"), RS_ATT_SCALED_DOT);
    rs_explain_input_free(&in);
}
END_TEST

START_TEST(test_report)
{
    rs_explain_input in;
    rs_explain_result res;
    rs_error err = {{0}};
    char *text;
    known_input(&in);
    compute(&res, &in);
    ck_assert_int_eq(rs_explain_report(&in, &res, 4, &text, &err), 0);
    const char *want[] = {"e_3 = 1.0000*1.0000 + 2.0000*1.0000 = 3.0000",
                          "exp(-2.0000) = 0.1353",
                          "sum s = 0.1353 + 0.3679 + 1.0000 = 1.5032",
                          "a_1 = 0.1353 / 1.5032 = 0.0900",
                          "weights a = (0.0900, 0.2447, 0.6652)",
                          "= (0.7553, 0.9100)",
                          "5. deep output",
                          "not computed: give --Co"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(text, want[i]), "missing \"%s\" in:\n%s", want[i], text);
    free(text);
    ck_assert_int_eq(rs_explain_report(&in, &res, 2, &text, &err), 0);
    ck_assert_ptr_nonnull(strstr(text, "weights a = (0.09, 0.24, 0.67)"));
    free(text);
    rs_explain_result_free(&res);

    /* several queries: matrix form */
    rs_matrix_free(&in.query);
    parse(&in.query, "1,2;0,1");
    compute(&res, &in);
    ck_assert_int_eq(rs_explain_report(&in, &res, 4, &text, &err), 0);
    ck_assert_msg(strstr(text, "S = Q K^T") && strstr(text, "0.0900  0.2447  0.6652") &&
                      strstr(text, "0.1554  0.4223  0.4223"),
                  "%s", text);
    free(text);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
}
END_TEST

/* Numbers near the ends of double precision (found by an outside attack):
 * a key of 1e70 is shown as 1.0000e+70, not cut to 63 digits, and inputs
 * whose scores overflow are refused instead of giving weights that are not
 * numbers. */
START_TEST(test_extreme_numbers)
{
    rs_explain_input in;
    rs_explain_result res;
    rs_error err = {{0}};
    char *text;
    memset(&in, 0, sizeof in);
    in.score = RS_ATT_DOT;
    parse(&in.keys, "1e70,0");
    parse(&in.query, "1,0");
    compute(&res, &in);
    ck_assert_int_eq(rs_explain_report(&in, &res, 4, &text, &err), 0);
    ck_assert_msg(strstr(text, "k_1 = (1.0000e+70, 0.0000)") && !strstr(text, "00000000000000"),
                  "%s", text);
    free(text);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
    memset(&in, 0, sizeof in);
    in.score = RS_ATT_DOT;
    parse(&in.keys, "1e200,1e200");
    parse(&in.query, "1e200,1e200");
    ck_assert_int_eq(rs_explain_compute(&res, &in, &err), -1);
    ck_assert_msg(strstr(err.msg, "overflow"), "%s", err.msg);
    rs_explain_result_free(&res);
    rs_explain_input_free(&in);
}
END_TEST

/* ---- the command, through the program ($RNNSEARCH, as `make check` sets) -- */

/* Runs `program explain ARGS`; returns the exit status, output in *out, *errs. */
static int run_explain(const char *args, char **out, char **errs)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "explain %s", args);
    int rc = testprog_run_split(cmd, out, errs);
    ck_assert_msg(!strstr(*errs, "unknown command"),
                  "%s has no 'explain' command: src/cmd/main.c must dispatch it to cmd_explain",
                  testprog_path());
    return rc;
}

START_TEST(test_command)
{
    char *out, *errs;
    ck_assert_int_eq(run_explain("--score dot --keys '1,0;0,1;1,1' --query '1,2'", &out, &errs), 0);
    const char *want[] = {"0.0900", "0.2447", "0.6652", "(0.7553, 0.9100)", "5. deep output"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(out, want[i]), "missing \"%s\" in:\n%s", want[i], out);
    ck_assert_msg(!strstr(out, "[q ; c] ="), "%s", out); /* Luong's output is not the model's */
    free(out), free(errs);

    /* the deep output of model.md: t~ = C_o c + b_o, maxout of pairs */
    ck_assert_int_eq(run_explain("--score dot --keys '1,0;0,1;1,1' --query '1,2' "
                                 "--Co '1,0;0,1;1,1;0,0' --bo '0,0,0,1'",
                                 &out, &errs),
                     0);
    ck_assert_msg(strstr(out, "t~ = (0.7553, 0.9100, 1.6652, 1.0000)") &&
                      strstr(out, "t  = (0.9100, 1.6652)"),
                  "%s", out);
    free(out), free(errs);

    ck_assert_int_eq(run_explain("--score dot --keys '1;5;2;1;1' --query 1", &out, &errs), 0);
    ck_assert_ptr_nonnull(strstr(out, "(0.0166, 0.9052, 0.0451, 0.0166, 0.0166)"));
    free(out), free(errs);

    ck_assert_int_eq(
        run_explain("--score=dot --keys='1,0;0,1;1,1' --query='1,2;0,1' --digits 3", &out, &errs),
        0);
    ck_assert_ptr_nonnull(strstr(out, "0.090  0.245  0.665"));
    free(out), free(errs);

    /* bad input: exit 2 and a message naming the problem */
    const struct {
        const char *args, *msg;
    } bad[] = {
        {"--keys '1,0;0,1,2' --query '1,2'", "row 2 has 3 numbers"},
        {"--keys '1,0;0,one' --query '1,2'", "not a number"},
        {"--score dot --keys '1,0;0,1' --query '1,2,3'", "one size"},
        {"--score dot --keys '1,0;0,1' --query '1,2' --mask '0,0'", "hides every key"},
        {"--keys '1,0;0,1' --query '1,2' --score general", "needs the weights"},
        {"--keys '1,0;0,1' --query '1,2' --score cosine", "--score"},
        {"--keys '1,0;0,1'", "required"},
        {"--keys '1,0;0,1' --query '1,2' --bogus", "unknown option"},
        {"--keys '1,0;0,1' --query '1,2'", "default score is additive"},
        {"--score dot --keys '1,0;0,1' --query '1,2' --Co '1,0;0,1;1,1'", "even"},
        {"--score dot --keys '1,0;0,1' --query '1,2' --Co '1,0,0;0,1,0'", "columns"},
        {"--score dot --keys '1,0;0,1' --query '1,2' --bo '1,2'", "deep output"},
        {"--score dot --keys '1,0;0,1' --query '1,2' --step 1", "give -m MODEL"},
        {"-m nowhere --keys '1,0' --query 1 'a b'", "hand-made step"},
        {"-m nowhere", "needs the sentence"},
        {"-m nowhere 'a b'", "--step is required"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(run_explain(bad[i].args, &out, &errs) == 2, "%s", bad[i].args);
        ck_assert_msg(strstr(errs, "rnnsearch explain: ") && strstr(errs, bad[i].msg),
                      "%s: stderr was %s", bad[i].args, errs);
        ck_assert_str_eq(out, "");
        free(out), free(errs);
    }

    ck_assert_int_eq(run_explain("--help", &out, &errs), 0);
    ck_assert_ptr_nonnull(strstr(out, "default: additive"));
    ck_assert_ptr_nonnull(strstr(out, "default: 4"));
    free(out), free(errs);
}
END_TEST

/* Reads the i-th number (0-based) of the first JSON array after `key` in
 * text; the alignment's rows are nested arrays, so row r entry j is the
 * (r·cols + j)-th number after "alignment". */
static double json_number(const char *text, const char *key, int index)
{
    const char *p = strstr(text, key);
    ck_assert_ptr_nonnull(p);
    p += strlen(key);
    for (int k = 0;; k++) {
        p += strcspn(p, "-0123456789");
        char *end;
        double x = strtod(p, &end);
        ck_assert(end != p);
        if (k == index)
            return x;
        p = end;
    }
}

/* explain -m on a trained tiny model: at every step of the greedy
 * translation, the weights α it works out (in double precision from the
 * model's weights) are align's (the model's float32 step) to 1e-6, and the
 * word it puts first is the translation's word at that step. */
START_TEST(test_model_step_matches_align)
{
    char dir[64], path[128], args[1024];
    static char text[65536];
    testdir_make(dir, "rnnsearch-explain");
    snprintf(path, sizeof path, "%s/train.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 20; i++)
        fputs("das haus ist gross\tthe house is big\nein kleines haus\ta small house\n"
              "das haus\tthe house\n",
              f);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(args, sizeof args,
             "train --train %s --out %s/m --tokenizer space --epochs 40 --batch-size 6 --emb 8 "
             "--hidden 8 --att 6 --maxout 4 --lr 0.02 --threads 1 --quiet 2>&1",
             path, dir);
    ck_assert_msg(testprog_run(args, text, sizeof text) == 0, "%s", text);
    const char *sentence = "das haus ist gross";
    snprintf(args, sizeof args, "align -m %s/m --format json <<'EOF'\n%s\nEOF", dir, sentence);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    static char aligned[65536];
    memcpy(aligned, text, sizeof aligned);
    /* "target":["the","house",…,"</s>"]: T + 1 labels, one a step */
    char *tgt = strstr(aligned, "\"target\":[");
    ck_assert_ptr_nonnull(tgt);
    char words[16][64];
    int steps = 0;
    for (char *p = tgt + 10; *p != ']' && steps < 16; steps++) {
        char *q = strchr(p + 1, '"');
        snprintf(words[steps], sizeof words[steps], "%.*s", (int)(q - p - 1), p + 1);
        p = q + 1;
        if (*p == ',')
            p++;
    }
    ck_assert_int_ge(steps, 2);
    ck_assert_str_eq(words[steps - 1], "</s>");
    const int cols = 5; /* four words and </s> */
    for (int i = 1; i <= steps; i++) {
        char *out, *errs;
        snprintf(args, sizeof args, "-m %s/m '%s' --step %d --digits 9 --top 3", dir, sentence, i);
        ck_assert_msg(run_explain(args, &out, &errs) == 0, "%s", errs);
        const char *row = strstr(out, "(model's float32 α)\n");
        ck_assert_ptr_nonnull(row);
        row = strchr(row, '\n') + 1;
        for (int j = 0; j < cols; j++) {
            int pos;
            char token[64];
            double e, x, alpha;
            ck_assert_int_eq(sscanf(row, "%d %63s %lf %lf %lf", &pos, token, &e, &x, &alpha), 5);
            ck_assert_int_eq(pos, j + 1);
            const double want = json_number(aligned, "\"alignment\":", (i - 1) * cols + j);
            ck_assert_msg(fabs(alpha - want) <= 1e-6, "step %d, j %d: explain %.9f, align %.9f", i,
                          j + 1, alpha, want);
            row = strchr(row, '\n') + 1;
        }
        char first[64], greedy[64];
        const char *top = strstr(out, "\n    1. ");
        ck_assert_ptr_nonnull(top);
        ck_assert_int_eq(sscanf(top, " 1. %63s", first), 1);
        ck_assert_msg(!strcmp(first, words[i - 1]), "step %d: top word %s, translation's %s", i,
                      first, words[i - 1]);
        const char *g = strstr(out, "greedy search takes: ");
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(sscanf(g, "greedy search takes: %63[^;]", greedy), 1);
        ck_assert_str_eq(greedy, words[i - 1]);
        /* the step is the model's: its float32 state agrees with the double one */
        const char *d = strstr(out, "largest |s_i − the model's float32 s_i| = ");
        ck_assert_ptr_nonnull(d);
        ck_assert_double_lt(strtod(d + strlen("largest |s_i − the model's float32 s_i| = "), NULL),
                            1e-5);
        free(out), free(errs);
    }
    /* a step past the translation's </s>, a target prefix, a bad step */
    char *out, *errs;
    snprintf(args, sizeof args, "-m %s/m '%s' --step %d", dir, sentence, steps + 1);
    ck_assert_int_eq(run_explain(args, &out, &errs), 2);
    ck_assert_msg(strstr(errs, "so steps 1 to"), "%s", errs);
    free(out), free(errs);
    snprintf(args, sizeof args, "-m %s/m '%s' --step 2 --target 'a small house'", dir, sentence);
    ck_assert_int_eq(run_explain(args, &out, &errs), 0);
    ck_assert_msg(strstr(out, "y_1 = a") && strstr(out, "the prefix's y_2: small"), "%s", out);
    free(out), free(errs);
    snprintf(args, sizeof args, "-m %s/m '%s' --step 0", dir, sentence);
    ck_assert_int_eq(run_explain(args, &out, &errs), 2);
    free(out), free(errs);
    testdir_remove(dir);
}
END_TEST

Suite *explain_suite(void)
{
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("attention");
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_known_answer);
    tcase_add_test(tc, test_softmax_15211);
    tcase_add_test(tc, test_mask_and_scale);
    tcase_add_test(tc, test_general_and_additive);
    tcase_add_test(tc, test_several_queries);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_report);
    tcase_add_test(tc, test_extreme_numbers);
    suite_add_tcase(s, tc);
    TCase *cmd = tcase_create("command");
    tcase_set_timeout(cmd, 30);
    tcase_add_test(cmd, test_command);
    TCase *model = tcase_create("model");
    tcase_set_timeout(model, 120);
    tcase_add_test(model, test_model_step_matches_align);
    suite_add_tcase(s, model);
    suite_add_tcase(s, cmd);
    return s;
}
