/* What the server answers (serve/answers.c): every answer within
 * --max-answer, the page that forgets its token, and the headers that keep
 * other sites' pages from reading or framing the server. */
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

/* What one answer may cost is bounded: over --max-answer is 413, saying
 * what to ask for instead, and no answer is longer than the bound. */
START_TEST(answers_are_bounded)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_answer = 16384;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    char body[1024];
    snprintf(body, sizeof body,
             "{\"text\": \"%s %s %s\", \"beam\": 8, \"n_best\": 8, \"svg\": true}", sentence,
             sentence, sentence);
    request(port, "POST", "/api/translate", body, a);
    expect_error(a, 413, "--max-answer", "8 hypotheses with pictures");
    snprintf(body, sizeof body, "{\"source\": \"%s %s %s\", \"target\": \"%s %s\", \"svg\": true}",
             sentence, sentence, sentence, sentence, sentence);
    request(port, "POST", "/api/align", body, a);
    expect_error(a, 413, "--max-answer", "align with a picture");
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 2, \"n_best\": 1}", sentence);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_uint_le(strlen(a->body), opt.max_answer);
    rs_server_stop(s);
}
END_TEST

/* Opened as /?token=…, the page takes the token out of the address bar and
 * the history at once, keeps it in its origin's localStorage and sends it as
 * Authorization: Bearer (the browser test checks it in Chromium; this, that
 * the page served has the code). */
START_TEST(the_page_forgets_its_token)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.token = "s3cret-token_1";
    rs_server *s = start_with(&opt);
    answer *a = &answers[0];
    request(rs_server_port(s), "GET", "/?token=s3cret-token_1", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    const char *forget = strstr(a->body, "function forgetToken()");
    ck_assert_ptr_nonnull(forget);
    ck_assert_ptr_nonnull(strstr(forget, "url.searchParams.delete('token')"));
    ck_assert_ptr_nonnull(strstr(forget, "history.replaceState("));
    ck_assert_ptr_nonnull(strstr(forget, "store.setItem(tokenKey, token)"));
    ck_assert_ptr_nonnull(strstr(a->body, "headers.Authorization = 'Bearer ' + token"));
    ck_assert_ptr_nonnull(strstr(a->body, "readToken();\n  loadModels();"));
    rs_server_stop(s);
}
END_TEST

/* Found by attacking the server as another site would: a GET of an <img>
 * or <script> carries no Origin, so Fetch Metadata decides (another site,
 * or another port of this one, may only open the page, not frame it nor
 * read the API), and every answer tells the browser not to hand it to
 * another origin (CORP, nosniff); the page may not be framed. */
START_TEST(other_sites_cannot_read_or_frame_the_server)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-serve-sites");
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    with_headers(port, "GET", "/api/run",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: no-cors\r\n"
                 "Sec-Fetch-Dest: script\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "a <script> of another site");
    with_headers(port, "GET", "/api/models",
                 "Host: localhost\r\nSec-Fetch-Site: same-site\r\nSec-Fetch-Mode: cors\r\n"
                 "Sec-Fetch-Dest: empty\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "a fetch from another port of this host");
    with_headers(port, "GET", "/",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"
                 "Sec-Fetch-Dest: iframe\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "another site framing the page");
    with_headers(port, "GET", "/api/models",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"
                 "Sec-Fetch-Dest: document\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "another site navigating to the API");
    with_headers(port, "GET", "/api/models",
                 "Host: localhost\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\n",
                 NULL, a);
    expect_error(a, 400, "more than one Sec-Fetch-Site", "two Sec-Fetch-Site headers");
    /* A link from another site opens the page; the page's own requests pass. */
    with_headers(port, "GET", "/",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"
                 "Sec-Fetch-Dest: document\r\n",
                 NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(strstr(a->text, "frame-ancestors 'none'") &&
                      strstr(a->text, "X-Frame-Options: DENY") &&
                      strstr(a->text, "Referrer-Policy: no-referrer") &&
                      strstr(a->text, "Cross-Origin-Resource-Policy: same-origin"),
                  "%.600s", a->text);
    with_headers(port, "GET", "/api/run",
                 "Host: localhost\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: cors\r\n", NULL,
                 a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(strstr(a->text, "X-Content-Type-Options: nosniff") &&
                      strstr(a->text, "Cross-Origin-Resource-Policy: same-origin"),
                  "%.600s", a->text);
    with_headers(port, "GET", "/api/models", "Host: localhost\r\nSec-Fetch-Site: none\r\n", NULL,
                 a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

Suite *serve_answers_suite(void)
{
    Suite *s = suite_create("serve_answers");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, answers_are_bounded);
    tcase_add_test(tc, the_page_forgets_its_token);
    tcase_add_test(tc, other_sites_cannot_read_or_frame_the_server);
    suite_add_tcase(s, tc);
    return s;
}
