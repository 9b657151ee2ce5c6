/*
 * floyd: SimGrid's Floyd routing (FloydZone in src/kernel/routing/FloydZone.cpp: add_route,
 * do_seal, get_local_route) on the switch graph of the subnet, so that a study can route a
 * network as its SimGrid simulation does and tell the routing apart from the model.
 * Written from SimGrid's semantics (docs/routing.md#floyd), not from its code:
 *
 *  - Nodes: the switches, indexed in ascending node GUID (host byte order), SimGrid's netpoint
 *    ids (creation order). t2hx's generated fabrics give GUIDs in fabric order (ring position,
 *    grid position), the order a platform of them would declare its routers in. Not OpenSM's
 *    switch table order (px_graph's), which sorts GUIDs in network byte order and differs
 *    from our GUID order beyond 255 switches. Hosts are left out: a host is a leaf, so as an
 *    intermediate it never changes a route, and the switch part of a host-to-host route is
 *    the route between the two switches.
 *  - add_route: one symmetrical route per pair of cabled switches, cost 1 (one link), its
 *    predecessor the source. Parallel cables make one route, through the lowest port.
 *  - do_seal: the loopback (cost 1 on the diagonal, as SimGrid's network models add one), then
 *    for c, for a, for b in index order: a->c->b replaces a->b when a->b has no route yet or
 *    is strictly longer (ties: the first found stays), and b's predecessor on a->b becomes
 *    its predecessor on c->b.
 *  - get_local_route: the route s->t is the predecessor chain of row s, from t back to s.
 *
 * LFTs: switch v sends every LID of the terminal (or switch) at switch t to the first hop of
 * the route v->t; the LID's own port at t. Floyd's routes are suffix-consistent (from any
 * switch of s->t, the route to t is the rest of s->t), so these destination-based tables carry
 * every packet along SimGrid's route. All LIDs of a port (LMC) take the same route. One SL/VL:
 * SimGrid has no deadlock to avoid, so the engine does no layering (px_layers_single).
 *
 * Three n x n tables (cost, predecessor, first-hop channel: 12 bytes per switch pair) and the
 * n^3 loop, as in SimGrid: 1.4 s for 1,024 switches.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "px_engine.h"

#define FLOYD_INF UINT32_MAX

typedef struct floyd {
	int n;
	int *sw_at;		/* Floyd index -> switch index */
	int *idx_of;		/* switch index -> Floyd index */
	uint32_t *cost;		/* [a * n + b]: links on the route a->b, FLOYD_INF: none yet */
	int32_t *pred;		/* [a * n + b]: node before b on the route a->b, -1: none */
} floyd_t;

static void floyd_free(floyd_t *f)
{
	free(f->sw_at);
	free(f->idx_of);
	free(f->cost);
	free(f->pred);
}

static const px_graph_t *guid_graph;

static int cmp_guid(const void *x, const void *y)
{
	uint64_t a = guid_graph->sws[*(const int *)x].guid, b = guid_graph->sws[*(const int *)y].guid;

	return (a > b) - (a < b);
}

static int floyd_init(floyd_t *f, const px_graph_t *g)
{
	size_t n = (size_t)g->nsw, i;
	int s;

	memset(f, 0, sizeof(*f));
	f->n = g->nsw;
	f->sw_at = malloc((n + 1) * sizeof(int));
	f->idx_of = malloc((n + 1) * sizeof(int));
	f->cost = malloc(n * n * sizeof(uint32_t) + 1);
	f->pred = malloc(n * n * sizeof(int32_t) + 1);
	if (!f->sw_at || !f->idx_of || !f->cost || !f->pred)
		return -1;
	for (s = 0; s < g->nsw; s++)
		f->sw_at[s] = s;
	guid_graph = g;
	qsort(f->sw_at, n, sizeof(int), cmp_guid);
	guid_graph = NULL;
	for (s = 0; s < g->nsw; s++)
		f->idx_of[f->sw_at[s]] = s;
	for (i = 0; i < n * n; i++) {
		f->cost[i] = FLOYD_INF;
		f->pred[i] = -1;
	}
	return 0;
}

/* SimGrid's add_route, once per direction of every cable (symmetrical routes of one link). */
static void floyd_add_routes(floyd_t *f, const px_graph_t *g)
{
	size_t n = (size_t)f->n;
	int c;

	for (c = 0; c < g->nchan; c++) {
		size_t a = (size_t)f->idx_of[g->chans[c].from], b = (size_t)f->idx_of[g->chans[c].to];

		f->cost[a * n + b] = 1;
		f->pred[a * n + b] = (int32_t)a;
	}
}

/* SimGrid's do_seal: the loopback, then the triple loop with strict improvement. */
static void floyd_seal(floyd_t *f)
{
	size_t n = (size_t)f->n, a, b, c;

	for (a = 0; a < n; a++)
		if (f->pred[a * n + a] < 0) {
			f->cost[a * n + a] = 1;
			f->pred[a * n + a] = (int32_t)a;
		}
	for (c = 0; c < n; c++) {
		/* row c and column c do not change while c is the intermediate */
		const uint32_t *cost_c = f->cost + c * n;
		const int32_t *pred_c = f->pred + c * n;

		for (a = 0; a < n; a++) {
			uint32_t *cost_a = f->cost + a * n, ac = cost_a[c];
			int32_t *pred_a = f->pred + a * n;

			if (ac == FLOYD_INF)
				continue;
			for (b = 0; b < n; b++) {
				uint32_t cb = cost_c[b];

				if (cb != FLOYD_INF && (cost_a[b] == FLOYD_INF || ac + cb < cost_a[b])) {
					cost_a[b] = ac + cb;
					pred_a[b] = pred_c[b];
				}
			}
		}
	}
}

/* SimGrid's get_local_route, first hop only: the node after a on the route a->b (a != b),
 * or -1 when there is no route. */
static int floyd_first_hop(const floyd_t *f, int a, int b)
{
	const int32_t *pred_a = f->pred + (size_t)a * (size_t)f->n;
	int x = b, steps = 0;

	while (pred_a[x] != a) {
		if (pred_a[x] < 0 || ++steps > f->n)
			return -1;
		x = pred_a[x];
	}
	return x;
}

/* The channel from switch v to its neighbour w with the lowest port, PX_NO_CHAN if none. */
static int32_t lowest_channel(const px_graph_t *g, int v, int w)
{
	int32_t best = PX_NO_CHAN;
	int i;

	for (i = 0; i < g->sws[v].nout; i++) {
		int c = g->sws[v].out[i];

		if (g->chans[c].to == w && (best == PX_NO_CHAN || g->chans[c].port < g->chans[best].port))
			best = c;
	}
	return best;
}

int floyd_route(px_engine_t *e, px_graph_t *g, int *order)
{
	floyd_t f;
	int32_t *hop = NULL;	/* [t * nsw + v]: channel of switch v towards switch t */
	size_t nsw = (size_t)g->nsw;
	int v, t, d, no_route = 0, unreachable = 0, rc = -1;
	struct timespec t0, t1;

	(void)e;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (floyd_init(&f, g) || !(hop = malloc(nsw * nsw * sizeof(int32_t) + 1))) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA71: out of memory for the Floyd tables of %d "
		       "switches\n", g->nsw);
		goto out;
	}
	floyd_add_routes(&f, g);
	floyd_seal(&f);
	for (t = 0; t < g->nsw; t++)
		for (v = 0; v < g->nsw; v++) {
			int32_t *h = &hop[(size_t)t * nsw + (size_t)v];
			int x;

			*h = PX_NO_CHAN;
			if (v == t)
				continue;
			x = floyd_first_hop(&f, f.idx_of[v], f.idx_of[t]);
			if (x >= 0)
				*h = lowest_channel(g, v, f.sw_at[x]);
			if (*h == PX_NO_CHAN && no_route++ < 16)
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA72: no route from switch 0x%016" PRIx64
				       " to switch 0x%016" PRIx64 "\n", g->sws[v].guid, g->sws[t].guid);
		}
	for (d = 0; d < g->ndest; d++) {
		memcpy(g->next + (size_t)d * nsw, hop + (size_t)g->dests[d].sw * nsw,
		       nsw * sizeof(int32_t));
		if (px_install_dest(g, d))
			unreachable++;
		g->dests[d].routed = 1;
		order[d] = d;
	}
	if (unreachable) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA73: %d destination LIDs are unreachable; not "
		       "routing\n", unreachable);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	PX_LOG(g, OSM_LOG_INFO, "Floyd routes between %d switches (SimGrid FloydZone, switches "
	       "in ascending GUID order) in %.3f s\n", g->nsw,
	       (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	rc = 0;
out:
	free(hop);
	floyd_free(&f);
	return rc;
}
