/* px_run: destination order, weight updates and unreachable LIDs of one routing run. */
#include "px_run.h"

#include <stdlib.h>
#include <string.h>

int px_run_init(px_run_t *r, px_graph_t *g, int *order, px_chan_filter_t filter, void *arg,
		px_explain_t explain)
{
	int t, d;

	memset(r, 0, sizeof(*r));
	r->g = g;
	r->order = order;
	r->filter = filter;
	r->filter_arg = arg;
	r->explain = explain;
	r->first = malloc(((size_t)g->nterm + 1) * sizeof(int));
	r->ones = calloc((size_t)g->nsw + 1, sizeof(uint64_t));
	r->w = calloc((size_t)g->nsw + 1, sizeof(uint64_t));
	if (!r->first || !r->ones || !r->w) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA23: out of memory\n");
		px_run_free(r);
		return -1;
	}
	px_terminal_counts(g, r->ones);
	for (t = 0; t < g->nterm; t++)
		r->first[t] = -1;
	/* a terminal's LIDs are consecutive destinations */
	for (d = g->ndest - 1; d >= 0; d--)
		if (g->dests[d].term >= 0)
			r->first[g->dests[d].term] = d;
	return 0;
}

void px_run_free(px_run_t *r)
{
	free(r->first);
	free(r->ones);
	free(r->w);
	r->first = NULL;
	r->ones = r->w = NULL;
}

void px_run_dest(px_run_t *r, int d, const uint64_t *src_weight)
{
	px_graph_t *g = r->g;
	int miss = px_route_dest(g, d, r->filter, r->filter_arg);

	if (miss) {
		char why[128] = "";

		if (r->explain)
			r->explain(g, d, why, sizeof(why));
		if (r->unreachable < 16)
			PX_LOG(g, OSM_LOG_ERROR, "ERR FA24: LID %u (offset %d) is unreachable from %d "
			       "switches%s\n", g->dests[d].lid, g->dests[d].offset, miss, why);
		r->unreachable++;
	}
	px_update_weights(g, d, src_weight);
	g->dests[d].routed = 1;
	r->order[r->norder++] = d;
}

void px_run_node(px_run_t *r, int node, const uint64_t *src_weight)
{
	const px_graph_t *g = r->g;
	int k, d;

	for (k = 0; k < g->nodes[node].nterms; k++) {
		int t = g->nodes[node].terms[k];

		for (d = r->first[t]; d >= 0 && d < g->ndest && g->dests[d].term == t; d++)
			px_run_dest(r, d, src_weight);
	}
}

void px_add_node_weight(const px_graph_t *g, int node, uint64_t w, uint64_t *src_weight)
{
	int m;

	for (m = 0; m < g->nodes[node].nterms; m++)
		src_weight[g->terms[g->nodes[node].terms[m]].sw] += w;
}

int px_run_finish(px_run_t *r)
{
	const px_graph_t *g = r->g;
	int d;

	for (d = 0; d < g->ndest; d++)
		if (!g->dests[d].routed && g->dests[d].term >= 0)
			px_run_dest(r, d, r->ones);
	for (d = 0; d < g->ndest; d++)
		if (!g->dests[d].routed)
			px_run_dest(r, d, r->ones);
	return r->unreachable;
}

static const uint64_t *sort_key;

static int cmp_desc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (sort_key[x] != sort_key[y])
		return sort_key[x] < sort_key[y] ? 1 : -1;
	return x - y;
}

void px_sort_nodes_desc(int *nodes, int n, const uint64_t *key)
{
	sort_key = key;
	qsort(nodes, (size_t)n, sizeof(int), cmp_desc);
	sort_key = NULL;
}
