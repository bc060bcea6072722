/* What writing and reading a checkpoint share (private to src/model/): the
 * fixed sizes of the byte layout and the sections, named and in the order
 * they are written (docs/checkpoint-format.md). checkpoint_save.c writes,
 * checkpoint.c reads. */
#ifndef RS_CHECKPOINT_SECTIONS_H
#define RS_CHECKPOINT_SECTIONS_H

#define HEADER_BYTES 24 /* magic 8, version 4, section count 4, file size 8 */
#define TRAILER_BYTES 4 /* CRC-32 */
#define TRAIN_BYTES 68  /* see the "train" section in the format document */
#define DATA_BYTES 24   /* the "data" section: the training data's fingerprint */
#define EPOCH_BYTES 16  /* the "epoch" section: the current epoch's loss sum and tokens */
#define MAX_NAME 64     /* section and tensor names */

enum {
    S_CONFIG,
    S_SRC_VOCAB,
    S_TGT_VOCAB,
    S_SPM_SRC,
    S_SPM_TGT,
    S_PARAMS,
    S_ADAM_M,
    S_ADAM_V,
    S_TRAIN,
    S_DATA,
    S_EPOCH,
    S_COUNT
};

/* The sections' names in the file, by the enum above; also the order in
 * which they are written. */
extern const char *const rs_checkpoint_section_names[S_COUNT];

#endif
