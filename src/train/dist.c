#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "train/dist.h"

#ifdef RS_WITH_MPI
#include <mpi.h>
#endif

static int g_rank, g_size = 1;
/* Wall time inside the gradient sums (rs_dist_sum_*), summed: a few clock
 * reads a step, for the progress line's share of a step. It includes the
 * wait for the slowest rank to arrive. */
static double g_allreduce_s;

double rs_dist_allreduce_seconds(void)
{
    return g_allreduce_s;
}

int rs_dist_rank(void)
{
    return g_rank;
}
int rs_dist_size(void)
{
    return g_size;
}

void rs_dist_rows(int B, int *lo, int *hi)
{
    *lo = (int)((long long)g_rank * B / g_size);
    *hi = (int)((long long)(g_rank + 1) * B / g_size);
}

#ifdef RS_WITH_MPI

static int g_active;         /* MPI_Init was called */
static int g_agreed_failure; /* every rank knows this run failed (rs_dist_check, rs_dist_agree) */

/* mpirun and Open MPI's launcher set OMPI_COMM_WORLD_SIZE; srun and other
 * PMI launchers set PMIX_RANK or PMI_RANK. Without a launcher the program
 * runs alone, as a build without MPI would. */
static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int rs_dist_init(rs_error *err)
{
    if (g_active || !launched())
        return 0;
    /* Only the main thread calls MPI; training threads inside a rank do not. */
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return rs_fail(err, "MPI_Init failed");
    g_active = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    /* MPI_ERRORS_ARE_FATAL (the default, stated): a rank or link that fails
     * ends the whole job instead of leaving the others waiting. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return 0;
}

int rs_dist_failure_agreed(void)
{
    return g_agreed_failure;
}

int rs_dist_failed_alone(int exit_status)
{
    return g_active && g_size > 1 && exit_status == 1 && !g_agreed_failure;
}

void rs_dist_abort(int exit_status)
{
    MPI_Abort(MPI_COMM_WORLD, exit_status);
}

void rs_dist_finalize(void)
{
    if (g_active)
        MPI_Finalize();
    g_active = 0;
}

/* The sums in flight (rs_dist_sum_start): a step's buckets (train/buckets.h,
 * six), each in pieces of at most 2^30 floats (a layout has at most 2^32). */
enum { MAX_STARTED = 64 };
static MPI_Request g_started[MAX_STARTED];
static int g_nstarted;

/* buf[0..n) summed over ranks in place, in pieces (MPI counts are ints):
 * now (MPI_Allreduce), or started (MPI_Iallreduce) when `start`. */
static int sum_pieces(float *buf, size_t n, int start, rs_error *err)
{
    if (g_size == 1)
        return 0;
    const size_t piece = (size_t)1 << 30;
    const double t0 = rs_clock_seconds();
    for (size_t at = 0; at < n; at += piece) {
        int count = (int)(n - at < piece ? n - at : piece);
        if (start && g_nstarted == MAX_STARTED)
            return rs_fail(err, "more than %d gradient sums in flight", MAX_STARTED);
        const int status = start ? MPI_Iallreduce(MPI_IN_PLACE, buf + at, count, MPI_FLOAT, MPI_SUM,
                                                  MPI_COMM_WORLD, &g_started[g_nstarted++])
                                 : MPI_Allreduce(MPI_IN_PLACE, buf + at, count, MPI_FLOAT, MPI_SUM,
                                                 MPI_COMM_WORLD);
        if (status != MPI_SUCCESS)
            return rs_fail(err, "%s of the gradients failed",
                           start ? "MPI_Iallreduce" : "MPI_Allreduce");
    }
    g_allreduce_s += rs_clock_seconds() - t0;
    return 0;
}

int rs_dist_sum_floats(float *buf, size_t n, rs_error *err)
{
    return sum_pieces(buf, n, 0, err);
}

int rs_dist_sum_start(float *buf, size_t n, rs_error *err)
{
    return sum_pieces(buf, n, 1, err);
}

void rs_dist_sum_poll(void)
{
    if (!g_nstarted)
        return;
    const double t0 = rs_clock_seconds();
    int done;
    MPI_Testall(g_nstarted, g_started, &done, MPI_STATUSES_IGNORE);
    if (done)
        g_nstarted = 0;
    g_allreduce_s += rs_clock_seconds() - t0;
}

int rs_dist_sum_wait(rs_error *err)
{
    if (!g_nstarted)
        return 0;
    const double t0 = rs_clock_seconds();
    const int status = MPI_Waitall(g_nstarted, g_started, MPI_STATUSES_IGNORE);
    g_nstarted = 0;
    g_allreduce_s += rs_clock_seconds() - t0;
    return status == MPI_SUCCESS ? 0 : rs_fail(err, "MPI_Iallreduce of the gradients failed");
}

double rs_dist_sum_double(double value)
{
    double sum = value;
    if (g_size > 1)
        MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

int rs_dist_or(int flags)
{
    int all = flags;
    if (g_size > 1)
        MPI_Allreduce(&flags, &all, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    return all;
}

int rs_dist_broadcast(void *buf, size_t bytes, rs_error *err)
{
    if (g_size == 1)
        return 0;
    const size_t piece = (size_t)1 << 30;
    for (size_t at = 0; at < bytes; at += piece) {
        int count = (int)(bytes - at < piece ? bytes - at : piece);
        if (MPI_Bcast((char *)buf + at, count, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            return rs_fail(err, "MPI_Bcast failed");
    }
    return 0;
}

int rs_dist_broadcast_blob(char **blob, size_t *len, rs_error *err)
{
    if (g_size == 1)
        return 0;
    uint64_t shape[2] = {*blob != NULL, *len};
    if (rs_dist_broadcast(shape, sizeof shape, err))
        return -1;
    if (g_rank != 0) {
        *blob = NULL;
        *len = (size_t)shape[1];
        if (shape[0] && !(*blob = rs_calloc(*len + 1, 1, err)))
            return -1;
    }
    return shape[0] ? rs_dist_broadcast(*blob, *len, err) : 0;
}

int rs_dist_check_exit(int *exit_status, rs_error *err)
{
    if (g_size == 1)
        return *exit_status ? -1 : 0;
    int mine = *exit_status ? g_rank : g_size, lowest = g_size;
    /* Ranks that wait here while rank 0 evaluates or saves sleep instead of
     * spinning in MPI's busy poll, which would take cores from rank 0 when
     * ranks share a machine. */
    MPI_Request request;
    MPI_Iallreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request);
    for (int done = 0;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    if (lowest == g_size)
        return 0;
    struct {
        int32_t exit_status;
        char msg[sizeof err->msg];
    } failure = {0};
    if (g_rank == lowest) {
        failure.exit_status = *exit_status;
        memcpy(failure.msg, err->msg, sizeof failure.msg);
    }
    MPI_Bcast(&failure, (int)sizeof failure, MPI_BYTE, lowest, MPI_COMM_WORLD);
    failure.msg[sizeof failure.msg - 1] = 0;
    if (g_rank != lowest)
        rs_fail(err, "rank %d: %.1000s", lowest, failure.msg);
    *exit_status = failure.exit_status;
    g_agreed_failure = 1;
    return -1;
}

int rs_dist_check(int status, rs_error *err)
{
    int exit_status = status ? 1 : 0;
    return rs_dist_check_exit(&exit_status, err);
}

int rs_dist_agree(uint32_t value, const char *what, rs_error *err)
{
    if (g_size == 1)
        return 0;
    /* max(v) and max(~v) = ~min(v) in one call: equal everywhere iff min = max. */
    uint32_t mine[2] = {value, ~value}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_UINT32_T, MPI_MAX, MPI_COMM_WORLD);
    if (most[0] == (uint32_t)~most[1])
        return 0;
    g_agreed_failure = 1;
    return rs_fail(err, "the ranks disagree on %s (every rank must read the same files)", what);
}

#else /* one process */

/* N copies of the whole training, racing for one model directory, would not
 * be what the user meant. */
int rs_dist_init(rs_error *err)
{
    const char *ranks = getenv("OMPI_COMM_WORLD_SIZE");
    if (!ranks)
        ranks = getenv("PMI_SIZE");
    if (ranks && atoi(ranks) > 1)
        return rs_fail(err,
                       "started as %s ranks (mpirun or srun), but this rnnsearch was built "
                       "without MPI: install libopenmpi-dev and rebuild (make MPI=1)",
                       ranks);
    return 0;
}
int rs_dist_failure_agreed(void)
{
    return 0;
}
int rs_dist_failed_alone(int exit_status)
{
    return 0;
}
void rs_dist_abort(int exit_status)
{
}
void rs_dist_finalize(void)
{
}
int rs_dist_sum_floats(float *buf, size_t n, rs_error *err)
{
    return 0;
}
int rs_dist_sum_start(float *buf, size_t n, rs_error *err)
{
    return 0;
}
void rs_dist_sum_poll(void)
{
}
int rs_dist_sum_wait(rs_error *err)
{
    return 0;
}
double rs_dist_sum_double(double value)
{
    return value;
}
int rs_dist_or(int flags)
{
    return flags;
}
int rs_dist_broadcast(void *buf, size_t bytes, rs_error *err)
{
    return 0;
}
int rs_dist_broadcast_blob(char **blob, size_t *len, rs_error *err)
{
    return 0;
}
int rs_dist_check(int status, rs_error *err)
{
    return status ? -1 : 0;
}
int rs_dist_check_exit(int *exit_status, rs_error *err)
{
    return *exit_status ? -1 : 0;
}
int rs_dist_agree(uint32_t value, const char *what, rs_error *err)
{
    return 0;
}

#endif
