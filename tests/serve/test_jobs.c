/* The decoding workers (serve/jobs.c): their answers equal what the
 * translation pipeline and forced decoding give (a batch what its sentences
 * give alone, align with the length rule of score, pieces merged into words
 * as `align --words` does, a model without attention), and concurrent
 * clients get correct answers or 503. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "search/forced.h"
#include "common/json.h"
#include "serve/serve.h"
#include "serve/run.h"
#include "serveclient.h"
#include "testdir.h"
#include "testnetns.h"
#include "testprog.h"
#include "testskip.h"
#include "search/translate.h"

/* rows × cols weights of an alignment record equal w (9 digits: float-exact). */
static void expect_matrix(const rs_json *record, const float *w, int rows, int cols)
{
    const rs_json *m = rs_json_get(record, "alignment");
    ck_assert(m && m->type == RS_JSON_ARRAY && m->count == (size_t)rows);
    for (int i = 0; i < rows; i++) {
        const rs_json *row = item(m, (size_t)i);
        ck_assert_int_eq(row->count, cols);
        for (int j = 0; j < cols; j++)
            ck_assert_float_eq((float)item(row, (size_t)j)->number, w[i * cols + j]);
    }
}

START_TEST(answers_equal_the_pipeline)
{
    rs_server *s = start(2, 8, 10);
    int port = rs_server_port(s);
    answer *a = &answers[0];

    /* What the pipeline itself gives, beam 4, 3 best. */
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.beam = 4;
    opt.n_best = 3;
    opt.batch_size = 1;
    opt.want_alignment = 1;
    const rs_ready *models[1] = {&model_ready};
    rs_translator tr;
    rs_translated t;
    rs_error err;
    ck_assert_msg(rs_translator_init(&tr, models, 1, &codec, &opt, &err) == 0, "%s", err.msg);
    ck_assert_msg(rs_translate_lines(&tr, 1, &sentence, &t, &err) == 0, "%s", err.msg);

    char body[512];
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 4, \"n_best\": 3, \"svg\": true}",
             sentence);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    ck_assert_ptr_nonnull(strstr(a->text, "Content-Type: application/json"));
    rs_json *j = json_of(a);
    ck_assert_str_eq(str(j, "model"), "reorder");
    ck_assert_str_eq(str(j, "translation"), t.hyps[0].text);
    const rs_json *src = rs_json_get(j, "source_tokens");
    ck_assert_int_eq(src->count, t.source_count);
    for (int k = 0; k < t.source_count; k++)
        ck_assert_str_eq(item(src, (size_t)k)->string, t.source_tokens[k]);
    const rs_json *hyps = rs_json_get(j, "hypotheses");
    ck_assert_int_eq(hyps->count, t.count);
    ck_assert_int_eq(t.count, 3);
    for (int k = 0; k < t.count; k++) {
        const rs_json *h = item(hyps, (size_t)k);
        const rs_hypothesis *want = &t.hyps[k];
        ck_assert_str_eq(str(h, "translation"), want->text);
        ck_assert_double_eq_tol(num(h, "score"), want->score, 1e-6 * fmax(1.0, fabs(want->score)));
        ck_assert_double_eq_tol(num(h, "logprob"), want->logprob,
                                1e-6 * fmax(1.0, fabs(want->logprob)));
        const rs_json *tokens = rs_json_get(h, "tokens");
        ck_assert_int_eq(tokens->count, want->count);
        for (int i = 0; i < want->count; i++)
            ck_assert_str_eq(item(tokens, (size_t)i)->string, want->tokens[i]);
        const rs_json *al = rs_json_get(h, "alignment");
        ck_assert_int_eq(rs_json_get(al, "source")->count, t.source_count + 1);
        ck_assert_int_eq(rs_json_get(al, "target")->count, want->count + 1);
        expect_matrix(al, want->alignment, want->count + 1, t.source_count + 1);
        const char *svg = str(h, "svg");
        ck_assert_ptr_nonnull(strstr(svg, "<svg"));
        ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
    }
    rs_json_free(j);
    rs_translated_free(&t);
    rs_translator_free(&tr);

    /* The second model by name, greedy: n_best defaults to the beam. */
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"model\": \"second\"}", sentence);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    j = json_of(a);
    ck_assert_str_eq(str(j, "model"), "second");
    ck_assert_int_eq(rs_json_get(j, "hypotheses")->count, 1);
    ck_assert_ptr_null(rs_json_get(item(rs_json_get(j, "hypotheses"), 0), "svg"));
    rs_json_free(j);

    /* Forced alignment of a given target equals forced decoding's. */
    const char *target = "ka vidat lehro";
    rs_forced f;
    rs_tokens st = {0}, tt = {0};
    const rs_forced_pair pair = {sentence, target, RS_MAX_SRC_LEN,
                                 RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT};
    ck_assert_msg(rs_forced_text(models, 1, &codec, &pair, &f, &st, &tt, &err) == 0, "%s", err.msg);
    snprintf(body, sizeof body, "{\"source\": \"%s\", \"target\": \"%s\"}", sentence, target);
    request(port, "POST", "/api/align", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    j = json_of(a);
    ck_assert_double_eq_tol(num(j, "logprob"), f.logprob, 1e-6 * fmax(1.0, fabs(f.logprob)));
    ck_assert_int_eq(rs_json_get(j, "target_tokens")->count, f.tgt_len);
    ck_assert_int_eq(rs_json_get(j, "token_logprobs")->count, f.tgt_len + 1);
    expect_matrix(rs_json_get(j, "alignment"), f.alignment, f.tgt_len + 1, f.src_len + 1);
    rs_json_free(j);
    /* 'text', as /api/translate names the source, gives the same answer
     * (but for "ms", the time the request took, which ends the object). */
    char *same = strdup(a->body);
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"target\": \"%s\"}", sentence, target);
    request(port, "POST", "/api/align", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    const char *ms_same = strstr(same, ",\"ms\":"), *ms_got = strstr(a->body, ",\"ms\":");
    ck_assert(ms_same && ms_got);
    ck_assert_msg(ms_same - same == ms_got - a->body &&
                      !strncmp(a->body, same, (size_t)(ms_same - same)),
                  "%s\n%s", a->body, same);
    free(same);
    rs_forced_free(&f);
    rs_tokens_free(&st);
    rs_tokens_free(&tt);

    /* The models and their configuration. */
    request(port, "GET", "/api/models", NULL, a);
    ck_assert_int_eq(a->status, 200);
    j = json_of(a);
    const rs_json *list = rs_json_get(j, "models");
    ck_assert_int_eq(list->count, 2);
    ck_assert_str_eq(str(item(list, 0), "name"), "reorder");
    ck_assert_int_eq(rs_json_get(item(list, 0), "default")->type, RS_JSON_TRUE);
    const rs_json *cfg = rs_json_get(item(list, 0), "config");
    ck_assert_int_eq((int)num(cfg, "hidden"), model.cfg.hidden);
    ck_assert_str_eq(str(cfg, "attention"), rs_attention_names[model.cfg.attention]);
    ck_assert_str_eq(str(cfg, "tokenizer"), "word");
    ck_assert_int_eq((int)num(rs_json_get(j, "limits"), "max_chars"), 200);
    rs_json_free(j);

    /* The page: one self-contained document, nothing fetched from elsewhere. */
    request(port, "GET", "/", NULL, a);
    ck_assert_int_eq(a->status, 200);
    ck_assert_ptr_nonnull(strstr(a->text, "Content-Type: text/html"));
    ck_assert_ptr_nonnull(strstr(a->text, "Content-Security-Policy: default-src 'none'"));
    ck_assert_ptr_nonnull(strstr(a->body, "<!DOCTYPE html>"));
    ck_assert_ptr_nonnull(strstr(a->body, "/api/translate"));
    ck_assert_ptr_null(strstr(a->body, "<script src"));
    ck_assert_ptr_null(strstr(a->body, "stylesheet"));
    ck_assert_ptr_null(strstr(a->body, "src=\""));
    ck_assert_ptr_null(strstr(a->body, "@import"));
    ck_assert_ptr_null(strstr(a->body, "https:"));
    rs_server_stop(s);
}
END_TEST

/* /api/align applies the length rule of translate and score: a source over
 * max_src_len tokens is cut, and the answer says by how many. */
START_TEST(align_cuts_long_sources_as_score_does)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_chars = 4000;
    opt.max_body = 1 << 16;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    static char body[1 << 14], source[1 << 13];
    source[0] = '\0';
    for (int k = 0; k < RS_MAX_SRC_LEN + 20; k++)
        strcat(source, k ? " horse" : "horse");
    snprintf(body, sizeof body, "{\"source\": \"%s\", \"target\": \"ka\"}", source);
    request(port, "POST", "/api/align", body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_int_eq(rs_json_get(j, "source_tokens")->count, RS_MAX_SRC_LEN);
    ck_assert_double_eq(num(j, "truncated"), 20);
    /* The log-probability is score's for the same pair. */
    const rs_ready *models[1] = {&model_ready};
    const rs_forced_pair pair = {source, "ka", RS_MAX_SRC_LEN, 0};
    rs_forced f;
    rs_tokens st, tt;
    rs_error err;
    ck_assert_msg(!rs_forced_text(models, 1, &codec, &pair, &f, &st, &tt, &err), "%s", err.msg);
    ck_assert_double_eq_tol(num(j, "logprob"), f.logprob, 1e-6 * fmax(1.0, fabs(f.logprob)));
    rs_forced_free(&f);
    rs_tokens_free(&st);
    rs_tokens_free(&tt);
    rs_json_free(j);
    rs_server_stop(s);
}
END_TEST

/* A model with --attention none is served: its translations come with
 * "alignment": null and "no_alignment" saying why, /api/align is refused
 * with 400 and the same words. */
START_TEST(a_model_without_attention_answers_without_alignment)
{
    char cmd[1024], path[256];
    snprintf(cmd, sizeof cmd,
             "%s train --train corpora/reorder/dev.tsv --out %s/none --epochs 1 --emb 8 "
             "--hidden 8 --maxout 8 --attention none --quiet > %s/none.log 2>&1",
             testprog_path(), model_dir, model_dir);
    ck_assert_msg(system(cmd) == 0, "training the none model failed: %s", cmd);
    snprintf(path, sizeof path, "%s/none/last.ckpt", model_dir);
    rs_model none;
    rs_codec none_codec;
    rs_error err;
    ck_assert_msg(!rs_checkpoint_load(path, &none, NULL, &err), "%s", err.msg);
    ck_assert_msg(!rs_codec_for_model(&none_codec, &none, &err), "%s", err.msg);
    const rs_ready none_ready = rs_ready_plain(&none);
    rs_serve_model served[2] = {{"none", &none_ready, &none_codec},
                                {"reorder", &model_ready, &codec}};
    const rs_serve_options opt = test_options(1, 4, 10);
    rs_server *s;
    ck_assert_msg(rs_server_start(&s, served, 2, &opt, &err) == 0, "%s", err.msg);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    request(port, "POST", "/api/translate", "{\"text\": \"the tall horse\", \"beam\": 2}", a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    const rs_json *h = item(rs_json_get(j, "hypotheses"), 0);
    ck_assert_int_eq(rs_json_get(h, "alignment")->type, RS_JSON_NULL);
    ck_assert_ptr_nonnull(strstr(str(h, "no_alignment"), "--attention none"));
    rs_json_free(j);
    request(port, "POST", "/api/align", "{\"source\": \"the tall horse\", \"target\": \"ka\"}", a);
    expect_error(a, 400, "has no alignment", "align of a none model");
    /* The attentive model beside it still aligns. */
    request(port, "POST", "/api/align",
            "{\"source\": \"the tall horse\", \"target\": \"ka\", \"model\": \"reorder\"}", a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
    rs_codec_free(&none_codec);
    rs_model_free(&none);
}
END_TEST

typedef struct {
    int port, ok, busy, wrong;
    const char *expected;
} client;

static void *client_main(void *arg)
{
    client *c = arg;
    answer *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    char body[256];
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 3}", sentence);
    for (int k = 0; k < 6; k++) {
        request(c->port, "POST", "/api/translate", body, a);
        if (a->status == 503) {
            c->busy++;
        } else if (a->status == 200 && a->body) {
            rs_error err;
            rs_json *j = rs_json_parse(a->body, strlen(a->body), &err);
            const rs_json *t = j ? rs_json_get(j, "translation") : NULL;
            if (t && t->type == RS_JSON_STRING && !strcmp(t->string, c->expected))
                c->ok++;
            else
                c->wrong++;
            rs_json_free(j);
        } else {
            c->wrong++;
        }
    }
    free(a);
    return NULL;
}

START_TEST(concurrent_clients_get_correct_answers)
{
    rs_server *s = start(2, 3, 10);
    answer *a = &answers[0];
    char body[256];
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 3}", sentence);
    request(rs_server_port(s), "POST", "/api/translate", body, a);
    ck_assert_int_eq(a->status, 200);
    rs_json *j = json_of(a);
    char *expected = strdup(str(j, "translation"));
    rs_json_free(j);
    enum { N = 8 };
    client clients[N];
    pthread_t threads[N];
    for (int k = 0; k < N; k++) {
        clients[k] = (client){.port = rs_server_port(s), .expected = expected};
        ck_assert(pthread_create(&threads[k], NULL, client_main, &clients[k]) == 0);
    }
    int ok = 0, busy = 0, wrong = 0;
    for (int k = 0; k < N; k++) {
        pthread_join(threads[k], NULL);
        ok += clients[k].ok, busy += clients[k].busy, wrong += clients[k].wrong;
    }
    /* Every answer is the right translation, or 503 when the queue of 3 was full. */
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_eq(ok + busy, N * 6);
    ck_assert_int_gt(ok, N);
    free(expected);
    rs_server_stop(s);
}
END_TEST

/* "words": true merges SentencePiece pieces into the words `align --words`
 * shows (the same function): the answer's alignment record is that command's
 * JSON record; a model without pieces refuses it. */
START_TEST(words_merge_pieces_as_align_words_does)
{
    char dir[64], cmd[1024], path[256];
    testdir_make(dir, "rnnsearch-serve-words");
    snprintf(cmd, sizeof cmd,
             "%s train --train corpora/reorder/dev.tsv --out %s/spm --subwords 60 --max-steps 5 "
             "--emb 8 --hidden 8 --att 8 --maxout 4 --quiet 2>/dev/null",
             testprog_path(), dir);
    ck_assert_int_eq(system(cmd), 0);
    rs_model spm;
    rs_codec spm_codec;
    rs_error err;
    snprintf(path, sizeof path, "%s/spm/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(path, &spm, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(rs_codec_for_model(&spm_codec, &spm, &err) == 0, "%s", err.msg);
    const rs_ready spm_ready = rs_ready_plain(&spm);
    const rs_serve_model served[2] = {{"spm", &spm_ready, &spm_codec},
                                      {"words", &model_ready, &codec}};
    rs_serve_options opt = test_options(1, 4, 10);
    rs_server *s;
    ck_assert_msg(rs_server_start(&s, served, 2, &opt, &err) == 0, "%s", err.msg);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    request(port, "POST", "/api/align",
            "{\"source\": \"my young teacher sees the horse\", \"target\": \"lehro yelo mimi\", "
            "\"words\": true}",
            a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    const char *record = strstr(a->body, "\"alignment\":");
    ck_assert_ptr_nonnull(record);
    record += strlen("\"alignment\":");
    snprintf(cmd, sizeof cmd,
             "printf 'my young teacher sees the horse\\tlehro yelo mimi\\n' | %s align -m %s/spm "
             "--pairs --words --format json",
             testprog_path(), dir);
    char want[8192];
    ck_assert_int_eq(testprog_shell(cmd, want, sizeof want), 0);
    want[strcspn(want, "\n")] = '\0';
    /* The command's record and the answer both count from 0. */
    ck_assert_ptr_nonnull(strstr(want, "{\"id\":0,"));
    ck_assert_msg(!strncmp(record, want, strlen(want)), "answer: %.400s\nalign --words: %s", record,
                  want);
    ck_assert_ptr_nonnull(strstr(want, "\"source\":[\"my\",\"young\",\"teacher\""));
    /* Without it, the pieces; a word-level model refuses it. */
    request(port, "POST", "/api/translate", "{\"text\": \"my young teacher\"}", a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\\u2581") == NULL &&
                      strstr(a->body, "\"source\":[\"\xE2\x96\x81"),
                  "%.300s", a->text);
    request(port, "POST", "/api/translate", "{\"text\": \"my young teacher\", \"words\": true}", a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"source\":[\"my\",\"young\""), "%.300s",
                  a->text);
    request(port, "POST", "/api/translate",
            "{\"text\": \"the horse\", \"model\": \"words\", \"words\": true}", a);
    expect_error(a, 400, "has none (tokenizer word)", "words on a word model");
    request(port, "POST", "/api/translate", "{\"text\": \"the horse\", \"words\": 1}", a);
    expect_error(a, 400, "'words' must be true or false", "words not a boolean");
    rs_server_stop(s);
    rs_codec_free(&spm_codec);
    rs_model_free(&spm);
    testdir_remove(dir);
}
END_TEST

/* |got − want| ≤ tol (0: the same number). */
static void expect_near(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol, "%s: %.9g, expected %.9g (within %g)", what, got, want,
                  tol);
}

/* Two translate answers for the same sentence: the same text, tokens and
 * hypotheses, and numbers within tol (a batch's matrix products sum in
 * another order than one sentence's, so the last float bits may differ). */
static void expect_same_result(const rs_json *got, const rs_json *want, double tol)
{
    ck_assert_str_eq(str(got, "text"), str(want, "text"));
    ck_assert_str_eq(str(got, "translation"), str(want, "translation"));
    ck_assert_double_eq(num(got, "truncated"), num(want, "truncated"));
    const rs_json *gs = rs_json_get(got, "source_tokens"), *ws = rs_json_get(want, "source_tokens");
    ck_assert_int_eq(gs->count, ws->count);
    for (size_t k = 0; k < ws->count; k++)
        ck_assert_str_eq(item(gs, k)->string, item(ws, k)->string);
    const rs_json *gh = rs_json_get(got, "hypotheses"), *wh = rs_json_get(want, "hypotheses");
    ck_assert_int_eq(gh->count, wh->count);
    for (size_t k = 0; k < wh->count; k++) {
        const rs_json *g = item(gh, k), *w = item(wh, k);
        ck_assert_str_eq(str(g, "translation"), str(w, "translation"));
        expect_near(num(g, "score"), num(w, "score"), tol, "score");
        expect_near(num(g, "logprob"), num(w, "logprob"), tol, "logprob");
        const rs_json *ga = rs_json_get(rs_json_get(g, "alignment"), "alignment"),
                      *wa = rs_json_get(rs_json_get(w, "alignment"), "alignment");
        ck_assert_int_eq(ga->count, wa->count);
        for (size_t r = 0; r < wa->count; r++) {
            ck_assert_int_eq(item(ga, r)->count, item(wa, r)->count);
            for (size_t c = 0; c < item(wa, r)->count; c++)
                expect_near(item(item(ga, r), c)->number, item(item(wa, r), c)->number, tol,
                            "an alignment weight");
        }
    }
}

/* A translate answer equals the pipeline's result to the float bit. */
static void expect_pipeline_result(const rs_json *got, const rs_translated *t)
{
    const rs_json *hyps = rs_json_get(got, "hypotheses");
    ck_assert_int_eq(hyps->count, t->count);
    for (int k = 0; k < t->count; k++) {
        const rs_json *h = item(hyps, (size_t)k);
        ck_assert_str_eq(str(h, "translation"), t->hyps[k].text);
        ck_assert_float_eq((float)num(h, "score"), (float)t->hyps[k].score);
        expect_matrix(rs_json_get(h, "alignment"), t->hyps[k].alignment, t->hyps[k].count + 1,
                      t->source_count + 1);
    }
}

/* A list of three sentences, decoded as one batch, answers what each
 * sentence alone answers (the same translations, tokens and hypotheses;
 * numbers to float rounding), in the request's order, whatever that order
 * is; and exactly what the pipeline gives for the three as one batch, as
 * `rnnsearch translate` decodes them. */
START_TEST(a_batch_answers_what_its_sentences_alone_do)
{
    rs_server *s = start(1, 4, 10);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    char body[1024];
    rs_json *single[3];
    for (int i = 0; i < 3; i++) {
        snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 3, \"n_best\": 2}",
                 batch_sentences[i]);
        request(port, "POST", "/api/translate", body, a);
        ck_assert_msg(a->status == 200, "%.300s", a->text);
        single[i] = json_of(a);
    }
    /* The pipeline as `rnnsearch translate --batch-size 3 --beam 3 --n-best 2`. */
    rs_translate_options topt;
    rs_translate_options_default(&topt);
    topt.beam = 3;
    topt.n_best = 2;
    topt.batch_size = 3;
    topt.want_alignment = 1;
    const rs_ready *models[1] = {&model_ready};
    rs_error err;
    static const int orders[2][3] = {{0, 1, 2}, {2, 0, 1}};
    for (int o = 0; o < 2; o++) {
        const int *ord = orders[o];
        const char *lines[3] = {batch_sentences[ord[0]], batch_sentences[ord[1]],
                                batch_sentences[ord[2]]};
        rs_translated t[3];
        rs_translator tr;
        ck_assert_msg(rs_translator_init(&tr, models, 1, &codec, &topt, &err) == 0, "%s", err.msg);
        ck_assert_msg(rs_translate_lines(&tr, 3, lines, t, &err) == 0, "%s", err.msg);
        rs_translator_free(&tr);
        snprintf(body, sizeof body,
                 "{\"text\": [\"%s\", \"%s\", \"%s\"], \"beam\": 3, \"n_best\": 2}", lines[0],
                 lines[1], lines[2]);
        request(port, "POST", "/api/translate", body, a);
        ck_assert_msg(a->status == 200, "%.300s", a->text);
        rs_json *j = json_of(a);
        ck_assert_int_eq(j->count, 2); /* results, ms */
        num(j, "ms");
        const rs_json *results = rs_json_get(j, "results");
        ck_assert_int_eq(results->count, 3);
        for (int i = 0; i < 3; i++) {
            const rs_json *r = item(results, (size_t)i);
            ck_assert_ptr_null(rs_json_get(r, "ms"));
            ck_assert_str_eq(str(r, "model"), "reorder");
            expect_same_result(r, single[ord[i]], 1e-4);
            expect_pipeline_result(r, &t[i]);
            rs_translated_free(&t[i]);
        }
        rs_json_free(j);
    }
    /* A list of one is still a list, and answers as its sentence alone. */
    snprintf(body, sizeof body, "{\"text\": [\"%s\"], \"beam\": 3, \"n_best\": 2}",
             batch_sentences[1]);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_int_eq(rs_json_get(j, "results")->count, 1);
    expect_same_result(item(rs_json_get(j, "results"), 0), single[1], 0.0);
    rs_json_free(j);
    for (int i = 0; i < 3; i++)
        rs_json_free(single[i]);
    rs_server_stop(s);
}
END_TEST

Suite *serve_jobs_suite(void)
{
    Suite *s = suite_create("serve_jobs");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, answers_equal_the_pipeline);
    tcase_add_test(tc, concurrent_clients_get_correct_answers);
    tcase_add_test(tc, align_cuts_long_sources_as_score_does);
    tcase_add_test(tc, a_model_without_attention_answers_without_alignment);
    tcase_add_test(tc, words_merge_pieces_as_align_words_does);
    tcase_add_test(tc, a_batch_answers_what_its_sentences_alone_do);
    suite_add_tcase(s, tc);
    return s;
}
