/* The fingerprint of the data a run trains on (train/fingerprint.c). */
#ifndef RS_FINGERPRINT_H
#define RS_FINGERPRINT_H

#include "data/dataset.h"
#include "model/model.h"

/* The fingerprint of the data a run trains on, recorded in its checkpoints
 * so that --resume can tell whether it is given the same data. It is taken
 * from what training uses, not from the files: for each side of the training
 * and dev pairs, the CRC-32 of the id sequences (each as its length, then its
 * ids, u32 little-endian) pair by pair in order, after reading (gzip or not,
 * TSV or two files, --swap, CR or CRLF line ends), tokenization
 * (SentencePiece included), vocabulary lookup and the --max-len filter, plus
 * the pair count. So the same corpus stored otherwise is the same data, and
 * any change training would see (a token, a line's order, a pair kept or left
 * out) is a change, while one it cannot see (in a pair over --max-len, or an
 * unknown word for another unknown word) is not. With dev BLEU (dev_refs not
 * NULL: the raw dev targets, indexed by dev->line) the references it is
 * computed against are part of the dev target's CRC, as they choose best.ckpt. */
void rs_data_fingerprint_of(rs_data_fingerprint *fp, const rs_dataset *train, const rs_dataset *dev,
                            char *const *dev_refs);

/* Which parts of two known fingerprints differ: RS_DATA_* bits (a differing
 * pair count counts for both sides), 0 when none does. */
enum { RS_DATA_TRAIN_SRC = 1, RS_DATA_TRAIN_TGT = 2, RS_DATA_DEV_SRC = 4, RS_DATA_DEV_TGT = 8 };
int rs_data_fingerprint_compare(const rs_data_fingerprint *a, const rs_data_fingerprint *b);

#endif
