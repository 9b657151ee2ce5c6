/*
 * px_engine: what the parx and sar routing engines share: their context struct, the
 * plugin-option lookup, the path-SL and SL2VL callbacks, and the final "install the routing"
 * step (VL layering + swapping the result in for path_sl).
 *
 * Plugin options (opensm.conf `event_plugin_options`, comma or blank separated):
 *   parx_demand=<file>   demand file read by parx on every routing run (optional)
 *   sar_jobs=<file>      job-to-node file read by sar on every routing run (optional)
 *   max_vls=<n>          cap on the virtual lanes the engines may use (default 8)
 */
#ifndef PX_ENGINE_H
#define PX_ENGINE_H

#include <stddef.h>
#include "px_graph.h"
#include "px_layers.h"

typedef struct px_engine px_engine_t;

struct px_engine {
	const char *name;
	osm_opensm_t *osm;
	/* the routing currently installed (kept for path_sl) */
	px_graph_t graph;
	px_layer_result_t layers;
	int installed;
	/* engine-specific routing: fills g->next/new_lft and dest_order; 0 or -1 */
	int (*route)(px_engine_t *e, px_graph_t *g, int *dest_order);
};

/* Copies the value of plugin option `key` into buf; returns 1 if present, 0 if not. */
int px_option(osm_opensm_t *osm, const char *key, char *buf, size_t len);

/* Fills the common callbacks of `re` for engine `e`. */
void px_engine_setup(osm_routing_engine_t *re, px_engine_t *e);

/* Frees the installed routing (engine destroy and plugin unload). */
void px_engine_release(px_engine_t *e);

int parx_setup(osm_routing_engine_t *re, osm_opensm_t *osm);
int sar_setup(osm_routing_engine_t *re, osm_opensm_t *osm);

/* Reads a whole line-oriented input file; returns malloc'd NUL-terminated text or NULL. */
char *px_read_file(px_graph_t *g, const char *path);

#endif
