/* Data-parallel training across processes (MPI ranks): who this process is,
 * the sums every step needs, and collective success or failure.
 *
 * Built with MPI (RS_WITH_MPI, `make MPI=1`) and started by a launcher
 * (mpirun, srun), the job is MPI_COMM_WORLD; otherwise, or when not launched
 * by one, it is this process alone: rank 0 of 1, and every call below is
 * immediate (a sum over one rank is the value itself).
 *
 * Every call except rank/size/rows is collective: all ranks make it, in the
 * same order, with the same sizes. */
#ifndef RS_DIST_H
#define RS_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Joins the job when a launcher started this process (MPI_Init). */
int rs_dist_init(rs_error *err);

/* Whether this rank, ending a command with exit_status, must end the whole
 * job (rs_dist_abort) rather than leave it (rs_dist_finalize): it failed
 * (status 1) on its own, so others may wait for it forever. A failure every
 * rank agreed on (rs_dist_check, rs_dist_agree) leaves normally, as do bad
 * usage (status 2, alike on every rank from the same command line) and a
 * stop by signal (128 + n, agreed on in the training loop). */
int rs_dist_failed_alone(int exit_status);

/* Ends every rank of the job with exit_status (MPI_Abort). */
void rs_dist_abort(int exit_status);

/* Leaves the job (MPI_Finalize), if it was joined. */
void rs_dist_finalize(void);

int rs_dist_rank(void); /* 0 .. size-1 */
int rs_dist_size(void);

/* The rows [*lo, *hi) of a B-row global batch that this rank computes: a
 * contiguous block, rows [r·B/N, (r+1)·B/N). */
void rs_dist_rows(int B, int *lo, int *hi);

/* buf[0..n) ← Σ over ranks of buf[0..n), in place (MPI_Allreduce). */
int rs_dist_sum_floats(float *buf, size_t n, rs_error *err);

/* The same sum, started now and finished by rs_dist_sum_wait (MPI_Iallreduce):
 * buf must not be read or written in between. Sums started by one rank are
 * started by every rank, with the same sizes, in the same order. */
int rs_dist_sum_start(float *buf, size_t n, rs_error *err);

/* Moves the started sums on: MPI advances them only inside its calls. */
void rs_dist_sum_poll(void);

/* Waits until every started sum is complete. */
int rs_dist_sum_wait(rs_error *err);

/* Seconds spent so far inside the gradient sums above (the wait for the
 * slowest rank included): what a step waits for them, not what they take
 * while they overlap the backward pass; 0 on one process. */
double rs_dist_allreduce_seconds(void);

/* Σ over ranks of value. */
double rs_dist_sum_double(double value);

/* The bitwise OR over ranks of flags (each rank's own reasons to stop). */
int rs_dist_or(int flags);

/* buf[0..bytes) of rank 0 copied to every rank. */
int rs_dist_broadcast(void *buf, size_t bytes, rs_error *err);

/* Rank 0's blob of *len bytes, as a new allocation on every other rank
 * (rank 0 keeps its own); a NULL blob stays NULL everywhere. */
int rs_dist_broadcast_blob(char **blob, size_t *len, rs_error *err);

/* Collective verdict on a step that each rank did on its own: returns 0 on
 * every rank if status was 0 on every rank, else -1 on every rank with err
 * holding the message of the lowest failing rank ("rank R: ..." when it is
 * another rank). */
int rs_dist_check(int status, rs_error *err);

/* The same for a command's exit status: 0 when *exit_status is 0 on every
 * rank, else -1 with *exit_status and err those of the lowest failing rank. */
int rs_dist_check_exit(int *exit_status, rs_error *err);

/* Whether a failure was agreed on by every rank (rs_dist_check, rs_dist_agree):
 * then rank 0 alone need say so. */
int rs_dist_failure_agreed(void);

/* Fails on every rank, naming `what`, unless value is the same on every rank
 * (a checksum of the data, the model or the training state). */
int rs_dist_agree(uint32_t value, const char *what, rs_error *err);

#endif
