/* A tiny MPI program with an uneven traffic pattern, run once under Open MPI's
 * pml_monitoring to produce the *.prof test files next to it (see README). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, i;
	char *buf;
	double x = 1.0, y;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	buf = calloc(1 << 20, 1);
	/* ring: rank r sends (r + 1) * 64 KiB to r + 1 */
	MPI_Sendrecv(buf, (rank + 1) << 16, MPI_CHAR, (rank + 1) % size, 0,
		     buf, 1 << 20, MPI_CHAR, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	/* rank 0 sends one small message to everybody else */
	if (rank == 0)
		for (i = 1; i < size; i++)
			MPI_Send(buf, 100, MPI_CHAR, i, 1, MPI_COMM_WORLD);
	else
		MPI_Recv(buf, 100, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	free(buf);
	if (rank == 0)		/* the end marker `demand record --expect` tests look for */
		printf("traffic: %d ranks done\n", size);
	MPI_Finalize();
	return 0;
}
