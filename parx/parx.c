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
#include <stdlib.h>
#include <string.h>

#include "px_engine.h"
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

/* Logs an unknown node name once per run (the names list is tiny in practice). */
static void warn_unknown(px_graph_t *g, const char *path, int line, const char *name,
			 int *nwarned)
{
	if (*nwarned < 20)
		PX_LOG(g, OSM_LOG_INFO, "WARNING: %s:%d: node '%s' is not in the fabric; skipped\n",
		       path, line, name);
	else if (*nwarned == 20)
		PX_LOG(g, OSM_LOG_INFO, "WARNING: more unknown nodes in %s not shown\n", path);
	(*nwarned)++;
}

static int parse_demand(px_graph_t *g, const char *path, char *text, demands_t *dm)
{
	char *line = text, *next;
	int lineno = 0, nwarned = 0;

	for (; line && *line; line = next) {
		char *save = NULL, *tok, *src_name;
		int src;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		src_name = strtok_r(line, " \t\r", &save);
		if (!src_name)
			continue;
		src = px_graph_find_node(g, src_name);
		if (src < 0)
			warn_unknown(g, path, lineno, src_name, &nwarned);
		while ((tok = strtok_r(NULL, " \t\r", &save))) {
			char *colon = strrchr(tok, ':'), *end;
			long w;
			int dst;

			if (!colon || colon == tok || !colon[1]) {
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA31: %s:%d: '%s' is not <node>:<weight>\n",
				       path, lineno, tok);
				return -1;
			}
			*colon = '\0';
			w = strtol(colon + 1, &end, 10);
			if (*end || w < 0 || w > 255) {
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA32: %s:%d: weight '%s' for %s is not an "
				       "integer in 0..255\n", path, lineno, colon + 1, tok);
				return -1;
			}
			dst = px_graph_find_node(g, tok);
			if (dst < 0) {
				warn_unknown(g, path, lineno, tok, &nwarned);
				continue;
			}
			if (src >= 0 && demand_add(dm, dst, src, (unsigned)w)) {
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA33: out of memory reading %s\n", path);
				return -1;
			}
		}
	}
	return 0;
}

static int read_demand(px_engine_t *e, px_graph_t *g, demands_t *dm)
{
	char path[4096], *text;
	int rc;

	memset(dm, 0, sizeof(*dm));
	dm->in = calloc((size_t)g->nnode + 1, sizeof(*dm->in));
	dm->nin = calloc((size_t)g->nnode + 1, sizeof(int));
	dm->cap = calloc((size_t)g->nnode + 1, sizeof(int));
	dm->total = calloc((size_t)g->nnode + 1, sizeof(uint64_t));
	if (!dm->in || !dm->nin || !dm->cap || !dm->total)
		return -1;
	if (!px_option(e->osm, "parx_demand", path, sizeof(path))) {
		PX_LOG(g, OSM_LOG_INFO, "no parx_demand option: balancing all paths with +1\n");
		return 0;
	}
	if (!(text = px_read_file(g, path)))
		return -1;
	rc = parse_demand(g, path, text, dm);
	free(text);
	if (!rc)
		PX_LOG(g, OSM_LOG_INFO, "demand file %s: %d destination nodes listed\n", path,
		       dm->listed);
	return rc;
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

typedef struct run {
	px_graph_t *g;
	int *order, norder;
	uint64_t *w;
	int unreachable;
} run_t;

static void route_one(run_t *r, int d, const uint64_t *w)
{
	int miss = px_route_dest(r->g, d, parx_filter, NULL);

	if (miss) {
		if (r->unreachable < 16)
			PX_LOG(r->g, OSM_LOG_ERROR, "ERR FA38: LID %u (offset %d) is unreachable from %d "
			       "switches after removing links by rule R%d\n", r->g->dests[d].lid,
			       r->g->dests[d].offset, miss, r->g->dests[d].offset + 1);
		r->unreachable++;
	}
	px_update_weights(r->g, d, w);
	r->g->dests[d].routed = 1;
	r->order[r->norder++] = d;
}

static const uint64_t *sort_total;

static int cmp_total(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (sort_total[x] != sort_total[y])
		return sort_total[x] < sort_total[y] ? 1 : -1;
	return x - y;
}

static int parx_route(px_engine_t *e, px_graph_t *g, int *order)
{
	demands_t dm;
	run_t r = { .g = g, .order = order };
	int *first = NULL, *byload = NULL, n, t, i, d, rc = -1;
	uint64_t *ones = NULL;

	memset(&dm, 0, sizeof(dm));
	if (assign_quadrants(e, g) || read_demand(e, g, &dm))
		goto out_dm;
	r.w = calloc((size_t)g->nsw + 1, sizeof(uint64_t));
	ones = calloc((size_t)g->nsw + 1, sizeof(uint64_t));
	first = malloc(((size_t)g->nterm + 1) * sizeof(int));
	byload = malloc(((size_t)g->nnode + 1) * sizeof(int));
	if (!r.w || !ones || !first || !byload)
		goto out;
	px_terminal_counts(g, ones);
	for (t = 0; t < g->nterm; t++)
		first[t] = -1;
	for (d = g->ndest - 1; d >= 0; d--)
		if (g->dests[d].term >= 0)
			first[g->dests[d].term] = d;

	/* 1: destinations named in the demand file, largest total demand first */
	for (n = 0; n < g->nnode; n++)
		byload[n] = n;
	sort_total = dm.total;
	qsort(byload, (size_t)g->nnode, sizeof(int), cmp_total);
	for (i = 0; i < g->nnode; i++) {
		int nd = byload[i], k, j;

		if (!dm.nin[nd])
			continue;
		for (k = 0; k < g->nodes[nd].nterms; k++) {
			t = g->nodes[nd].terms[k];
			for (d = first[t]; d >= 0 && d < g->ndest && g->dests[d].term == t; d++) {
				memset(r.w, 0, (size_t)g->nsw * sizeof(uint64_t));
				for (j = 0; j < dm.nin[nd]; j++) {
					const px_node_t *src = &g->nodes[dm.in[nd][j].src];
					int m;

					for (m = 0; m < src->nterms; m++)
						r.w[g->terms[src->terms[m]].sw] += dm.in[nd][j].w;
				}
				route_one(&r, d, r.w);
			}
		}
	}
	/* 2: all other terminal LIDs, then 3: switch LIDs, each with +1 per source terminal */
	for (d = 0; d < g->ndest; d++)
		if (!g->dests[d].routed && g->dests[d].term >= 0)
			route_one(&r, d, ones);
	for (d = 0; d < g->ndest; d++)
		if (!g->dests[d].routed)
			route_one(&r, d, ones);
	if (r.unreachable) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA39: %d destination LIDs are unreachable under rules "
		       "R1-R4 (a switch lost all links that survive the removal); not routing\n",
		       r.unreachable);
		goto out;
	}
	PX_LOG(g, OSM_LOG_VERBOSE, "%d demand-listed nodes routed first, %d LIDs in total\n",
	       dm.listed, r.norder);
	rc = 0;
out:
	free(r.w);
	free(ones);
	free(first);
	free(byload);
out_dm:
	demands_free(&dm, g->nnode);
	return rc;
}

int parx_setup(osm_routing_engine_t *re, osm_opensm_t *osm)
{
	px_engine_t *e = re->context;

	e->osm = osm;
	e->route = parx_route;
	px_engine_setup(re, e);
	OSM_LOG(&osm->log, OSM_LOG_VERBOSE, "parx: routing engine set up\n");
	return 0;
}
