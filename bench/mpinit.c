/* The smallest MPI job: what `mpirun` start-up costs before any application code
 * (bench/overheads.py times it at 1-4 ranks). */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
