/* The model (src/model/model.c): every weight drawn within ±init_scale, biases
 * zero (att.v is a weight vector, not a bias), the same seed the same
 * weights, a fresh training state, and parameters that do not fit said so. */
#include <check.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "testlimit.h"
#include "testskip.h"

static void make(rs_model *m, int attention)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = 9, cfg.model.tgt_vocab = 8, cfg.model.emb = 3, cfg.model.hidden = 4,
    cfg.model.att = 5, cfg.model.maxout = 2;
    cfg.model.attention = attention;
    cfg.train.init_scale = 0.25f;
    ck_assert_msg(!rs_model_alloc(m, &cfg, &err), "%s", err.msg);
}

START_TEST(weights_within_the_scale_and_biases_zero)
{
    for (int kind = RS_ATT_ADDITIVE; kind <= RS_ATT_SCALED_DOT; kind++) {
        if (kind == RS_ATT_DOT)
            continue; /* no longer a kind of model (params.h) */
        rs_model m, again;
        rs_rng rng, rng2;
        make(&m, kind);
        make(&again, kind);
        rs_rng_seed(&rng, 5);
        rs_rng_seed(&rng2, 5);
        rs_model_init_random(&m, &rng);
        rs_model_init_random(&again, &rng2);
        for (int i = 0; i < RS_NUM_PARAMS; i++) {
            const rs_tensor_info *t = &m.layout.info[i];
            const float *p = m.params + t->offset;
            const int bias = t->cols == 0 && i != RS_P_att_v;
            double largest = 0.0;
            for (size_t k = 0; k < t->size; k++) {
                largest = fmax(largest, fabs(p[k]));
                ck_assert_msg(bias ? p[k] == 0.0f : fabsf(p[k]) <= 0.25f, "%s[%zu] = %g", t->name,
                              k, p[k]);
            }
            if (!bias && t->size >= 8)
                ck_assert_msg(largest > 0.05, "%s is (nearly) all zero", t->name);
        }
        for (size_t k = 0; k < m.layout.total; k++)
            ck_assert(m.params[k] == again.params[k]);
        rs_model_free(&m);
        rs_model_free(&again);
    }
}
END_TEST

START_TEST(a_fresh_training_state)
{
    rs_model m;
    rs_train_state st;
    rs_error err = {{0}};
    make(&m, RS_ATT_ADDITIVE);
    ck_assert(!rs_train_state_alloc(&st, &m, &err));
    ck_assert(st.step == 0 && st.epoch == 0 && st.batches_done == 0 && st.bad_evals == 0);
    ck_assert(isinf(st.best_dev_loss) && st.best_dev_bleu < 0 && st.lr_scale == 1.0f);
    for (size_t k = 0; k < m.layout.total; k++)
        ck_assert(st.adam_m[k] == 0.0f && st.adam_v[k] == 0.0f);
    rs_train_state_free(&st);
    rs_model_free(&m);
}
END_TEST

/* Parameters that cannot be had: the message says they are the model's,
 * and how big (8.2 GiB of them, under an address-space limit). */
START_TEST(parameters_that_do_not_fit_are_named_with_their_size)
{
#if defined(__SANITIZE_ADDRESS__)
    test_skip("model: the out-of-memory test under AddressSanitizer (it aborts on a failed "
              "allocation)");
#else
    rs_config cfg;
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = cfg.model.tgt_vocab = 1 << 24;
    cfg.model.emb = 64, cfg.model.hidden = 4, cfg.model.att = 4, cfg.model.maxout = 2;
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = testlimit_fork((size_t)64 << 20);
    if (pid == 0) {
        rs_model m;
        rs_error err = {{0}};
        const int rc = rs_model_alloc(&m, &cfg, &err);
        if (write(fds[1], err.msg, strlen(err.msg) + 1) < 0)
            _exit(5);
        _exit(rc == -1 ? 0 : 6);
    }
    close(fds[1]);
    char msg[1024] = "";
    const ssize_t got = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    ck_assert_int_eq(testlimit_wait(pid), 0);
    ck_assert_int_gt(got, 0);
    ck_assert_msg(strstr(msg, "out of memory allocating the model's parameters (8.2 GiB)"), "%s",
                  msg);
#endif
}
END_TEST

Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, weights_within_the_scale_and_biases_zero);
    tcase_add_test(tc, a_fresh_training_state);
    tcase_add_test(tc, parameters_that_do_not_fit_are_named_with_their_size);
    suite_add_tcase(s, tc);
    return s;
}
