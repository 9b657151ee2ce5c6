/*
 * px_graph: the switch graph of the subnet and the weighted shortest-path search shared by
 * the parx and sar routing engines (DFSSSP-style: one destination LID at a time, paths from
 * every switch, then an edge-weight update before the next destination).
 *
 * Written from the algorithms in Domke et al. SC19 (Alg. 1) and SC16 (Alg. 1); the graph is
 * rebuilt on every routing run from OpenSM's subnet tables.
 */
#ifndef PX_GRAPH_H
#define PX_GRAPH_H

#include <stdint.h>
#ifdef PX_STANDALONE
/* px-sar (px_sar.c): the same routing on a graph read from a snapshot, without OpenSM */
#include "px_standalone.h"
#else
/* osm_config.h first: it defines the macros (ENABLE_OSM_PERF_MGR, ...) that shape OpenSM's
 * structs; without it the plugin would see a different struct layout than opensm. */
#include <opensm/osm_config.h>
#include <opensm/osm_opensm.h>
#endif

#define PX_NO_CHAN (-1)
#define PX_MAX_NAME 64

/* A directed inter-switch link (one switch port towards its peer): the unit of edge weights
 * and of channel dependencies. */
typedef struct px_chan {
	int from, to;		/* switch indices */
	uint8_t port;		/* out port on `from` */
	uint64_t weight;	/* accumulated path load (the DFSSSP weight) */
} px_chan_t;

typedef struct px_switch {
#ifdef PX_STANDALONE
	uint8_t *lft;		/* the new LFT, lft_size entries, OSM_NO_PATH where unset */
	uint16_t lft_size, max_lid_ho;
#else
	osm_switch_t *osw;
#endif
	uint64_t guid;
	uint16_t lid;		/* base LID of port 0 */
	int quadrant;		/* parx only: from the switch LID, -1 if unknown */
	int nterm;		/* number of terminal ports attached */
	int *out, *in;		/* channel ids leaving / entering this switch */
	int nout, nin;
} px_switch_t;

/* A node name (hostname = first word of the NodeDescription) and its terminal ports. */
typedef struct px_node {
	char name[PX_MAX_NAME + 1];
	uint64_t guid;		/* node GUID */
	int *terms;
	int nterms;
} px_node_t;

/* A terminal (CA/router) port attached to a switch. */
typedef struct px_term {
	uint64_t port_guid;
	int node;		/* px_node index */
	int sw;			/* attached switch index */
	uint8_t sw_port;	/* switch port facing the terminal */
	uint16_t base_lid, top_lid;
} px_term_t;

/* A destination LID to route: either a terminal LID (term >= 0, offset = LID - base LID)
 * or a switch LID (term < 0). */
typedef struct px_dest {
	uint16_t lid;
	int sw;			/* switch where the LID lives or is attached */
	uint8_t last_port;	/* port on `sw` (0 for the switch itself) */
	int term;
	int offset;
	int routed;		/* set once processed in this run */
} px_dest_t;

typedef struct px_graph px_graph_t;

/* Returns nonzero when channel `c` may be used for destination `d` (link removal rules). */
typedef int (*px_chan_filter_t)(const px_graph_t *g, int c, const px_dest_t *d, void *arg);

struct px_graph {
	osm_opensm_t *osm;
	const char *engine;	/* engine name, prefixed to every log line */
	int nsw, nchan, nterm, nnode, ndest;
	px_switch_t *sws;
	px_chan_t *chans;
	px_term_t *terms;
	px_node_t *nodes;
	px_dest_t *dests;
	uint16_t max_lid;
	int *dest_of_lid;	/* LID -> dest index or -1 */
	int *sw_of_lid;		/* LID -> switch the LID lives at/attaches to, or -1 */
	int32_t *next;		/* [dest * nsw + sw] -> channel towards the dest, PX_NO_CHAN */
	/* Dijkstra scratch */
	uint64_t *cost;
	int *heap, *heap_pos, *order;
	uint64_t *flow;
	int nsettled;		/* switches reached by the last px_route_dest */
};

#ifndef PX_STANDALONE
#define PX_LOG(g, level, fmt, ...) \
	OSM_LOG(&(g)->osm->log, level, "%s: " fmt, (g)->engine, ##__VA_ARGS__)
#endif

#ifndef PX_STANDALONE
/* Builds the graph from the subnet. Returns 0 or -1 (logged). */
int px_graph_build(px_graph_t *g, osm_opensm_t *osm, const char *engine);
#endif
/* Allocates the path-search arrays of a graph whose switches, channels and dests are set
 * (px_graph_build, px_snapshot_read). Returns 0 or -1 (logged). */
int px_graph_scratch(px_graph_t *g);
void px_graph_free(px_graph_t *g);

/* Finds a node by hostname or by node/port GUID written as 0x...; -1 if unknown. */
int px_graph_find_node(const px_graph_t *g, const char *name);

/* Computes paths from every switch to dest `d` in the graph filtered by `filter` (may be
 * NULL): minimal hop count first, least accumulated weight second. Stores them in g->next
 * and the LFT entries in new_lft. Returns the number of switches that cannot reach `d`. */
int px_route_dest(px_graph_t *g, int d, px_chan_filter_t filter, void *arg);

/* Writes the LFT entries of dest `d` from g->next[d]: each switch's port on its channel,
 * the dest's own port at its switch. Returns the number of switches without a channel. */
int px_install_dest(px_graph_t *g, int d);

/* Adds src_weight[s] (the demand of the sources at switch s towards d) to every channel of
 * the path from s to d. Call right after px_route_dest(g, d, ...). */
void px_update_weights(px_graph_t *g, int d, const uint64_t *src_weight);

/* Fills src_weight with the number of terminals per switch (the "+1 per path" update). */
void px_terminal_counts(const px_graph_t *g, uint64_t *src_weight);

#endif
