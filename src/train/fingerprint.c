/* The fingerprint of the data a run trains on (fingerprint.h). */
#include <string.h>

#include "common/byteorder.h"
#include "common/crc32.h"
#include "train/fingerprint.h"

/* Continues crc over u32 little-endian values: the bytes, and so the CRC, are
 * the same on every machine. */
static uint32_t crc_le32s(uint32_t crc, const int *values, int count)
{
    unsigned char chunk[4 * 256];
    while (count > 0) {
        const int k = count < 256 ? count : 256;
        for (int i = 0; i < k; i++)
            rs_put_le32(chunk + 4 * i, (uint32_t)values[i]);
        crc = rs_crc32_update(crc, chunk, 4 * (size_t)k);
        values += k;
        count -= k;
    }
    return crc;
}

/* One side of d, pair by pair: each sequence's length, then its ids (the
 * length keeps a token moved across a line break from going unseen). */
static uint32_t side_crc(const rs_dataset *d, int side)
{
    uint32_t crc = 0;
    for (int i = 0; i < d->count; i++) {
        const int len = side == RS_SIDE_SRC ? d->src_len[i] : d->tgt_len[i];
        crc = crc_le32s(crc, &len, 1);
        crc = crc_le32s(crc, side == RS_SIDE_SRC ? d->src[i] : d->tgt[i], len);
    }
    return crc;
}

void rs_data_fingerprint_of(rs_data_fingerprint *fp, const rs_dataset *train, const rs_dataset *dev,
                            char *const *dev_refs)
{
    static const rs_dataset none = {0};
    if (!dev)
        dev = &none;
    fp->known = 1;
    fp->train_pairs = (uint32_t)train->count;
    fp->train_src_crc = side_crc(train, RS_SIDE_SRC);
    fp->train_tgt_crc = side_crc(train, RS_SIDE_TGT);
    fp->dev_pairs = (uint32_t)dev->count;
    fp->dev_src_crc = side_crc(dev, RS_SIDE_SRC);
    fp->dev_tgt_crc = side_crc(dev, RS_SIDE_TGT);
    for (int i = 0; dev_refs && i < dev->count; i++) {
        const char *ref = dev_refs[dev->line[i]];
        const int len = (int)strlen(ref);
        fp->dev_tgt_crc = crc_le32s(fp->dev_tgt_crc, &len, 1);
        fp->dev_tgt_crc = rs_crc32_update(fp->dev_tgt_crc, ref, (size_t)len);
    }
}

int rs_data_fingerprint_compare(const rs_data_fingerprint *a, const rs_data_fingerprint *b)
{
    enum { TRAIN = RS_DATA_TRAIN_SRC | RS_DATA_TRAIN_TGT, DEV = RS_DATA_DEV_SRC | RS_DATA_DEV_TGT };
    const struct {
        uint32_t a, b;
        int parts;
    } fields[] = {
        {a->train_pairs, b->train_pairs, TRAIN},
        {a->train_src_crc, b->train_src_crc, RS_DATA_TRAIN_SRC},
        {a->train_tgt_crc, b->train_tgt_crc, RS_DATA_TRAIN_TGT},
        {a->dev_pairs, b->dev_pairs, DEV},
        {a->dev_src_crc, b->dev_src_crc, RS_DATA_DEV_SRC},
        {a->dev_tgt_crc, b->dev_tgt_crc, RS_DATA_DEV_TGT},
    };
    int differ = 0;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (fields[i].a != fields[i].b)
            differ |= fields[i].parts;
    return differ;
}
