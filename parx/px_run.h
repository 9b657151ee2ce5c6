/*
 * px_run: one routing run of the parx or sar engine, the part both share. Destinations are
 * routed one at a time in the order the engine chooses; after each, the sources' weights are
 * added to its paths (px_update_weights); the order is kept for the VL layering. Whatever
 * the engine did not route itself is finished the DFSSSP way: all other terminal LIDs, then
 * the switch LIDs, each with +1 per source terminal.
 */
#ifndef PX_RUN_H
#define PX_RUN_H

#include <stddef.h>
#include "px_graph.h"

typedef struct px_run px_run_t;

/* Writes why dest `d` may be unreachable (e.g. " after removing links by rule R1"). */
typedef void (*px_explain_t)(const px_graph_t *g, int d, char *buf, size_t len);

struct px_run {
	px_graph_t *g;
	px_chan_filter_t filter;	/* link removal, NULL: none */
	void *filter_arg;
	px_explain_t explain;		/* NULL: no explanation */
	int *order, norder;		/* destinations in routing order */
	int *first;			/* terminal -> its first dest index, -1 */
	uint64_t *ones;			/* terminals per switch: the +1 update */
	uint64_t *w;			/* scratch source weights, one per switch */
	int unreachable;		/* LIDs some switch cannot reach */
};

/* Prepares a run writing the routing order to `order` (g->ndest entries). 0 or -1. */
int px_run_init(px_run_t *r, px_graph_t *g, int *order, px_chan_filter_t filter, void *arg,
		px_explain_t explain);
void px_run_free(px_run_t *r);

/* Routes dest `d`, then adds src_weight[s] to the path from every switch s. */
void px_run_dest(px_run_t *r, int d, const uint64_t *src_weight);

/* Routes every LID of node `node` with the same source weights. */
void px_run_node(px_run_t *r, int node, const uint64_t *src_weight);

/* Adds `w` to src_weight[switch] for each terminal port of node `node`. */
void px_add_node_weight(const px_graph_t *g, int node, uint64_t w, uint64_t *src_weight);

/* Routes all LIDs not routed yet (+1 per source terminal) and returns the number of
 * unreachable destination LIDs of the whole run (each one logged). */
int px_run_finish(px_run_t *r);

/* Sorts node indices by key[node], largest first, ties by index (deterministic). */
void px_sort_nodes_desc(int *nodes, int n, const uint64_t *key);

#endif
