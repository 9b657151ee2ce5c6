/* The per-message work the PARX patch adds to Open MPI's ob1 send path when openib answers
 * the LID hook (patches/openmpi/4.1-parx-lid-selection.patch, mca_pml_ob1_parx_btl): walk
 * the endpoint's modules, ask each for its LIDs, draw the coin, look Table 1 up, pick the
 * module. Timed here on synthetic endpoints (4 modules, LMC 2) with parx/table1.c itself,
 * because no InfiniBand HCA is here to run it inside Open MPI. Prints ns per message. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../parx/table1.h"

struct module {
	uint16_t local_lid, remote_lid;
};

/* what openib's hook does: two loads through an indirect call */
static int (*volatile lids_hook)(const struct module *, uint16_t *, uint16_t *);

static int lids(const struct module *m, uint16_t *local, uint16_t *remote)
{
	*local = m->local_lid;
	*remote = m->remote_lid;
	return 0;
}

static const struct module *pick(const struct module *mods, int n, size_t size)
{
	static unsigned int coin = 0x9e3779b9u;
	int i, want = -1;

	for (i = 0; i < n; i++) {
		uint16_t local, remote;

		if (lids_hook(&mods[i], &local, &remote))
			continue;
		if (want < 0) {
			coin = coin * 1103515245u + 12345u;
			want = parx_table1_select(parx_lid_quadrant(local), parx_lid_quadrant(remote),
						  size, 512, coin >> 16);
			if (want < 0)
				return NULL;
		}
		if ((int)(remote % PARX_NUM_LIDS) == want)
			return &mods[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 100000000L;
	struct module mods[4];
	struct timespec t0, t1;
	uintptr_t sink = 0;
	int k;

	lids_hook = lids;
	for (k = 0; k < 4; k++) {	/* LIDs 1000q + 4h + k: quadrant 1 to quadrant 3 */
		mods[k].local_lid = (uint16_t)(1000 + 4 + k);
		mods[k].remote_lid = (uint16_t)(3000 + 8 + k);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		sink += (uintptr_t)pick(mods, 4, (size_t)(i & 1023));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.3f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
	return sink == 1;	/* keeps the loop */
}
