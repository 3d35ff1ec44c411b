/* mpi.c - repack --part auto as the ranks of an MPI job, in a build with
 * -DRELAYOUT_MPI=ON: each rank writes its part (rp_part), the ranks'
 * results are gathered so that every rank fails when one does, and rank 0
 * writes the index from the completion records, as --finish does. */
#include "cli.h"
#include "repack.h"

#include <mpi.h>
#include <stdlib.h>

int rp_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") ||
         getenv("PMI_SIZE");
}

/* At exit, once this rank has said why it fails: MPI_Finalize waits for
 * every rank, so none ends the job before the others have said theirs. */
static void finalize(void) { MPI_Finalize(); }

relayout_status rp_mpi_run(rp_options *o, const char *in, const char *out,
                           relayout_error *err) {
  int rank, size;
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
    return cli_fail(err, RELAYOUT_ERR_ARGUMENT, "MPI_Init failed");
  atexit(finalize);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  o->part = rank;
  o->parts = size;
  relayout_status s = rp_part(o, in, out, err);
  int mine = (int)s, worst = 0, index = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!s && worst)
    s = cli_fail(err, (relayout_status)worst,
                 "rank %d of %d wrote its part, but another rank failed: no "
                 "index written (a rerun redoes only the shards without a "
                 "record)",
                 rank, size);
  if (!worst && rank == 0) index = (int)(s = rp_finish(out, err));
  MPI_Bcast(&index, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!s && index)
    s = cli_fail(err, (relayout_status)index,
                 "rank 0 could not write the index of %s", out);
  return s;
}
