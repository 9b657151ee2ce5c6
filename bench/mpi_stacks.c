/* Endpoint costs of one MPI stack (bench/mpi_stacks.py runs it under each build and PML).
 * usage: mpi_stacks MODE ITERATIONS REPEATS [SIZE...]; rank 0 prints "key value" lines.
 *   latency SIZE...: two ranks, half the round trip, us (best of REPEATS)
 *   overhead: two ranks, us per MPI_Isend of 1 B on the sender, time inside the calls
 *     only (LogP o_s; the receiver pre-posts, best of REPEATS)
 *   rate: two ranks, 1 B messages per second in windows of 64 (Isend x64, Waitall, ack)
 *   coll: every rank; us per Barrier and per 8 B Bcast, Allreduce (MPI_DOUBLE sum) and
 *     Alltoall, the slowest rank's mean (best of REPEATS) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int rank, nranks;

static double pingpong(char *buf, int size, int iterations)
{
	double t0;
	int i;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < iterations; i++) {
		if (rank == 0) {
			MPI_Send(buf, size, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, size, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, size, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, size, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) / (2.0 * iterations) * 1e6;
}

/* windows of 1 B messages 0 -> 1; the receiver pre-posts each window and acks it.
 * posted_first: the sender waits for that ack before its Isends, so each finds its receive
 * posted (overhead); else it sends at once and takes the ack after (rate, pipelined).
 * Returns seconds inside the Isend calls and in total. */
static void stream(int windows, int posted_first, double *in_calls, double *total)
{
	MPI_Request req[WINDOW];
	char buf[WINDOW], ack = 0;
	double t0, t, calls = 0;
	int w, k;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (w = 0; w < windows; w++) {
		if (rank == 0) {
			if (posted_first)
				MPI_Recv(&ack, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			t = MPI_Wtime();
			for (k = 0; k < WINDOW; k++)
				MPI_Isend(&buf[k], 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req[k]);
			calls += MPI_Wtime() - t;
			MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
			if (!posted_first)
				MPI_Recv(&ack, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (k = 0; k < WINDOW; k++)
				MPI_Irecv(&buf[k], 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req[k]);
			MPI_Send(&ack, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
			MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
		}
	}
	*in_calls = calls;
	*total = MPI_Wtime() - t0;
}

static double coll(const char *which, int iterations)
{
	double in[64], out[64], t0, mean, worst;
	char sb[8 * 64], rb[8 * 64];
	int i;

	memset(in, 0, sizeof(in));
	memset(sb, 0, sizeof(sb));
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < iterations; i++) {
		if (!strcmp(which, "barrier"))
			MPI_Barrier(MPI_COMM_WORLD);
		else if (!strcmp(which, "bcast"))
			MPI_Bcast(sb, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
		else if (!strcmp(which, "allreduce"))
			MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		else
			MPI_Alltoall(sb, 8, MPI_CHAR, rb, 8, MPI_CHAR, MPI_COMM_WORLD);
	}
	mean = (MPI_Wtime() - t0) / iterations * 1e6;
	MPI_Allreduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

static double best_of(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	static const char *colls[] = { "barrier", "bcast", "allreduce", "alltoall" };
	int a, r, c, iterations, repeats, size;
	double best, calls, total;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc < 4) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_stacks latency|overhead|rate|coll ITER REPEATS [SIZE...]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	iterations = atoi(argv[2]);
	repeats = atoi(argv[3]);
	if (!strcmp(argv[1], "latency")) {
		buf = calloc(1, 1 << 22);
		for (a = 4; a < argc; a++) {
			size = atoi(argv[a]);
			pingpong(buf, size, iterations / 10 + 1);	/* warm-up */
			for (best = 1e30, r = 0; r < repeats; r++)
				best = best_of(best, pingpong(buf, size, iterations));
			if (rank == 0)
				printf("latency_us.%d %.4f\n", size, best);
		}
		free(buf);
	} else if (!strcmp(argv[1], "overhead") || !strcmp(argv[1], "rate")) {
		int windows = iterations / WINDOW + 1, over = !strcmp(argv[1], "overhead");
		double best_calls = 1e30, best_total = 1e30;

		stream(windows / 10 + 1, over, &calls, &total);	/* warm-up */
		for (r = 0; r < repeats; r++) {
			stream(windows, over, &calls, &total);
			best_calls = best_of(best_calls, calls);
			best_total = best_of(best_total, total);
		}
		if (rank == 0 && over)
			printf("overhead_us %.4f\n", best_calls / ((double)windows * WINDOW) * 1e6);
		if (rank == 0 && !over)
			printf("rate_per_s %.1f\n", (double)windows * WINDOW / best_total);
	} else {
		for (c = 0; c < 4; c++) {
			coll(colls[c], iterations / 10 + 1);
			for (best = 1e30, r = 0; r < repeats; r++)
				best = best_of(best, coll(colls[c], iterations));
			if (rank == 0)
				printf("%s_us.%d %.4f\n", colls[c], nranks, best);
		}
	}
	MPI_Finalize();
	return 0;
}
