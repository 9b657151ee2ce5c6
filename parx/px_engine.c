/* px_engine: callbacks and steps common to the parx, sar and floyd routing engines. */
#include "px_engine.h"
#include "px_snapshot.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int px_option(osm_opensm_t *osm, const char *key, char *buf, size_t len)
{
	const char *opts = osm->subn.opt.event_plugin_options, *p;
	size_t klen = strlen(key);

	for (p = opts; p && *p;) {
		const char *end;

		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		end = p;
		while (*end && *end != ',' && !isspace((unsigned char)*end))
			end++;
		if ((size_t)(end - p) > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			size_t n = (size_t)(end - p) - klen - 1;

			if (n >= len)
				n = len - 1;
			memcpy(buf, p + klen + 1, n);
			buf[n] = '\0';
			return 1;
		}
		p = end;
	}
	return 0;
}

int px_setup(osm_routing_engine_t *re, osm_opensm_t *osm)
{
	px_engine_t *e = re->context;

	e->osm = osm;
	px_engine_setup(re, e);
	OSM_LOG(&osm->log, OSM_LOG_VERBOSE, "%s: routing engine set up\n", e->name);
	return 0;
}

void px_engine_release(px_engine_t *e)
{
	if (!e->installed)
		return;
	px_layers_free(&e->layers);
	px_graph_free(&e->graph);
	e->installed = 0;
}

static int px_build_lid_matrices(void *context)
{
	(void)context;
	/* > 0: OpenSM builds its min-hop matrices; SA uses them for PathRecord hop limits */
	return 1;
}

static int max_vls_option(px_engine_t *e)
{
	char buf[32];
	long v;

	if (!px_option(e->osm, "max_vls", buf, sizeof(buf)))
		return PX_MAX_LAYERS;
	v = strtol(buf, NULL, 10);
	return v < 1 ? 1 : v > PX_MAX_LAYERS ? PX_MAX_LAYERS : (int)v;
}

static void px_dump_path_sl(const px_engine_t *e);

static int px_build_fwd_tables(void *context)
{
	px_engine_t *e = context;
	px_graph_t g;
	px_layer_result_t layers;
	int *order, max_layers, avail, l;
	struct timespec t0, t1;
	char per_layer[PX_MAX_LAYERS * 24] = "", snapshot[4096];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	px_engine_release(e);
	if (px_graph_build(&g, e->osm, e->name))
		return -1;
	avail = px_available_vls(&g);
	max_layers = max_vls_option(e);
	if (avail < max_layers)
		max_layers = avail;
	/* the graph as built, before routing: px-sar routes job sets on it (px_snapshot.h) */
	if (px_option(e->osm, "px_snapshot", snapshot, sizeof(snapshot)))
		px_snapshot_write(&g, max_layers, snapshot);
	order = malloc(((size_t)g.ndest + 1) * sizeof(int));
	if (!order || e->route(e, &g, order)) {
		free(order);
		px_graph_free(&g);
		return -1;
	}
	if (e->one_vl ? px_layers_single(&g, &layers) :
	    px_layers_assign(&g, order, max_layers, &layers)) {
		free(order);
		px_graph_free(&g);
		return -1;
	}
	free(order);
	e->graph = g;
	e->layers = layers;
	e->installed = 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (l = 0; l < layers.nlayers; l++)
		snprintf(per_layer + strlen(per_layer), sizeof(per_layer) - strlen(per_layer),
			 "%s%llu", l ? "/" : "", (unsigned long long)layers.paths_per_layer[l]);
	PX_LOG(&g, OSM_LOG_INFO, "routed %d destination LIDs over %d switches; Virtual "
	       "Lanes needed: %d (paths per VL %s; %d VLs usable) in %.3f s\n", g.ndest, g.nsw,
	       layers.nlayers, per_layer, max_layers,
	       (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	px_dump_path_sl(e);
	if (layers.nlayers > 1 && !e->osm->subn.opt.qos)
		PX_LOG(&g, OSM_LOG_INFO, "WARNING: qos is FALSE, so OpenSM will not program "
		       "SL2VL tables; set 'qos TRUE' so SL i travels on VL i\n");
	return 0;
}

/* The SL path_sl answers for every (source switch, destination LID), written beside the
 * LFT dump as parx-path-sl.dump ("0xSWITCH_GUID 0xDLID SL" lines): OpenSM itself only
 * answers SLs to SA path-record queries, and t2hx's packet engine needs them all. */
static void px_dump_path_sl(const px_engine_t *e)
{
	const px_graph_t *g = &e->graph;
	const char *dir = e->osm->subn.opt.dump_files_dir;
	char path[4096], tmp[4112];
	FILE *f;
	int d, sw;

	if (!dir || snprintf(path, sizeof(path), "%s/parx-path-sl.dump", dir) >= (int)sizeof(path))
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		PX_LOG(g, OSM_LOG_ERROR, "cannot write %s: %s\n", tmp, strerror(errno));
		return;
	}
	fprintf(f, "# %s path SLs: source switch GUID, destination LID, SL\n", g->engine);
	for (d = 0; d < g->ndest; d++)
		for (sw = 0; sw < g->nsw; sw++) {
			uint8_t l = e->layers.layer[(size_t)d * (size_t)e->layers.nsw + (size_t)sw];

			if (l != PX_NO_LAYER)
				fprintf(f, "0x%016llx 0x%04x %u\n",
					(unsigned long long)g->sws[sw].guid,
					(unsigned)g->dests[d].lid, (unsigned)l);
		}
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		PX_LOG(g, OSM_LOG_ERROR, "cannot write %s\n", path);
}

static uint8_t px_path_sl(void *context, uint8_t hint, const ib_net16_t slid,
			  const ib_net16_t dlid)
{
	px_engine_t *e = context;
	uint16_t s_lid = cl_ntoh16(slid), d_lid = cl_ntoh16(dlid);
	int s, d;
	uint8_t l;

	if (!e->installed || s_lid > e->graph.max_lid || d_lid > e->graph.max_lid)
		return hint;
	s = e->graph.sw_of_lid[s_lid];
	d = e->graph.dest_of_lid[d_lid];
	if (s < 0 || d < 0)
		return hint;
	l = e->layers.layer[(size_t)d * (size_t)e->layers.nsw + (size_t)s];
	return l == PX_NO_LAYER ? 0 : l;
}

static void px_update_sl2vl(void *context, osm_physp_t *port, uint8_t in_port,
			    uint8_t out_port, ib_slvl_table_t *t)
{
	px_engine_t *e = context;
	int sl;

	(void)port;
	(void)in_port;
	(void)out_port;
	if (!e->installed)
		return;
	/* layer i is SL i; it must stay on VL i on every hop */
	for (sl = 0; sl < e->layers.nlayers; sl++)
		ib_slvl_table_set(t, (uint8_t)sl, (uint8_t)sl);
}

static void px_destroy(void *context)
{
	px_engine_release(context);
}

void px_engine_setup(osm_routing_engine_t *re, px_engine_t *e)
{
	re->context = e;
	re->build_lid_matrices = px_build_lid_matrices;
	re->ucast_build_fwd_tables = px_build_fwd_tables;
	re->ucast_dump_tables = NULL;
	re->update_sl2vl = px_update_sl2vl;
	re->update_vlarb = NULL;
	re->path_sl = px_path_sl;
	re->mcast_build_stree = NULL;
	re->destroy = px_destroy;
}
