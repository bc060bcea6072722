/* The models a server serves and their request names (src/serve/models.c). */
#include <check.h>
#include <string.h>

#include "serve/models.h"

START_TEST(request_names)
{
    static const char *const cases[][2] = {
        {"models/dates", "dates"},
        {"models/dates/", "dates"},
        {"models/dates/best.ckpt", "dates"},
        {"models/dates/last.ckpt", "dates"},
        {"x/other.ckpt", "other"},
        {"dates", "dates"},
        {"best.ckpt", "best"},
        {".ckpt", ".ckpt"},
        {"/", ""},
    };
    char name[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rs_serve_model_name(cases[i][0], name, sizeof name);
        ck_assert_msg(!strcmp(name, cases[i][1]), "'%s' is '%s', not '%s'", cases[i][0], name,
                      cases[i][1]);
    }
}
END_TEST

/* A model that does not load fails naming it, and keeps none loaded. */
START_TEST(a_missing_model_fails)
{
    static rs_serve_models m;
    rs_error err = {{0}};
    const char *args[] = {"/nonexistent/model.ckpt"};
    ck_assert_int_ne(rs_serve_models_load(&m, args, 1, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "/nonexistent/model.ckpt"), "%s", err.msg);
    ck_assert_int_eq(m.loaded, 0);
    rs_serve_models_free(&m);
}
END_TEST

Suite *serve_models_suite(void)
{
    Suite *s = suite_create("serve_models");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, request_names);
    tcase_add_test(tc, a_missing_model_fails);
    suite_add_tcase(s, tc);
    return s;
}
