/* Pairs to ids and the order of an epoch (src/data/dataset.c): tokenizing,
 * counting and mapping with <unk>, the max_len filter and the lines it keeps,
 * epoch plans (every pair once, batches of similar lengths, reproducible from
 * the seed), sequential plans and batches filled from a plan. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"

/* Ten pairs; pair i has a source of (i % 4) + 1 words and a target of (i % 3) + 1. */
static const char *const raw_src[] = {"a",   "a b",   "a b c",   "c c c d", "b",
                                      "d a", "a a a", "b b b b", "c",       "q d"};
static const char *const raw_tgt[] = {"x",     "x y", "y y z", "x",     "z z",
                                      "x y z", "y",   "x x",   "z z z", "w"};
enum { PAIRS = 10 };

typedef struct {
    rs_pairs pairs;
    rs_codec codec;
    rs_tokenized tok;
    rs_vocab src_vocab, tgt_vocab;
} corpus_case;

static void corpus_case_init(corpus_case *c)
{
    rs_error err;
    rs_config cfg;
    rs_config_defaults(&cfg);
    memset(c, 0, sizeof *c);
    c->pairs.src = calloc(PAIRS, sizeof(char *));
    c->pairs.tgt = calloc(PAIRS, sizeof(char *));
    ck_assert(c->pairs.src && c->pairs.tgt);
    c->pairs.count = c->pairs.capacity = PAIRS;
    for (int i = 0; i < PAIRS; i++) {
        c->pairs.src[i] = strdup(raw_src[i]);
        c->pairs.tgt[i] = strdup(raw_tgt[i]);
        ck_assert(c->pairs.src[i] && c->pairs.tgt[i]);
    }
    ck_assert_msg(rs_codec_init(&c->codec, &cfg.model, &err) == 0, "%s", err.msg);
    ck_assert_msg(rs_tokenize_pairs(&c->tok, &c->pairs, &c->codec, "pairs", &err) == 0, "%s",
                  err.msg);
    /* Vocabularies from the counts; "q" (source) and "w" (target) occur once
     * and are left out by min_freq 2, so they map to <unk>. */
    rs_vocab counts;
    ck_assert(rs_vocab_init(&counts, &err) == 0);
    ck_assert(rs_count_tokens(&counts, &c->tok, RS_SIDE_SRC, &err) == 0);
    ck_assert(rs_vocab_select(&c->src_vocab, &counts, 2, 0, &err) == 0);
    rs_vocab_free(&counts);
    ck_assert(rs_vocab_init(&counts, &err) == 0);
    ck_assert(rs_count_tokens(&counts, &c->tok, RS_SIDE_TGT, &err) == 0);
    ck_assert(rs_vocab_select(&c->tgt_vocab, &counts, 2, 0, &err) == 0);
    rs_vocab_free(&counts);
}

static void corpus_case_free(corpus_case *c)
{
    rs_vocab_free(&c->src_vocab);
    rs_vocab_free(&c->tgt_vocab);
    rs_tokenized_free(&c->tok);
    rs_codec_free(&c->codec);
    rs_pairs_free(&c->pairs);
}

START_TEST(build_maps_tokens_to_ids)
{
    corpus_case c;
    corpus_case_init(&c);
    ck_assert_int_eq(c.tok.count, PAIRS);
    ck_assert_int_eq(c.tok.src[3].count, 4);
    ck_assert_str_eq(c.tok.src[3].tokens[3], "d");
    rs_dataset d;
    rs_error err;
    int skipped = -1;
    ck_assert(rs_dataset_build(&d, &c.tok, &c.src_vocab, &c.tgt_vocab, 0, &skipped, &err) == 0);
    ck_assert_int_eq(d.count, PAIRS);
    ck_assert_int_eq(skipped, 0);
    for (int i = 0; i < PAIRS; i++) {
        ck_assert_int_eq(d.line[i], i);
        ck_assert_int_eq(d.src_len[i], c.tok.src[i].count);
        ck_assert_int_eq(d.tgt_len[i], c.tok.tgt[i].count);
        for (int k = 0; k < d.src_len[i]; k++)
            ck_assert_int_eq(d.src[i][k], rs_vocab_id(&c.src_vocab, c.tok.src[i].tokens[k]));
    }
    /* "a" is the most frequent source word; "q" and "w" are unknown. */
    ck_assert_int_eq(d.src[0][0], RS_RESERVED);
    ck_assert_int_eq(d.src[9][0], RS_UNK);
    ck_assert_int_eq(d.tgt[9][0], RS_UNK);
    ck_assert_int_ne(d.src[9][1], RS_UNK);
    rs_dataset_free(&d);

    /* max_len 2 keeps the pairs with both sides of at most 2 tokens. */
    ck_assert(rs_dataset_build(&d, &c.tok, &c.src_vocab, &c.tgt_vocab, 2, &skipped, &err) == 0);
    const int kept[] = {0, 1, 4, 9};
    ck_assert_int_eq(d.count, 4);
    ck_assert_int_eq(skipped, PAIRS - 4);
    for (int i = 0; i < d.count; i++) {
        ck_assert_int_eq(d.line[i], kept[i]);
        ck_assert(d.src_len[i] <= 2 && d.tgt_len[i] <= 2);
    }
    rs_dataset_free(&d);
    corpus_case_free(&c);
}
END_TEST

/* Every pair exactly once, batch boundaries consistent. */
static void check_plan_covers(const rs_epoch_plan *plan, int count, int batch_size)
{
    int seen[PAIRS] = {0};
    ck_assert_int_eq(plan->count, count);
    ck_assert_int_eq(plan->batches, (count + batch_size - 1) / batch_size);
    ck_assert_int_eq(plan->start[0], 0);
    ck_assert_int_eq(plan->start[plan->batches], count);
    for (int k = 0; k < plan->batches; k++) {
        int size = plan->start[k + 1] - plan->start[k];
        ck_assert(size >= 1 && size <= batch_size);
    }
    for (int p = 0; p < count; p++) {
        ck_assert(plan->order[p] >= 0 && plan->order[p] < count);
        seen[plan->order[p]]++;
    }
    for (int i = 0; i < count; i++)
        ck_assert_int_eq(seen[i], 1);
}

/* The smallest and largest (source, target) length of batch k. */
static void batch_length_range(const rs_epoch_plan *plan, const rs_dataset *d, int k, long *lo,
                               long *hi)
{
    *lo = 1L << 40, *hi = 0;
    for (int p = plan->start[k]; p < plan->start[k + 1]; p++) {
        long key = (long)d->src_len[plan->order[p]] * 1000 + d->tgt_len[plan->order[p]];
        *lo = key < *lo ? key : *lo;
        *hi = key > *hi ? key : *hi;
    }
}

START_TEST(epoch_plans_group_lengths_and_follow_the_seed)
{
    corpus_case c;
    corpus_case_init(&c);
    rs_dataset d;
    rs_error err;
    ck_assert(rs_dataset_build(&d, &c.tok, &c.src_vocab, &c.tgt_vocab, 0, NULL, &err) == 0);
    rs_rng rng;
    rs_rng_seed(&rng, 5);
    rs_epoch_plan plan, again, other;
    ck_assert(rs_epoch_plan_make(&plan, &d, 3, 0, &rng, &err) == 0);
    check_plan_covers(&plan, PAIRS, 3);
    /* Cut from one sorted order: the (source, target) lengths of two batches
     * never interleave. */
    for (int k = 0; k < plan.batches; k++)
        for (int q = 0; q < plan.batches; q++) {
            long k_lo, k_hi, q_lo, q_hi;
            batch_length_range(&plan, &d, k, &k_lo, &k_hi);
            batch_length_range(&plan, &d, q, &q_lo, &q_hi);
            ck_assert_msg(q == k || k_hi <= q_lo || q_hi <= k_lo, "batches %d and %d interleave", k,
                          q);
        }
    /* The same seed gives the same plan; other seeds other plans. */
    rs_rng_seed(&rng, 5);
    ck_assert(rs_epoch_plan_make(&again, &d, 3, 0, &rng, &err) == 0);
    ck_assert(memcmp(plan.order, again.order, sizeof(int) * PAIRS) == 0);
    ck_assert(memcmp(plan.start, again.start, sizeof(int) * (plan.batches + 1)) == 0);
    int differs = 0;
    for (uint64_t seed = 6; seed < 16 && !differs; seed++) {
        rs_rng_seed(&rng, seed);
        ck_assert(rs_epoch_plan_make(&other, &d, 3, 0, &rng, &err) == 0);
        check_plan_covers(&other, PAIRS, 3);
        differs = memcmp(plan.order, other.order, sizeof(int) * PAIRS) != 0;
        rs_epoch_plan_free(&other);
    }
    ck_assert_msg(differs, "ten seeds gave the same plan");
    rs_epoch_plan_free(&plan);
    rs_epoch_plan_free(&again);
    rs_dataset_free(&d);
    corpus_case_free(&c);
}
END_TEST

START_TEST(sequential_plan_and_batches_from_it)
{
    corpus_case c;
    corpus_case_init(&c);
    rs_dataset d;
    rs_error err;
    ck_assert(rs_dataset_build(&d, &c.tok, &c.src_vocab, &c.tgt_vocab, 0, NULL, &err) == 0);
    rs_epoch_plan plan;
    ck_assert(rs_sequential_plan(&plan, PAIRS, 4, &err) == 0);
    check_plan_covers(&plan, PAIRS, 4);
    for (int p = 0; p < PAIRS; p++)
        ck_assert_int_eq(plan.order[p], p);
    ck_assert(plan.start[1] == 4 && plan.start[2] == 8 && plan.start[3] == 10);
    /* The last batch: pairs 8 and 9. */
    rs_batch batch;
    ck_assert(rs_batch_alloc(&batch, 4, 8, 8, &err) == 0);
    ck_assert(rs_batch_from_dataset(&batch, &d, plan.order + 8, 2, &err) == 0);
    ck_assert_int_eq(batch.B, 2);
    ck_assert_int_eq(batch.src_len[0], d.src_len[8] + 1);
    ck_assert_int_eq(batch.src_len[1], d.src_len[9] + 1);
    ck_assert_int_eq(batch.src[0], d.src[8][0]);
    ck_assert_int_eq(batch.src[1], d.src[9][0]);
    ck_assert_int_eq(batch.tgt_out[0], d.tgt[8][0]);
    rs_batch_free(&batch);
    rs_epoch_plan_free(&plan);
    rs_dataset_free(&d);
    corpus_case_free(&c);
}
END_TEST

Suite *dataset_suite(void)
{
    Suite *s = suite_create("dataset");
    TCase *tc = tcase_create("ids and plans");
    tcase_add_test(tc, build_maps_tokens_to_ids);
    tcase_add_test(tc, epoch_plans_group_lengths_and_follow_the_seed);
    tcase_add_test(tc, sequential_plan_and_batches_from_it);
    suite_add_tcase(s, tc);
    return s;
}
