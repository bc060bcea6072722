/* The fingerprint of a run's data (src/train/fingerprint.c): the same ids
 * give the same fingerprint wherever they are stored, its CRCs are zlib's
 * over the documented bytes, and each change training would see (an id, the
 * order of pairs, a pair left out, a token moved across a line break, a dev
 * reference) is reported as a change of the part it is in, and only of it. */
#include <check.h>
#include <string.h>
#include <zlib.h>

#include "train/fingerprint.h"

enum { MAX_PAIRS = 4, MAX_LEN = 6 };

/* A dataset over storage of its own, so that a copy is the same ids in
 * other memory. */
typedef struct {
    int count;
    int ids[2][MAX_PAIRS][MAX_LEN], len[2][MAX_PAIRS], line[MAX_PAIRS];
    int *rows[2][MAX_PAIRS];
    rs_dataset d;
} toy;

/* Pairs given as {len, ids...} per side, -1 ending the list. */
static void toy_make(toy *t, const int (*pairs)[2][MAX_LEN + 1])
{
    memset(t, 0, sizeof *t);
    for (int i = 0; pairs[i][0][0] >= 0; i++) {
        ck_assert_int_lt(i, MAX_PAIRS);
        for (int side = 0; side < 2; side++) {
            t->len[side][i] = pairs[i][side][0];
            memcpy(t->ids[side][i], &pairs[i][side][1], sizeof(int) * (size_t)t->len[side][i]);
        }
        t->line[i] = i;
        t->count = i + 1;
    }
}

/* Points the dataset at the storage (after every change to it). */
static const rs_dataset *toy_view(toy *t)
{
    for (int i = 0; i < t->count; i++)
        for (int side = 0; side < 2; side++)
            t->rows[side][i] = t->ids[side][i];
    t->d = (rs_dataset){.count = t->count,
                        .src = t->rows[RS_SIDE_SRC],
                        .tgt = t->rows[RS_SIDE_TGT],
                        .src_len = t->len[RS_SIDE_SRC],
                        .tgt_len = t->len[RS_SIDE_TGT],
                        .line = t->line};
    return &t->d;
}

static void toy_swap(toy *t, int a, int b)
{
    for (int side = 0; side < 2; side++) {
        int ids[MAX_LEN], len = t->len[side][a];
        memcpy(ids, t->ids[side][a], sizeof ids);
        memcpy(t->ids[side][a], t->ids[side][b], sizeof ids);
        memcpy(t->ids[side][b], ids, sizeof ids);
        t->len[side][a] = t->len[side][b];
        t->len[side][b] = len;
    }
}

static const int train_pairs[][2][MAX_LEN + 1] = {
    {{3, 4, 5, 6}, {2, 7, 8}},
    {{1, 9}, {3, 10, 11, 12}},
    {{2, 5, 5}, {1, 6}},
    {{-1}},
};
/* Two dev pairs, lines 1 and 3 of their file (0 and 2 were left out). */
static const int dev_pairs[][2][MAX_LEN + 1] = {
    {{2, 4, 7}, {2, 8, 9}},
    {{1, 6}, {1, 5}},
    {{-1}},
};

static void dev_make(toy *t)
{
    toy_make(t, dev_pairs);
    t->line[0] = 1, t->line[1] = 3;
}

static rs_data_fingerprint of(toy *train, toy *dev, char *const *refs)
{
    rs_data_fingerprint fp;
    memset(&fp, 0xA5, sizeof fp);
    rs_data_fingerprint_of(&fp, toy_view(train), dev ? toy_view(dev) : NULL, refs);
    return fp;
}

/* The differing parts, checked to be the same both ways round. */
static int differ(const rs_data_fingerprint *a, const rs_data_fingerprint *b)
{
    const int ab = rs_data_fingerprint_compare(a, b);
    ck_assert_int_eq(ab, rs_data_fingerprint_compare(b, a));
    return ab;
}

/* The CRC the header documents, computed here with zlib: each sequence's
 * length, then its ids, as u32 little-endian, pair by pair. */
static uint32_t expected_crc(const toy *t, int side)
{
    unsigned char bytes[MAX_PAIRS * (MAX_LEN + 1) * 4];
    size_t n = 0;
    for (int i = 0; i < t->count; i++)
        for (int k = -1; k < t->len[side][i]; k++) {
            const uint32_t v = (uint32_t)(k < 0 ? t->len[side][i] : t->ids[side][i][k]);
            for (int b = 0; b < 4; b++)
                bytes[n++] = (unsigned char)(v >> (8 * b));
        }
    return (uint32_t)crc32(0L, bytes, (uInt)n);
}

START_TEST(same_ids_same_fingerprint_as_documented)
{
    toy train, dev, train2, dev2;
    toy_make(&train, train_pairs);
    dev_make(&dev);
    /* The same ids elsewhere in memory, with other (unused) storage after them. */
    toy_make(&train2, train_pairs);
    dev_make(&dev2);
    train2.ids[0][0][5] = 99, dev2.ids[1][1][3] = 77;
    const rs_data_fingerprint a = of(&train, &dev, NULL), b = of(&train2, &dev2, NULL);
    ck_assert_int_eq(a.known, 1);
    ck_assert_uint_eq(a.train_pairs, 3);
    ck_assert_uint_eq(a.dev_pairs, 2);
    ck_assert_int_eq(differ(&a, &b), 0);
    ck_assert(a.train_src_crc == b.train_src_crc && a.dev_tgt_crc == b.dev_tgt_crc);
    /* The bytes are those the header names, so a checkpoint's fingerprint
     * means the same on every machine. */
    ck_assert_uint_eq(a.train_src_crc, expected_crc(&train, RS_SIDE_SRC));
    ck_assert_uint_eq(a.train_tgt_crc, expected_crc(&train, RS_SIDE_TGT));
    ck_assert_uint_eq(a.dev_src_crc, expected_crc(&dev, RS_SIDE_SRC));
    ck_assert_uint_eq(a.dev_tgt_crc, expected_crc(&dev, RS_SIDE_TGT));
    /* The four CRCs are of different data: different values. */
    ck_assert(a.train_src_crc != a.train_tgt_crc && a.dev_src_crc != a.dev_tgt_crc);
    ck_assert(a.train_src_crc != a.dev_src_crc);
    /* No dev set is an empty one. */
    toy none;
    toy_make(&none, (const int[][2][MAX_LEN + 1]){{{-1}}});
    const rs_data_fingerprint c = of(&train, NULL, NULL), d = of(&train, &none, NULL);
    ck_assert_int_eq(differ(&c, &d), 0);
    ck_assert_uint_eq(c.dev_pairs, 0);
    ck_assert_int_eq(differ(&a, &c), RS_DATA_DEV_SRC | RS_DATA_DEV_TGT);
}
END_TEST

/* Field by field: a pair count counts for both sides of its set. */
START_TEST(compare_names_the_parts_that_differ)
{
    const rs_data_fingerprint a = {1, 10, 0x11, 0x12, 5, 0x21, 0x22};
    rs_data_fingerprint b = a;
    ck_assert_int_eq(differ(&a, &b), 0);
    b.train_pairs = 11;
    ck_assert_int_eq(differ(&a, &b), RS_DATA_TRAIN_SRC | RS_DATA_TRAIN_TGT);
    b = a, b.dev_pairs = 4;
    ck_assert_int_eq(differ(&a, &b), RS_DATA_DEV_SRC | RS_DATA_DEV_TGT);
    b = a, b.train_src_crc ^= 1u << 31;
    ck_assert_int_eq(differ(&a, &b), RS_DATA_TRAIN_SRC);
    b = a, b.train_tgt_crc = 0;
    ck_assert_int_eq(differ(&a, &b), RS_DATA_TRAIN_TGT);
    b = a, b.dev_src_crc = 0x12;
    ck_assert_int_eq(differ(&a, &b), RS_DATA_DEV_SRC);
    b = a, b.dev_tgt_crc = 0x21;
    ck_assert_int_eq(differ(&a, &b), RS_DATA_DEV_TGT);
    b = a, b.train_tgt_crc = 0, b.dev_src_crc = 0;
    ck_assert_int_eq(differ(&a, &b), RS_DATA_TRAIN_TGT | RS_DATA_DEV_SRC);
}
END_TEST

START_TEST(each_change_is_a_change_of_its_part)
{
    toy train, dev;
    toy_make(&train, train_pairs);
    dev_make(&dev);
    const rs_data_fingerprint base = of(&train, &dev, NULL);
    rs_data_fingerprint fp;

    /* One id of one side: that side only. */
    train.ids[RS_SIDE_SRC][1][0] = 8;
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_TRAIN_SRC);
    toy_make(&train, train_pairs);
    train.ids[RS_SIDE_TGT][2][0] = 7;
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_TRAIN_TGT);
    toy_make(&train, train_pairs);
    dev.ids[RS_SIDE_SRC][0][1] = 4;
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_DEV_SRC);
    dev_make(&dev);
    dev.ids[RS_SIDE_TGT][1][0] = 4;
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_DEV_TGT);
    dev_make(&dev);

    /* Two pairs in the other order: both sides of that set. */
    toy_swap(&train, 0, 2);
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_TRAIN_SRC | RS_DATA_TRAIN_TGT);
    toy_make(&train, train_pairs);
    toy_swap(&dev, 0, 1);
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_DEV_SRC | RS_DATA_DEV_TGT);
    dev_make(&dev);

    /* A pair left out (the last, so that the others' bytes are a prefix): the
     * pair count changes, which counts for both sides. */
    train.count = 2;
    fp = of(&train, &dev, NULL);
    ck_assert_uint_eq(fp.train_pairs, 2);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_TRAIN_SRC | RS_DATA_TRAIN_TGT);
    toy_make(&train, train_pairs);
    dev.count = 1;
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_DEV_SRC | RS_DATA_DEV_TGT);
    dev_make(&dev);

    /* A token moved across a line break ({4 5 6}{9} → {4 5}{6 9}): the same
     * ids in the same order, yet another source side. */
    train.len[RS_SIDE_SRC][0] = 2;
    train.len[RS_SIDE_SRC][1] = 2;
    train.ids[RS_SIDE_SRC][1][0] = 6, train.ids[RS_SIDE_SRC][1][1] = 9;
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), RS_DATA_TRAIN_SRC);
    toy_make(&train, train_pairs);

    /* Back to the start: no difference left over. */
    fp = of(&train, &dev, NULL);
    ck_assert_int_eq(differ(&base, &fp), 0);
}
END_TEST

START_TEST(dev_references_are_part_of_the_dev_target)
{
    toy train, dev;
    toy_make(&train, train_pairs);
    dev_make(&dev);
    /* References by line of the dev file: dev pairs are lines 1 and 3. */
    char r0[] = "line zero", r1[] = "ab", r2[] = "line two", r3[] = "c";
    char *refs[] = {r0, r1, r2, r3};
    const rs_data_fingerprint plain = of(&train, &dev, NULL), with = of(&train, &dev, refs);
    ck_assert_int_eq(differ(&plain, &with), RS_DATA_DEV_TGT);
    /* The reference of a pair that is in the dev set: the dev target. */
    r3[0] = 'd';
    rs_data_fingerprint fp = of(&train, &dev, refs);
    ck_assert_int_eq(differ(&with, &fp), RS_DATA_DEV_TGT);
    r3[0] = 'c';
    r1[1] = 'B';
    fp = of(&train, &dev, refs);
    ck_assert_int_eq(differ(&with, &fp), RS_DATA_DEV_TGT);
    r1[1] = 'b';
    /* A character moved from one reference to the next ("ab" "c" → "a" "bc"). */
    char a[] = "a", bc[] = "bc";
    char *moved[] = {r0, a, r2, bc};
    fp = of(&train, &dev, moved);
    ck_assert_int_eq(differ(&with, &fp), RS_DATA_DEV_TGT);
    /* The lines left out of the dev set are not scored against: no change. */
    char other[] = "something else";
    char *unused[] = {other, r1, other, r3};
    fp = of(&train, &dev, unused);
    ck_assert_int_eq(differ(&with, &fp), 0);
    /* Without a dev set there is nothing to score: references change nothing. */
    const rs_data_fingerprint no_dev = of(&train, NULL, NULL);
    fp = of(&train, NULL, refs);
    ck_assert_int_eq(differ(&no_dev, &fp), 0);
}
END_TEST

Suite *fingerprint_suite(void)
{
    Suite *s = suite_create("fingerprint");
    TCase *tc = tcase_create("data fingerprint");
    tcase_add_test(tc, same_ids_same_fingerprint_as_documented);
    tcase_add_test(tc, compare_names_the_parts_that_differ);
    tcase_add_test(tc, each_change_is_a_change_of_its_part);
    tcase_add_test(tc, dev_references_are_part_of_the_dev_target);
    suite_add_tcase(s, tc);
    return s;
}
