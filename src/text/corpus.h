/* Reading text files: sentence pairs for training, plain lines for
 * translation. A line ends at "\n", "\r\n" or a lone "\r" (Unix, Windows
 * and old Mac files alike; a "\r" never stays inside a line). Every line must
 * be UTF-8 without NUL bytes; a UTF-8 byte-order mark at the start of a file
 * is dropped. Input compressed with gzip is decompressed (see
 * rs_line_reader). Errors name the file ("<stdin>" for the path "-") and the
 * 1-based line: "data/x.tsv:17: no tab between source and target". A line
 * holds at most RS_LINE_MAX_BYTES bytes: a longer one is an error, found
 * before more than that is read into memory (a sentence is far shorter; a
 * file without line ends, or of NUL bytes, is not text to translate). */
#ifndef RS_CORPUS_H
#define RS_CORPUS_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

#define RS_LINE_MAX_BYTES (1 << 20) /* 1 MiB */

/* Sentence pairs, raw (not normalised). */
typedef struct {
    int count;    /* pairs in use */
    int capacity; /* allocated entries of src and tgt */
    char **src;   /* [count] owned */
    char **tgt;   /* [count] owned */
    long first;   /* pairs of the file before src[0]: a pair reader's later batches */
} rs_pairs;

typedef struct {
    int count;
    int capacity;
    char **lines; /* [count] owned, without the line ends */
} rs_lines;

void rs_pairs_free(rs_pairs *pairs);
void rs_lines_free(rs_lines *lines);

/* Reads "source<TAB>target[<TAB>anything]" lines (Tatoeba exports carry an
 * attribution column), exchanging the sides when swap is set. Empty lines and
 * empty sentences (also those of white space only, rs_text_is_blank) are
 * errors. path "-" is stdin. Like the other readers it
 * fills out from scratch (out need not be initialised; free it with
 * rs_pairs_free) and leaves it empty on failure. */
int rs_pairs_read_tsv(const char *path, int swap, rs_pairs *out, rs_error *err);

/* Reads two line-aligned files: line i of src_path and line i of tgt_path
 * make pair i. They must have as many lines, none of them empty or white
 * space only. */
int rs_pairs_read_parallel(const char *src_path, const char *tgt_path, rs_pairs *out,
                           rs_error *err);

/* Pairs with an empty side, left out instead of refused (as Marian's
 * corpus reader does): an empty line, an empty or all-blank column or line
 * of either side. The first such pair's file and 1-based line are kept for
 * the warning ("train.de: 2 pairs with an empty side left out, the first at
 * line 3"); the file is the side's (the TSV's for a TSV). */
typedef struct {
    int count;
    long first_line;        /* 0: none */
    const char *first_file; /* the path as given, or "<stdin>" */
} rs_pairs_skipped;

/* The readers above with empty sides skipped and counted in *skipped
 * (from zero) instead of failing; skipped NULL is the readers above. A TSV
 * line without a tab is still an error, and so are files of unequal length. */
int rs_pairs_read_tsv_lenient(const char *path, int swap, rs_pairs_skipped *skipped, rs_pairs *out,
                              rs_error *err);
int rs_pairs_read_parallel_lenient(const char *src_path, const char *tgt_path,
                                   rs_pairs_skipped *skipped, rs_pairs *out, rs_error *err);

/* Reads every line of a file ("-": stdin); empty lines are kept. */
int rs_lines_read(const char *path, rs_lines *out, rs_error *err);

/* An input with nothing in it is zero sentences or pairs (a shard of a
 * split corpus may be empty), not an error: said to out (NULL: not said),
 * "PROG: NAME: no WHAT (an empty input): nothing DONE" (NAME "-" is
 * "<stdin>"), as score and align say it. */
void rs_note_empty(FILE *out, const char *prog, const char *name, const char *what,
                   const char *done);

/* A streaming reader, one line at a time, for input too large to hold or
 * arriving interactively. Input compressed with gzip (found by its magic
 * bytes 1f 8b, whatever the file's name; concatenated members too) is
 * decompressed on the fly. Other input is read with read(2) as it arrives,
 * so a line from a pipe or terminal is returned as soon as its line end is
 * there. The reader reads the file descriptor of `file` itself: nothing else
 * may read from that FILE (stdin for "-") while the reader is open. */
typedef struct {
    FILE *file;
    const char *name; /* the path (not copied), or "<stdin>" */
    char *buf;        /* the current line */
    size_t cap;
    long line;          /* 1-based number of the last line returned */
    int started;        /* the first bytes have been read (and looked at for gzip) */
    int after_cr;       /* the last line ended at "\r": a "\n" next belongs to it */
    unsigned char *raw; /* [CHUNK] bytes as read: the text, or gzip's input */
    size_t raw_len, raw_pos;
    void *gz;            /* the inflate state (z_stream), when the input is gzip */
    unsigned char *text; /* [CHUNK] decompressed bytes, when gzip */
    size_t text_len, text_pos;
    int gz_member_ended; /* inflate reached the end of a gzip member */
} rs_line_reader;

int rs_line_reader_open(rs_line_reader *r, const char *path, rs_error *err);

/* Sets *line (valid until the next call) and *len to the next line without
 * its line end; returns 1, or 0 at the end of the input, or -1 on a read
 * error or a malformed line. */
int rs_line_reader_next(rs_line_reader *r, char **line, size_t *len, rs_error *err);

/* 1 when the next rs_line_reader_next can start without waiting: bytes are
 * buffered, the input is a regular file, or the descriptor has data (poll).
 * For batching interactive input: a batch takes lines while this holds. */
int rs_line_reader_ready(const rs_line_reader *r);

void rs_line_reader_close(rs_line_reader *r);

/* Pairs read as they come, a batch at a time, for a command whose memory
 * should not grow with its input (score): the rules of the readers above,
 * empty_target: a target may be empty (or
 * white space only), as a translation may be, where a source may not. Parallel files are read line
 * for line; one that ends first is an error counting both files' lines. */
typedef struct {
    rs_line_reader tsv; /* the TSV file, or the source file of parallel ones */
    rs_line_reader tgt; /* the target file of parallel ones */
    int parallel, swap, empty_target;
    long pairs; /* read so far */
} rs_pair_reader;

int rs_pair_reader_open_tsv(rs_pair_reader *r, const char *path, int swap, int empty_target,
                            rs_error *err);
int rs_pair_reader_open_parallel(rs_pair_reader *r, const char *src_path, const char *tgt_path,
                                 int empty_target, rs_error *err);

/* Appends up to max pairs to out (skipped as in the lenient readers, or
 * NULL: a pair with an empty side is an error); returns how many, 0 at the
 * end, or -1 with out freed. An empty out gets its `first` set. */
int rs_pair_reader_read(rs_pair_reader *r, int max, rs_pairs_skipped *skipped, rs_pairs *out,
                        rs_error *err);
/* 1 when the next pair can be read without waiting (rs_line_reader_ready
 * of its file or files). */
int rs_pair_reader_ready(const rs_pair_reader *r);
/* The next chunk of pairs into out (emptied first): up to max, fewer when
 * the next cannot be read without waiting, so that a pipe's pairs are
 * processed as they come, as translate's lines are. Returns how many, 0 at
 * the end, or -1 with out freed. Memory holds a chunk, not the input: score
 * and align --pairs read so. */
int rs_pair_reader_chunk(rs_pair_reader *r, int max, rs_pairs *out, rs_error *err);
void rs_pair_reader_close(rs_pair_reader *r);

#endif
