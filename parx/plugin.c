/*
 * OpenSM event plugin that registers the external routing engines `parx`, `sar` and `floyd`.
 *
 * opensm.conf:
 *   event_plugin_name parx           # dlopen("libparx.so"): install it or set LD_LIBRARY_PATH
 *   event_plugin_options parx_demand=/path/demand.txt,sar_jobs=/path/jobs.txt
 *   routing_engine parx,no_fallback  # or sar, floyd
 *   lmc 2                            # parx
 *   qos TRUE                         # so OpenSM programs the SL2VL maps the engines ask for
 */
#include <stdlib.h>
#include <string.h>

#include "px_engine.h"
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_version.h>

typedef struct px_plugin {
	osm_opensm_t *osm;
	px_engine_t parx, sar, floyd;
} px_plugin_t;

static int register_engine(px_plugin_t *p, px_engine_t *e, const char *name,
			   int (*route)(px_engine_t *, px_graph_t *, int *))
{
	external_routing_engine_module_t module = { name, px_setup, e };

	e->name = name;
	e->osm = p->osm;
	e->route = route;
	if (osm_register_external_routing_engine(p->osm, &module, e) != CL_SUCCESS) {
		OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "%s: ERR FA51: cannot register the routing engine\n",
			name);
		return -1;
	}
	OSM_LOG(&p->osm->log, OSM_LOG_VERBOSE, "%s: routing engine registered\n", name);
	return 0;
}

static void *px_plugin_create(osm_opensm_t *osm)
{
	px_plugin_t *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->osm = osm;
	p->floyd.one_vl = 1;	/* SimGrid's routes know no deadlock: one SL/VL, no layering */
	if (register_engine(p, &p->parx, "parx", parx_route) ||
	    register_engine(p, &p->sar, "sar", sar_route) ||
	    register_engine(p, &p->floyd, "floyd", floyd_route)) {
		free(p);
		return NULL;
	}
	return p;
}

static void px_plugin_delete(void *data)
{
	px_plugin_t *p = data;

	if (!p)
		return;
	px_engine_release(&p->parx);
	px_engine_release(&p->sar);
	px_engine_release(&p->floyd);
	free(p);
}

static void px_plugin_report(void *data, osm_epi_event_id_t id, void *event)
{
	(void)data;
	(void)id;
	(void)event;
}

osm_event_plugin_t osm_event_plugin = {
	OSM_VERSION,
	px_plugin_create,
	px_plugin_delete,
	px_plugin_report,
};
