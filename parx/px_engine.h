/*
 * px_engine: what the parx, sar and floyd routing engines share: their context struct, the
 * plugin-option lookup, the path-SL and SL2VL callbacks, and the final "install the routing"
 * step (VL layering + swapping the result in for path_sl).
 *
 * Plugin options (opensm.conf `event_plugin_options`, comma or blank separated):
 *   parx_demand=<file>   demand file read by parx on every routing run (optional)
 *   sar_jobs=<file>      job-to-node file read by sar on every routing run (optional)
 *   max_vls=<n>          cap on the virtual lanes the engines may use (default 8)
 *   px_snapshot=<file>   write the switch graph of each routing run there (px_snapshot.h)
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
	char input[4096];	/* the file px_read_input read last */
	/* engine-specific routing: fills g->next/new_lft and dest_order; 0 or -1 */
	int (*route)(px_engine_t *e, px_graph_t *g, int *dest_order);
	int one_vl;		/* 1: every path on SL/VL 0, no layering (floyd) */
};

/* Copies the value of plugin option `key` into buf; returns 1 if present, 0 if not. */
int px_option(osm_opensm_t *osm, const char *key, char *buf, size_t len);

#ifndef PX_STANDALONE
/* Fills the common callbacks of `re` for engine `e`. */
void px_engine_setup(osm_routing_engine_t *re, px_engine_t *e);

/* Frees the installed routing (engine destroy and plugin unload). */
void px_engine_release(px_engine_t *e);

/* OpenSM's setup callback of both engines (context: the px_engine_t with `route` set). */
int px_setup(osm_routing_engine_t *re, osm_opensm_t *osm);
#endif

/* The engines' routing steps (parx.c, sar.c, floyd.c). */
int parx_route(px_engine_t *e, px_graph_t *g, int *dest_order);
int sar_route(px_engine_t *e, px_graph_t *g, int *dest_order);
int floyd_route(px_engine_t *e, px_graph_t *g, int *dest_order);

/* Reads a whole line-oriented input file; returns malloc'd NUL-terminated text or NULL. */
char *px_read_file(px_graph_t *g, const char *path);

/* The engines' input files (demand, jobs): one record per line, `#` starts a comment, the
 * first word names a node (hostname or 0x GUID), blanks separate words. */
#define PX_BLANKS " \t\r"

typedef struct px_input {
	const char *path;
	int lineno;
	int unknown;		/* unknown node names seen so far */
} px_input_t;

/* Called per line with the node of its first word (-1: not in the fabric, already logged);
 * the other words come from strtok_r(NULL, PX_BLANKS, save). Returns 0 or -1 (logged). */
typedef int (*px_line_t)(px_graph_t *g, px_input_t *in, int node, char **save, void *arg);

/* Reads the file named by plugin option `key` (its path lands in e->input) line by line.
 * Returns 1 when read, 0 when the option is absent (`absent` is logged), -1 on errors. */
int px_read_input(px_engine_t *e, px_graph_t *g, const char *key, const char *absent,
		  px_line_t line, void *arg);

/* Logs that a node named in an input file is not in the fabric and is skipped. */
void px_input_unknown(px_graph_t *g, px_input_t *in, const char *name);

#endif
