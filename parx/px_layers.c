/* px_layers: first-fit virtual layers with an incrementally maintained acyclic CDG. */
#include "px_layers.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef PX_STANDALONE	/* the VL caps come from OpenSM's port info */
static int vls_of_cap(int cap)
{
	if (cap <= 0)
		return 1;
	return cap >= 5 ? 15 : 1 << (cap - 1);
}

int px_available_vls(const px_graph_t *g)
{
	int vls = vls_of_cap(g->osm->subn.opt.max_op_vls);
	int c, t;

	for (c = 0; c < g->nchan; c++) {
		osm_physp_t *p = osm_node_get_physp_ptr(g->sws[g->chans[c].from].osw->p_node,
							g->chans[c].port);
		if (p && vls_of_cap(ib_port_info_get_vl_cap(&p->port_info)) < vls)
			vls = vls_of_cap(ib_port_info_get_vl_cap(&p->port_info));
	}
	for (t = 0; t < g->nterm; t++) {
		osm_port_t *port = osm_get_port_by_guid(&g->osm->subn, cl_hton64(g->terms[t].port_guid));

		if (port && port->p_physp &&
		    vls_of_cap(ib_port_info_get_vl_cap(&port->p_physp->port_info)) < vls)
			vls = vls_of_cap(ib_port_info_get_vl_cap(&port->p_physp->port_info));
	}
	return vls > PX_MAX_LAYERS ? PX_MAX_LAYERS : vls;
}
#endif

/* The data VLs the fabric offers, for the error message. */
static int offered_vls(const px_graph_t *g, int max_layers)
{
#ifdef PX_STANDALONE
	(void)g;
	return max_layers;	/* px-sar: the snapshot's limit, already min(offered, max_vls) */
#else
	(void)max_layers;
	return px_available_vls(g);
#endif
}

/* ---- one CDG per layer: nodes are channels, edges are dependencies ---- */

typedef struct adj {
	int *v;
	int n, cap;
} adj_t;

typedef struct cdg {
	int *ord;		/* topological position of each channel */
	adj_t *out, *in;
} cdg_t;

typedef struct edge_slot {
	uint64_t key;		/* 0 = empty */
	uint32_t count;
} edge_slot_t;

typedef struct layering {
	int nchan, nlayers;
	cdg_t cdg[PX_MAX_LAYERS];
	edge_slot_t *slots;
	size_t nslots, used;
	/* search scratch */
	int *mark, stamp, *stack, *fwd, *bwd, *pool;
	int nfwd, nbwd;
} layering_t;

static uint64_t edge_key(int layer, int a, int b)
{
	return (((uint64_t)layer << 56) | ((uint64_t)a << 28) | (uint64_t)b) + 1;
}

static edge_slot_t *slot_of(layering_t *L, uint64_t key)
{
	size_t i = (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & (L->nslots - 1);

	while (L->slots[i].key && L->slots[i].key != key)
		i = (i + 1) & (L->nslots - 1);
	return &L->slots[i];
}

static int grow_slots(layering_t *L)
{
	edge_slot_t *old = L->slots;
	size_t i, n = L->nslots;

	L->nslots = n ? 2 * n : 1 << 14;
	L->slots = calloc(L->nslots, sizeof(*L->slots));
	if (!L->slots)
		return -1;
	for (i = 0; i < n; i++)
		if (old[i].key)
			*slot_of(L, old[i].key) = old[i];
	free(old);
	return 0;
}

static int adj_add(adj_t *a, int v)
{
	if (a->n == a->cap) {
		int *nv = realloc(a->v, (size_t)(a->cap ? 2 * a->cap : 4) * sizeof(int));

		if (!nv)
			return -1;
		a->v = nv;
		a->cap = a->cap ? 2 * a->cap : 4;
	}
	a->v[a->n++] = v;
	return 0;
}

static void adj_del(adj_t *a, int v)
{
	int i;

	for (i = 0; i < a->n; i++)
		if (a->v[i] == v) {
			a->v[i] = a->v[--a->n];
			return;
		}
}

static int open_layer(layering_t *L)
{
	cdg_t *c = &L->cdg[L->nlayers];
	int i;

	c->ord = malloc((size_t)L->nchan * sizeof(int));
	c->out = calloc((size_t)L->nchan, sizeof(adj_t));
	c->in = calloc((size_t)L->nchan, sizeof(adj_t));
	if (!c->ord || !c->out || !c->in)
		return -1;
	for (i = 0; i < L->nchan; i++)
		c->ord[i] = i;
	L->nlayers++;
	return 0;
}

static const int *sort_ord;

static int cmp_by_ord(const void *a, const void *b)
{
	return sort_ord[*(const int *)a] - sort_ord[*(const int *)b];
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Pearce-Kelly: returns 1 if x->y would close a cycle, else restores a valid order. */
static int reorder_for(layering_t *L, cdg_t *c, int x, int y)
{
	int ub = c->ord[x], lb = c->ord[y], sp, i, v;

	if (lb > ub)
		return 0;
	/* forward from y within (lb, ub] */
	L->stamp += 2;
	L->nfwd = 0;
	sp = 0;
	L->stack[sp++] = y;
	L->mark[y] = L->stamp;
	while (sp) {
		v = L->stack[--sp];
		L->fwd[L->nfwd++] = v;
		for (i = 0; i < c->out[v].n; i++) {
			int w = c->out[v].v[i];

			if (c->ord[w] == ub)
				return 1;
			if (L->mark[w] != L->stamp && c->ord[w] < ub) {
				L->mark[w] = L->stamp;
				L->stack[sp++] = w;
			}
		}
	}
	/* backward from x within [lb, ub) */
	L->nbwd = 0;
	sp = 0;
	L->stack[sp++] = x;
	L->mark[x] = L->stamp + 1;
	while (sp) {
		v = L->stack[--sp];
		L->bwd[L->nbwd++] = v;
		for (i = 0; i < c->in[v].n; i++) {
			int w = c->in[v].v[i];

			if (L->mark[w] != L->stamp + 1 && c->ord[w] > lb) {
				L->mark[w] = L->stamp + 1;
				L->stack[sp++] = w;
			}
		}
	}
	sort_ord = c->ord;
	qsort(L->fwd, (size_t)L->nfwd, sizeof(int), cmp_by_ord);
	qsort(L->bwd, (size_t)L->nbwd, sizeof(int), cmp_by_ord);
	for (i = 0; i < L->nbwd; i++)
		L->pool[i] = c->ord[L->bwd[i]];
	for (i = 0; i < L->nfwd; i++)
		L->pool[L->nbwd + i] = c->ord[L->fwd[i]];
	qsort(L->pool, (size_t)(L->nbwd + L->nfwd), sizeof(int), cmp_int);
	for (i = 0; i < L->nbwd; i++)
		c->ord[L->bwd[i]] = L->pool[i];
	for (i = 0; i < L->nfwd; i++)
		c->ord[L->fwd[i]] = L->pool[L->nbwd + i];
	return 0;
}

/* Adds dependency a->b to `layer`. Returns 0 added, 1 cycle, -1 no memory. */
static int add_dep(layering_t *L, int layer, int a, int b)
{
	cdg_t *c = &L->cdg[layer];
	uint64_t key = edge_key(layer, a, b);
	edge_slot_t *s;

	if (2 * (L->used + 1) > L->nslots && grow_slots(L))
		return -1;
	s = slot_of(L, key);
	if (s->key && s->count) {
		s->count++;
		return 0;
	}
	if (a == b || reorder_for(L, c, a, b))
		return 1;
	if (adj_add(&c->out[a], b) || adj_add(&c->in[b], a))
		return -1;
	if (!s->key) {
		s->key = key;
		L->used++;
	}
	s->count = 1;
	return 0;
}

static void del_dep(layering_t *L, int layer, int a, int b)
{
	edge_slot_t *s = slot_of(L, edge_key(layer, a, b));

	if (!s->key || !s->count)
		return;
	if (--s->count == 0) {
		adj_del(&L->cdg[layer].out[a], b);
		adj_del(&L->cdg[layer].in[b], a);
	}
}

static void layering_free(layering_t *L)
{
	int l, i;

	for (l = 0; l < L->nlayers; l++) {
		for (i = 0; i < L->nchan; i++) {
			free(L->cdg[l].out[i].v);
			free(L->cdg[l].in[i].v);
		}
		free(L->cdg[l].out);
		free(L->cdg[l].in);
		free(L->cdg[l].ord);
	}
	free(L->slots);
	free(L->mark);
	free(L->stack);
	free(L->fwd);
	free(L->bwd);
	free(L->pool);
}

/* Collects the channels of the path s -> dsw into L->stack; returns their number. */
static int path_of(layering_t *L, const px_graph_t *g, const int32_t *next, int dsw, int s)
{
	int c = next[s], n = 0;

	while (c != PX_NO_CHAN && n < L->nchan) {
		L->stack[n++] = c;
		if (g->chans[c].to == dsw)
			break;
		c = next[g->chans[c].to];
	}
	return n;
}

/* Tries to put the path (channels in `path`) into `layer`; rolls back on a cycle. */
static int try_layer(layering_t *L, const int *path, int n, int layer)
{
	int i, j, rc = 0;

	for (i = 0; i + 1 < n; i++)
		if ((rc = add_dep(L, layer, path[i], path[i + 1])) != 0)
			break;
	if (rc)
		for (j = 0; j < i; j++)
			del_dep(L, layer, path[j], path[j + 1]);
	return rc;
}

/* An empty result for g: no path in any layer yet. 0, or -1 when out of memory (then
 * px_layers_free(out) releases what was allocated). */
static int result_init(const px_graph_t *g, px_layer_result_t *out)
{
	memset(out, 0, sizeof(*out));
	out->nsw = g->nsw;
	out->ndest = g->ndest;
	out->layer = malloc((size_t)g->nsw * (size_t)g->ndest + 1);
	out->paths_per_layer = calloc(PX_MAX_LAYERS, sizeof(uint64_t));
	if (!out->layer || !out->paths_per_layer)
		return -1;
	memset(out->layer, PX_NO_LAYER, (size_t)g->nsw * (size_t)g->ndest);
	return 0;
}

int px_layers_assign(px_graph_t *g, const int *dest_order, int max_layers,
		     px_layer_result_t *out)
{
	layering_t L;
	int i, s, rc = -1, *path = malloc(((size_t)g->nchan + 1) * sizeof(int));

	memset(&L, 0, sizeof(L));
	L.nchan = g->nchan;
	L.mark = calloc((size_t)g->nchan + 1, sizeof(int));
	L.stack = malloc(((size_t)g->nchan + 1) * sizeof(int));
	L.fwd = malloc(((size_t)g->nchan + 1) * sizeof(int));
	L.bwd = malloc(((size_t)g->nchan + 1) * sizeof(int));
	L.pool = malloc(2 * ((size_t)g->nchan + 1) * sizeof(int));
	if (result_init(g, out) || !path || !L.mark || !L.stack || !L.fwd || !L.bwd || !L.pool ||
	    grow_slots(&L) || open_layer(&L)) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA11: out of memory in VL layering\n");
		goto out;
	}
	if (max_layers > PX_MAX_LAYERS)
		max_layers = PX_MAX_LAYERS;
	for (i = 0; i < g->ndest; i++) {
		int d = dest_order ? dest_order[i] : i, dsw = g->dests[d].sw;
		const int32_t *next = g->next + (size_t)d * (size_t)g->nsw;

		for (s = 0; s < g->nsw; s++) {
			int l, r = 1, n;

			if (s == dsw || next[s] == PX_NO_CHAN)
				continue;
			n = path_of(&L, g, next, dsw, s);
			memcpy(path, L.stack, (size_t)n * sizeof(int));
			for (l = 0; l < max_layers; l++) {
				if (l == L.nlayers && open_layer(&L)) {
					r = -1;
					break;
				}
				if ((r = try_layer(&L, path, n, l)) <= 0)
					break;
			}
			if (r < 0) {
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA12: out of memory in VL layering\n");
				goto out;
			}
			if (r > 0) {
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA13: deadlock-free layering needs more than %d "
				       "virtual lanes (path from switch 0x%016" PRIx64 " to LID %u does "
				       "not fit); the fabric offers %d data VLs, the engine uses at most "
				       "%d\n", max_layers, g->sws[s].guid, g->dests[d].lid,
				       offered_vls(g, max_layers), PX_MAX_LAYERS);
				goto out;
			}
			out->layer[(size_t)d * (size_t)g->nsw + (size_t)s] = (uint8_t)l;
			out->paths_per_layer[l]++;
			if (l + 1 > out->nlayers)
				out->nlayers = l + 1;
		}
	}
	if (!out->nlayers)
		out->nlayers = 1;
	rc = 0;
out:
	free(path);
	layering_free(&L);
	if (rc)
		px_layers_free(out);
	return rc;
}

int px_layers_single(const px_graph_t *g, px_layer_result_t *out)
{
	int d, s;

	if (result_init(g, out)) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA11: out of memory in VL layering\n");
		px_layers_free(out);
		return -1;
	}
	for (d = 0; d < g->ndest; d++) {
		const int32_t *next = g->next + (size_t)d * (size_t)g->nsw;

		for (s = 0; s < g->nsw; s++)
			if (s != g->dests[d].sw && next[s] != PX_NO_CHAN) {
				out->layer[(size_t)d * (size_t)g->nsw + (size_t)s] = 0;
				out->paths_per_layer[0]++;
			}
	}
	out->nlayers = 1;
	return 0;
}

void px_layers_free(px_layer_result_t *r)
{
	free(r->layer);
	free(r->paths_per_layer);
	memset(r, 0, sizeof(*r));
}
