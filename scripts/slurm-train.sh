#!/bin/sh
# Data-parallel rnnsearch training on a Slurm cluster: one MPI rank per node,
# each training with all the cores Slurm gives it. Submit from the checkout:
#
#   OUT=/shared/models/wmt-de-en \
#   DATA="--src /shared/wmt/train.de --tgt /shared/wmt/train.en --dev-src /shared/wmt/dev.de --dev-tgt /shared/wmt/dev.en" \
#   SETTINGS="--subwords 32000 --emb 512 --hidden 1024 --att 1024 --maxout 512 --batch-size 256 --epochs 8" \
#   sbatch --nodes=4 scripts/slurm-train.sh
#
# OUT and the DATA files must be on a filesystem every node sees. SETTINGS go
# to the first run only: when OUT/last.ckpt exists (a requeued or resubmitted
# job) the run resumes from it with the checkpoint's settings, on however many
# nodes this job has (arguments to this script, such as --epochs 12, go to
# every run). The global batch (--batch-size) is what one process
# would use; each rank computes its share of every batch.
# LAUNCH=mpirun uses Open MPI's own launcher inside the allocation instead of
# srun (when Slurm was built without PMIx); MAP_BY and MPIRUN_ARGS adjust it.
#SBATCH --job-name=rnnsearch
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=8
#SBATCH --time=24:00:00
#SBATCH --requeue
#SBATCH --output=rnnsearch-%j.log
set -eu
: "${OUT:?set OUT to the model directory}" "${DATA:?set DATA to the data options}"
RNNSEARCH=${RNNSEARCH:-./rnnsearch}
THREADS=${SLURM_CPUS_PER_TASK:-1}
RANKS=${SLURM_NTASKS:-2}
export OPENBLAS_NUM_THREADS="$THREADS"

if [ -f "$OUT/last.ckpt" ]; then
    ARGS="$DATA --out $OUT --resume --threads $THREADS"
else
    ARGS="$DATA ${SETTINGS:-} --out $OUT --threads $THREADS"
fi
echo "rnnsearch on $RANKS ranks x $THREADS threads: train $ARGS" >&2
# shellcheck disable=SC2086
case ${LAUNCH:-srun} in
srun) exec srun --mpi=pmix --ntasks="$RANKS" --cpu-bind=none "$RNNSEARCH" train $ARGS "$@" ;;
mpirun) exec mpirun -np "$RANKS" --map-by "${MAP_BY:-ppr:1:node}" --bind-to none \
            -x OPENBLAS_NUM_THREADS ${MPIRUN_ARGS:-} "$RNNSEARCH" train $ARGS "$@" ;;
*) echo "LAUNCH must be srun or mpirun" >&2; exit 2 ;;
esac
