/* px_graph: subnet -> switch graph, weighted shortest paths per destination, weight updates. */
#include "px_graph.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Path cost = hops * PX_HOP + accumulated weight: the hop count dominates, so every path is
 * a shortest path of the (possibly pruned) graph and the weights only choose among equally
 * short paths. That keeps Table 1a's "small messages take minimal paths" promise and SAR's
 * "latency does not change" property (SC16 §4.3.4). 2^40 leaves room for any realistic load. */
#define PX_HOP (UINT64_C(1) << 40)
#define PX_INF UINT64_MAX

#ifndef PX_STANDALONE	/* building the graph from OpenSM's subnet tables */
typedef struct ptr_idx {
	const void *ptr;
	int idx;
} ptr_idx_t;

static int cmp_ptr_idx(const void *a, const void *b)
{
	const ptr_idx_t *x = a, *y = b;
	return (x->ptr > y->ptr) - (x->ptr < y->ptr);
}

static int lookup_ptr(const ptr_idx_t *tab, int n, const void *ptr)
{
	ptr_idx_t key = { ptr, 0 };
	const ptr_idx_t *hit = bsearch(&key, tab, (size_t)n, sizeof(*tab), cmp_ptr_idx);
	return hit ? hit->idx : -1;
}

static void hostname_of(const osm_node_t *node, char *out)
{
	const char *desc = (const char *)node->node_desc.description;
	size_t i = 0;

	while (i < IB_NODE_DESCRIPTION_SIZE && i < PX_MAX_NAME && desc[i] &&
	       !isspace((unsigned char)desc[i])) {
		out[i] = desc[i];
		i++;
	}
	out[i] = '\0';
}

static int *grow_int(int *arr, int n)
{
	/* arrays grow one element at a time only while building: tiny, rare */
	return realloc(arr, (size_t)(n + 1) * sizeof(int));
}

static int add_switches(px_graph_t *g, ptr_idx_t **sw_index)
{
	cl_qmap_t *tbl = &g->osm->subn.sw_guid_tbl;
	osm_switch_t *sw;
	int i = 0;

	g->nsw = (int)cl_qmap_count(tbl);
	g->sws = calloc((size_t)g->nsw + 1, sizeof(*g->sws));
	*sw_index = calloc((size_t)g->nsw + 1, sizeof(**sw_index));
	if (!g->sws || !*sw_index)
		return -1;
	for (sw = (osm_switch_t *)cl_qmap_head(tbl); sw != (osm_switch_t *)cl_qmap_end(tbl);
	     sw = (osm_switch_t *)cl_qmap_next(&sw->map_item), i++) {
		g->sws[i].osw = sw;
		g->sws[i].guid = cl_ntoh64(osm_node_get_node_guid(sw->p_node));
		g->sws[i].quadrant = -1;
		(*sw_index)[i].ptr = sw->p_node;
		(*sw_index)[i].idx = i;
	}
	qsort(*sw_index, (size_t)g->nsw, sizeof(**sw_index), cmp_ptr_idx);
	return 0;
}

static int add_channels(px_graph_t *g, const ptr_idx_t *sw_index)
{
	int s, cap = 0;

	for (s = 0; s < g->nsw; s++) {
		osm_node_t *node = g->sws[s].osw->p_node;
		uint8_t p, rp;

		for (p = 1; p < g->sws[s].osw->num_ports; p++) {
			osm_node_t *rnode;
			int t;

			if (!osm_node_get_physp_ptr(node, p))
				continue;
			rnode = osm_node_get_remote_node(node, p, &rp);
			if (!rnode || osm_node_get_type(rnode) != IB_NODE_TYPE_SWITCH)
				continue;
			t = lookup_ptr(sw_index, g->nsw, rnode);
			if (t < 0 || t == s)
				continue;
			if (g->nchan == cap) {
				cap = cap ? 2 * cap : 256;
				g->chans = realloc(g->chans, (size_t)cap * sizeof(*g->chans));
				if (!g->chans)
					return -1;
			}
			g->chans[g->nchan] = (px_chan_t){ .from = s, .to = t, .port = p, .weight = 0 };
			if (!(g->sws[s].out = grow_int(g->sws[s].out, g->sws[s].nout)) ||
			    !(g->sws[t].in = grow_int(g->sws[t].in, g->sws[t].nin)))
				return -1;
			g->sws[s].out[g->sws[s].nout++] = g->nchan;
			g->sws[t].in[g->sws[t].nin++] = g->nchan;
			g->nchan++;
		}
	}
	return 0;
}

static int find_or_add_node(px_graph_t *g, const osm_node_t *onode, int *cap)
{
	uint64_t guid = cl_ntoh64(osm_node_get_node_guid(onode));
	int n;

	/* nodes arrive grouped by port GUID order; a linear scan from the end is enough for
	 * the common one-port case and correct for multi-port CAs */
	for (n = g->nnode - 1; n >= 0; n--)
		if (g->nodes[n].guid == guid)
			return n;
	if (g->nnode == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		g->nodes = realloc(g->nodes, (size_t)*cap * sizeof(*g->nodes));
		if (!g->nodes)
			return -1;
	}
	n = g->nnode++;
	memset(&g->nodes[n], 0, sizeof(g->nodes[n]));
	g->nodes[n].guid = guid;
	hostname_of(onode, g->nodes[n].name);
	return n;
}

static int add_terminals_and_lids(px_graph_t *g, const ptr_idx_t *sw_index)
{
	cl_qmap_t *tbl = &g->osm->subn.port_guid_tbl;
	osm_port_t *port;
	int tcap = 0, ncap = 0;

	g->terms = NULL;
	for (port = (osm_port_t *)cl_qmap_head(tbl); port != (osm_port_t *)cl_qmap_end(tbl);
	     port = (osm_port_t *)cl_qmap_next(&port->map_item)) {
		uint16_t lo, hi;
		osm_physp_t *remote;
		int s, n;

		osm_port_get_lid_range_ho(port, &lo, &hi);
		if (!lo)
			continue;
		if (hi > g->max_lid)
			g->max_lid = hi;
		if (port->p_node->sw) {
			s = lookup_ptr(sw_index, g->nsw, port->p_node);
			if (s >= 0)
				g->sws[s].lid = lo;
			continue;
		}
		remote = osm_physp_get_remote(port->p_physp);
		if (!remote || osm_node_get_type(remote->p_node) != IB_NODE_TYPE_SWITCH)
			continue;
		s = lookup_ptr(sw_index, g->nsw, remote->p_node);
		if (s < 0)
			continue;
		if (g->nterm == tcap) {
			tcap = tcap ? 2 * tcap : 256;
			g->terms = realloc(g->terms, (size_t)tcap * sizeof(*g->terms));
			if (!g->terms)
				return -1;
		}
		if ((n = find_or_add_node(g, port->p_node, &ncap)) < 0)
			return -1;
		g->terms[g->nterm] = (px_term_t){
			.port_guid = cl_ntoh64(osm_port_get_guid(port)), .node = n, .sw = s,
			.sw_port = osm_physp_get_port_num(remote), .base_lid = lo, .top_lid = hi };
		if (!(g->nodes[n].terms = grow_int(g->nodes[n].terms, g->nodes[n].nterms)))
			return -1;
		g->nodes[n].terms[g->nodes[n].nterms++] = g->nterm;
		g->sws[s].nterm++;
		g->nterm++;
	}
	return 0;
}

static int add_dests(px_graph_t *g)
{
	int t, s, n = 0, cap = 0;
	uint32_t lid;

	for (t = 0; t < g->nterm; t++)
		cap += g->terms[t].top_lid - g->terms[t].base_lid + 1;
	cap += g->nsw * (1 << g->osm->subn.opt.lmc);
	g->dests = calloc((size_t)cap + 1, sizeof(*g->dests));
	g->dest_of_lid = malloc(((size_t)g->max_lid + 1) * sizeof(int));
	g->sw_of_lid = malloc(((size_t)g->max_lid + 1) * sizeof(int));
	if (!g->dests || !g->dest_of_lid || !g->sw_of_lid)
		return -1;
	for (lid = 0; lid <= g->max_lid; lid++)
		g->dest_of_lid[lid] = g->sw_of_lid[lid] = -1;
	for (t = 0; t < g->nterm; t++)
		for (lid = g->terms[t].base_lid; lid <= g->terms[t].top_lid && n < cap; lid++) {
			g->dests[n] = (px_dest_t){ .lid = (uint16_t)lid, .sw = g->terms[t].sw,
				.last_port = g->terms[t].sw_port, .term = t,
				.offset = (int)(lid - g->terms[t].base_lid) };
			g->dest_of_lid[lid] = n++;
			g->sw_of_lid[lid] = g->terms[t].sw;
		}
	for (s = 0; s < g->nsw; s++) {
		osm_port_t *p0 = osm_get_port_by_guid(&g->osm->subn,
			osm_node_get_node_guid(g->sws[s].osw->p_node));
		uint16_t lo, hi;

		if (!p0)
			continue;
		osm_port_get_lid_range_ho(p0, &lo, &hi);
		for (lid = lo; lo && lid <= hi && n < cap; lid++) {
			g->dests[n] = (px_dest_t){ .lid = (uint16_t)lid, .sw = s, .last_port = 0,
				.term = -1, .offset = (int)(lid - lo) };
			g->dest_of_lid[lid] = n++;
			g->sw_of_lid[lid] = s;
		}
	}
	g->ndest = n;
	return 0;
}

int px_graph_build(px_graph_t *g, osm_opensm_t *osm, const char *engine)
{
	ptr_idx_t *sw_index = NULL;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	g->osm = osm;
	g->engine = engine;
	if (add_switches(g, &sw_index) || add_channels(g, sw_index) ||
	    add_terminals_and_lids(g, sw_index) || add_dests(g)) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA01: out of memory while building the switch graph\n");
		goto out;
	}
	if (px_graph_scratch(g))
		goto out;
	rc = 0;
	PX_LOG(g, OSM_LOG_VERBOSE, "graph: %d switches, %d inter-switch channels, %d terminal "
	       "ports on %d nodes, %d destination LIDs (max LID %u)\n", g->nsw, g->nchan,
	       g->nterm, g->nnode, g->ndest, g->max_lid);
out:
	free(sw_index);
	return rc;
}
#endif /* !PX_STANDALONE */

int px_graph_scratch(px_graph_t *g)
{
	g->next = malloc((size_t)g->ndest * (size_t)g->nsw * sizeof(*g->next) + 1);
	g->cost = malloc(((size_t)g->nsw + 1) * sizeof(*g->cost));
	g->flow = malloc(((size_t)g->nsw + 1) * sizeof(*g->flow));
	g->heap = malloc(((size_t)g->nsw + 1) * sizeof(int));
	g->heap_pos = malloc(((size_t)g->nsw + 1) * sizeof(int));
	g->order = malloc(((size_t)g->nsw + 1) * sizeof(int));
	if (!g->next || !g->cost || !g->flow || !g->heap || !g->heap_pos || !g->order) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA01: out of memory while building the switch graph\n");
		return -1;
	}
	return 0;
}

void px_graph_free(px_graph_t *g)
{
	int i;

	for (i = 0; i < g->nsw && g->sws; i++) {
		free(g->sws[i].out);
		free(g->sws[i].in);
#ifdef PX_STANDALONE
		free(g->sws[i].lft);
#endif
	}
	for (i = 0; i < g->nnode && g->nodes; i++)
		free(g->nodes[i].terms);
	free(g->sws);
	free(g->chans);
	free(g->terms);
	free(g->nodes);
	free(g->dests);
	free(g->dest_of_lid);
	free(g->sw_of_lid);
	free(g->next);
	free(g->cost);
	free(g->flow);
	free(g->heap);
	free(g->heap_pos);
	free(g->order);
	memset(g, 0, sizeof(*g));
}

int px_graph_find_node(const px_graph_t *g, const char *name)
{
	int n, t;

	if (name[0] == '0' && (name[1] == 'x' || name[1] == 'X')) {
		char *end;
		uint64_t guid = strtoull(name, &end, 16);

		if (*end)
			return -1;
		for (n = 0; n < g->nnode; n++) {
			if (g->nodes[n].guid == guid)
				return n;
			for (t = 0; t < g->nodes[n].nterms; t++)
				if (g->terms[g->nodes[n].terms[t]].port_guid == guid)
					return n;
		}
		return -1;
	}
	for (n = 0; n < g->nnode; n++)
		if (!strcmp(g->nodes[n].name, name))
			return n;
	return -1;
}

/* ---- binary min-heap on g->cost, keyed by switch index ---- */

static void heap_swap(px_graph_t *g, int a, int b)
{
	int x = g->heap[a];

	g->heap[a] = g->heap[b];
	g->heap[b] = x;
	g->heap_pos[g->heap[a]] = a;
	g->heap_pos[g->heap[b]] = b;
}

static void heap_up(px_graph_t *g, int i)
{
	while (i > 0 && g->cost[g->heap[(i - 1) / 2]] > g->cost[g->heap[i]]) {
		heap_swap(g, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(px_graph_t *g, int i, int n)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && g->cost[g->heap[l]] < g->cost[g->heap[m]])
			m = l;
		if (r < n && g->cost[g->heap[r]] < g->cost[g->heap[m]])
			m = r;
		if (m == i)
			return;
		heap_swap(g, i, m);
		i = m;
	}
}

static void set_lft(px_graph_t *g, int s, uint16_t lid, uint8_t port)
{
#ifdef PX_STANDALONE
	px_switch_t *sw = &g->sws[s];

	if (sw->lft && lid <= sw->max_lid_ho && lid < sw->lft_size)
		sw->lft[lid] = port;
#else
	osm_switch_t *sw = g->sws[s].osw;

	if (sw->new_lft && lid <= sw->max_lid_ho && lid < sw->lft_size)
		sw->new_lft[lid] = port;
#endif
}

int px_route_dest(px_graph_t *g, int d, px_chan_filter_t filter, void *arg)
{
	const px_dest_t *dest = &g->dests[d];
	int32_t *next = g->next + (size_t)d * (size_t)g->nsw;
	int s, n = 0, done = 0;

	/* Dijkstra from the destination switch over reversed channels */
	for (s = 0; s < g->nsw; s++) {
		g->cost[s] = PX_INF;
		g->heap_pos[s] = -1;
		next[s] = PX_NO_CHAN;
	}
	g->cost[dest->sw] = 0;
	g->heap[n] = dest->sw;
	g->heap_pos[dest->sw] = n++;
	while (n > 0) {
		int v = g->heap[0], i;

		heap_swap(g, 0, --n);
		g->heap_pos[v] = -2;	/* settled */
		heap_down(g, 0, n);
		g->order[done++] = v;
		for (i = 0; i < g->sws[v].nin; i++) {
			int c = g->sws[v].in[i], u = g->chans[c].from;
			uint64_t cand;

			if (g->heap_pos[u] == -2 || (filter && !filter(g, c, dest, arg)))
				continue;
			cand = g->cost[v] + PX_HOP + g->chans[c].weight;
			if (cand >= g->cost[u])
				continue;
			g->cost[u] = cand;
			next[u] = c;
			if (g->heap_pos[u] < 0) {
				g->heap[n] = u;
				g->heap_pos[u] = n++;
			}
			heap_up(g, g->heap_pos[u]);
		}
	}
	/* g->order holds the settled switches by increasing cost; the rest are unreachable */
	g->nsettled = done;
	return px_install_dest(g, d);
}

int px_install_dest(px_graph_t *g, int d)
{
	const px_dest_t *dest = &g->dests[d];
	const int32_t *next = g->next + (size_t)d * (size_t)g->nsw;
	int s, unreachable = 0;

	for (s = 0; s < g->nsw; s++) {
		if (s == dest->sw)
			set_lft(g, s, dest->lid, dest->last_port);
		else if (next[s] != PX_NO_CHAN)
			set_lft(g, s, dest->lid, g->chans[next[s]].port);
		else
			unreachable++;
	}
	return unreachable;
}

void px_update_weights(px_graph_t *g, int d, const uint64_t *src_weight)
{
	const int32_t *next = g->next + (size_t)d * (size_t)g->nsw;
	int done = g->nsettled, i, s;

	/* Accumulate the flow of every source along its path: walking switches from the farthest
	 * to the nearest, each one passes its own sources plus everything routed through it. */
	for (s = 0; s < g->nsw; s++)
		g->flow[s] = 0;
	for (i = 0; i < done; i++)
		g->flow[g->order[i]] = src_weight[g->order[i]];
	for (i = done - 1; i > 0; i--) {
		int u = g->order[i], c = next[u];

		if (c == PX_NO_CHAN || !g->flow[u])
			continue;
		g->chans[c].weight += g->flow[u];
		g->flow[g->chans[c].to] += g->flow[u];
	}
}

void px_terminal_counts(const px_graph_t *g, uint64_t *src_weight)
{
	int s;

	for (s = 0; s < g->nsw; s++)
		src_weight[s] = (uint64_t)g->sws[s].nterm;
}
