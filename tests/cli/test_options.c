/* cli/options.c: a command's option table drives its parsing and its help. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "testdir.h"

/* A table's request: a number of each kind, a flag and train's settings. */
typedef struct {
    int beam, quiet, kind;
    float alpha;
    rs_config cfg;
} table_request;

static const char *const kinds[] = {"a", "b", NULL};

static const rs_cli_option test_rows[] = {
    {"beam", 'b', RS_CLI_INT, RS_AT(table_request, beam), 1, 1000, "K",
     .help = "hypotheses (default: %D)"},
    {"length-penalty", .kind = RS_CLI_FLOAT, RS_AT(table_request, alpha), -100, 100, "A",
     .help = "\nexponent\n(default: %D)"},
    {"quiet", .kind = RS_CLI_FLAG, RS_AT(table_request, quiet), .help = "no summary"},
    /* A default that is none of the names (-1: decided later) has no "%D". */
    {"kind", .kind = RS_CLI_CHOICE, RS_AT(table_request, kind), .value = "K", .names = kinds,
     .help = "a or b (default: %D)"},
    RS_CLI_HELP_ROW,
    {.kind = RS_CLI_SETTINGS, RS_AT(table_request, cfg)},
    {0},
};
static const rs_cli_command test_command = {
    "t", "t", "usage: t [OPTIONS]\n", "end\n", 12, sizeof(table_request), test_rows};

/* rs_cli_parse of argv into rq, its stderr in err (size bytes); the status. */
static int parse_rows(char **argv, table_request *rq, char *err, size_t size)
{
    char dir[128], path[256];
    testdir_make(dir, "rs_rows");
    snprintf(path, sizeof path, "%s/stderr", dir);
    FILE *saved = stderr;
    stderr = fopen(path, "w");
    ck_assert_ptr_nonnull(stderr);
    int argc = 0;
    while (argv[argc])
        argc++;
    rs_cli_args args;
    const int status = rs_cli_parse(&test_command, rq, &args, argc, argv);
    rs_cli_end(&args);
    fclose(stderr);
    stderr = saved;
    FILE *f = fopen(path, "r");
    const size_t n = fread(err, 1, size - 1, f);
    err[n] = 0;
    fclose(f);
    testdir_remove(dir);
    return status;
}

/* A table's rows parse their values (numbers stored, ranges kept, "-0" as
 * 0), name themselves in errors, and make --help: "%D" the default, a first
 * empty line putting the text below the label. */
START_TEST(rows_parse_check_and_describe_their_options)
{
    table_request rq = {.beam = 1};
    rs_config_defaults(&rq.cfg);
    char err[2048];
    char *good[] = {"t", "-b", "12", "--quiet", "--length-penalty=0.6", "--lr", "0.5", NULL};
    ck_assert_int_eq(parse_rows(good, &rq, err, sizeof err), -1);
    ck_assert(rq.beam == 12 && rq.quiet == 1 && rq.alpha == 0.6f && rq.cfg.train.lr == 0.5f);
    char *bad_int[] = {"t", "--beam", "1001", NULL};
    ck_assert_int_eq(parse_rows(bad_int, &rq, err, sizeof err), RS_EXIT_USAGE);
    ck_assert_msg(strstr(err, "t: --beam: '1001' is not an integer from 1 to 1000"), "%s", err);
    char *bad_float[] = {"t", "--length-penalty", "inf", NULL};
    ck_assert_int_eq(parse_rows(bad_float, &rq, err, sizeof err), RS_EXIT_USAGE);
    ck_assert_msg(strstr(err, "--length-penalty: 'inf' is not a number from -100 to 100"), "%s",
                  err);
    ck_assert(rq.beam == 12 && rq.alpha == 0.6f);
    char *bad_setting[] = {"t", "--batch-size", "zero", NULL};
    ck_assert_int_eq(parse_rows(bad_setting, &rq, err, sizeof err), RS_EXIT_USAGE);
    ck_assert_msg(strstr(err, "--batch-size: 'zero' is not an integer from 1 to 1000000"), "%s",
                  err);
    char *twice[] = {"t", "-b", "2", "--beam", "3", NULL};
    ck_assert_int_eq(parse_rows(twice, &rq, err, sizeof err), RS_EXIT_USAGE);
    ck_assert_msg(strstr(err, "given twice"), "%s", err);
    /* "-0" is stored as 0, not as negative zero (which a resumed run's
     * settings printed as "-0" and refused against a later "0"). */
    char *minus_zero[] = {"t", "--length-penalty", "-0", NULL};
    ck_assert_int_eq(parse_rows(minus_zero, &rq, err, sizeof err), -1);
    ck_assert(rq.alpha == 0.0f && !signbit(rq.alpha));

    char *text = NULL;
    size_t size = 0;
    FILE *help = open_memstream(&text, &size);
    table_request defaults = {.beam = 7, .alpha = 0.5f, .kind = -1};
    rs_config_defaults(&defaults.cfg);
    rs_cli_help(help, &test_command, &defaults);
    fclose(help);
    static const char head[] = "usage: t [OPTIONS]\n"
                               "  -b, --beam K  hypotheses (default: 7)\n"
                               "  --length-penalty A\n"
                               "            exponent\n"
                               "            (default: 0.5)\n"
                               "  --quiet   no summary\n"
                               "  --kind K  a or b (default: )\n"
                               "  -h, --help  this help\n"
                               "  --emb N ";
    ck_assert_msg(!strncmp(text, head, sizeof head - 1), "%s", text);
    ck_assert_msg(strstr(text, "--lr X") && rs_cli_ends_with(text, "\nend\n"), "%s", text);
    free(text);
}
END_TEST

Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, rows_parse_check_and_describe_their_options);
    suite_add_tcase(s, tc);
    return s;
}
