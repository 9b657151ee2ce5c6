/*
 * parx: Pattern-Aware Routing for 2D HyperX (Domke et al., SC19, Algorithm 1).
 *
 * Needs LMC = 2 and the PARX LID policy (t2hx writes the guid2lid file): the quadrant of a
 * switch is floor(LID / 1000) mod 10 of its LID (10000..13999), the quadrant of a terminal
 * floor(LID / 1000) of its base LID (0..3999), and a terminal must sit in its switch's
 * quadrant. The engine needs nothing else about the geometry: rule Rx removes links with both
 * ends in a half, and halves are unions of quadrants (see table1.h).
 *
 * Demand file (plugin option parx_demand=<file>, re-read on every routing run):
 *   # comment
 *   <src-node> <dst-node>:<w> [<dst-node>:<w> ...]
 * one line per source node; nodes are hostnames (first word of the NodeDescription) or
 * node/port GUIDs written 0x...; w is an integer 0..255. Unknown nodes are logged and skipped
 * (a node may be down); a malformed line or a weight outside 0..255 fails the routing.
 *
 * Order: destination nodes named in the file first (largest total demand first), each of
 * their 4 LIDs routed in the graph pruned by rule Rx, then +w on every link of the path of
 * each source with demand w; then all other terminal LIDs with +1 per source terminal; then
 * switch LIDs (no pruning) with +1. Unreachable LIDs fail the routing with an error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_engine.h"
#include "px_run.h"
#include "table1.h"

typedef struct demand_in {
	int src;		/* source node */
	unsigned w;
} demand_in_t;

typedef struct demands {
	demand_in_t **in;	/* per destination node */
	int *nin, *cap;
	uint64_t *total;
	int listed;		/* number of destination nodes named in the file */
} demands_t;

static void demands_free(demands_t *dm, int nnode)
{
	int n;

	for (n = 0; dm->in && n < nnode; n++)
		free(dm->in[n]);
	free(dm->in);
	free(dm->nin);
	free(dm->cap);
	free(dm->total);
}

static int demand_add(demands_t *dm, int dst, int src, unsigned w)
{
	if (dm->nin[dst] == dm->cap[dst]) {
		int cap = dm->cap[dst] ? 2 * dm->cap[dst] : 8;
		demand_in_t *n = realloc(dm->in[dst], (size_t)cap * sizeof(*n));

		if (!n)
			return -1;
		dm->in[dst] = n;
		dm->cap[dst] = cap;
	}
	if (!dm->nin[dst])
		dm->listed++;
	dm->in[dst][dm->nin[dst]++] = (demand_in_t){ src, w };
	dm->total[dst] += w;
	return 0;
}

/* A demand line: <src-node> <dst-node>:<w> ...; unknown nodes are skipped, malformed
 * entries fail the run (also on lines whose source is unknown). */
static int demand_line(px_graph_t *g, px_input_t *in, int src, char **save, void *arg)
{
	demands_t *dm = arg;
	char *tok;

	while ((tok = strtok_r(NULL, PX_BLANKS, save))) {
		char *colon = strrchr(tok, ':'), *end;
		long w;
		int dst;

		if (!colon || colon == tok || !colon[1]) {
			PX_LOG(g, OSM_LOG_ERROR, "ERR FA31: %s:%d: '%s' is not <node>:<weight>\n",
			       in->path, in->lineno, tok);
			return -1;
		}
		*colon = '\0';
		w = strtol(colon + 1, &end, 10);
		if (*end || w < 0 || w > 255) {
			PX_LOG(g, OSM_LOG_ERROR, "ERR FA32: %s:%d: weight '%s' for %s is not an "
			       "integer in 0..255\n", in->path, in->lineno, colon + 1, tok);
			return -1;
		}
		dst = px_graph_find_node(g, tok);
		if (dst < 0) {
			px_input_unknown(g, in, tok);
			continue;
		}
		if (src >= 0 && demand_add(dm, dst, src, (unsigned)w)) {
			PX_LOG(g, OSM_LOG_ERROR, "ERR FA33: out of memory reading %s\n", in->path);
			return -1;
		}
	}
	return 0;
}

static int read_demand(px_engine_t *e, px_graph_t *g, demands_t *dm)
{
	int rc;

	memset(dm, 0, sizeof(*dm));
	dm->in = calloc((size_t)g->nnode + 1, sizeof(*dm->in));
	dm->nin = calloc((size_t)g->nnode + 1, sizeof(int));
	dm->cap = calloc((size_t)g->nnode + 1, sizeof(int));
	dm->total = calloc((size_t)g->nnode + 1, sizeof(uint64_t));
	if (!dm->in || !dm->nin || !dm->cap || !dm->total)
		return -1;
	rc = px_read_input(e, g, "parx_demand", "balancing all paths with +1", demand_line, dm);
	if (rc > 0)
		PX_LOG(g, OSM_LOG_INFO, "demand file %s: %d destination nodes listed\n", e->input,
		       dm->listed);
	return rc < 0 ? -1 : 0;
}

/* Checks the LID policy and sets every switch's quadrant. */
static int assign_quadrants(px_engine_t *e, px_graph_t *g)
{
	int s, t, bad = 0;

	if (e->osm->subn.opt.lmc != 2) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA34: parx needs 'lmc 2' (4 LIDs per port), the "
		       "configuration has lmc %u\n", e->osm->subn.opt.lmc);
		return -1;
	}
	for (s = 0; s < g->nsw; s++) {
		unsigned lid = g->sws[s].lid;

		if (lid < 10000 || lid > 13999) {
			if (bad++ < 10)
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA35: switch 0x%016" PRIx64 " has LID %u, "
				       "outside the PARX switch range 10000..13999 (generate the "
				       "guid2lid file with t2hx)\n", g->sws[s].guid, lid);
			continue;
		}
		g->sws[s].quadrant = parx_lid_quadrant(lid);
	}
	for (t = 0; t < g->nterm; t++) {
		const px_term_t *tm = &g->terms[t];
		int q = tm->base_lid < 4000 ? parx_lid_quadrant(tm->base_lid) : -1;

		if (q < 0 || (g->sws[tm->sw].quadrant >= 0 && q != g->sws[tm->sw].quadrant)) {
			if (bad++ < 10)
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA36: port 0x%016" PRIx64 " (%s) has base LID "
				       "%u (quadrant %d) but its switch 0x%016" PRIx64 " has LID %u "
				       "(quadrant %d); the PARX LID policy needs both in one quadrant\n",
				       tm->port_guid, g->nodes[tm->node].name, tm->base_lid, q,
				       g->sws[tm->sw].guid, g->sws[tm->sw].lid,
				       g->sws[tm->sw].quadrant);
		}
	}
	if (bad)
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA37: %d LIDs violate the PARX LID policy\n", bad);
	return bad ? -1 : 0;
}

static int parx_filter(const px_graph_t *g, int c, const px_dest_t *d, void *arg)
{
	(void)arg;
	if (d->term < 0)
		return 1;	/* switch LIDs: plain shortest paths */
	return !parx_rule_removes(d->offset, g->sws[g->chans[c].from].quadrant,
				  g->sws[g->chans[c].to].quadrant);
}

static void parx_explain(const px_graph_t *g, int d, char *buf, size_t len)
{
	if (g->dests[d].term >= 0)
		snprintf(buf, len, " after removing links by rule R%d", g->dests[d].offset + 1);
}

int parx_route(px_engine_t *e, px_graph_t *g, int *order)
{
	demands_t dm;
	px_run_t r;
	int *byload = NULL, n, i, j, rc = -1;

	memset(&dm, 0, sizeof(dm));
	if (assign_quadrants(e, g) || read_demand(e, g, &dm))
		goto out_dm;
	if (px_run_init(&r, g, order, parx_filter, NULL, parx_explain))
		goto out_dm;
	if (!(byload = malloc(((size_t)g->nnode + 1) * sizeof(int))))
		goto out;

	/* 1: destinations named in the demand file, largest total demand first, each LID with
	 * +w on the path of every source with demand w towards it */
	for (n = 0; n < g->nnode; n++)
		byload[n] = n;
	px_sort_nodes_desc(byload, g->nnode, dm.total);
	for (i = 0; i < g->nnode; i++) {
		int nd = byload[i];

		if (!dm.nin[nd])
			continue;
		memset(r.w, 0, (size_t)g->nsw * sizeof(uint64_t));
		for (j = 0; j < dm.nin[nd]; j++)
			px_add_node_weight(g, dm.in[nd][j].src, dm.in[nd][j].w, r.w);
		px_run_node(&r, nd, r.w);
	}
	/* 2: all other terminal LIDs, then 3: switch LIDs, each with +1 per source terminal */
	if (px_run_finish(&r)) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA39: %d destination LIDs are unreachable under rules "
		       "R1-R4 (a switch lost all links that survive the removal); not routing\n",
		       r.unreachable);
		goto out;
	}
	PX_LOG(g, OSM_LOG_VERBOSE, "%d demand-listed nodes routed first, %d LIDs in total\n",
	       dm.listed, r.norder);
	rc = 0;
out:
	free(byload);
	px_run_free(&r);
out_dm:
	demands_free(&dm, g->nnode);
	return rc;
}
