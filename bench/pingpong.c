/* Two-rank ping-pong: half the round-trip time per message size, best of several repeats
 * (bench/parx_mpi_cost.py runs it under the patched and unpatched Open MPI).
 * usage: pingpong ITERATIONS REPEATS SIZE... ; prints "size usec" per size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double half_rtt(char *buf, int size, int iterations, int rank)
{
	double t0;
	int i;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < iterations; i++) {
		if (rank == 0) {
			MPI_Send(buf, size, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, size, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, size, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, size, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) / (2.0 * iterations) * 1e6;
}

int main(int argc, char **argv)
{
	int rank, a, r, iterations, repeats, size;
	double best, t;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 4) {
		if (rank == 0)
			fprintf(stderr, "usage: pingpong ITERATIONS REPEATS SIZE...\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	iterations = atoi(argv[1]);
	repeats = atoi(argv[2]);
	buf = calloc(1, 1 << 22);
	for (a = 3; a < argc; a++) {
		size = atoi(argv[a]);
		half_rtt(buf, size, iterations / 10 + 1, rank);	/* warm-up */
		best = 1e30;
		for (r = 0; r < repeats; r++) {
			t = half_rtt(buf, size, iterations, rank);
			best = t < best ? t : best;
		}
		if (rank == 0)
			printf("%d %.4f\n", size, best);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
