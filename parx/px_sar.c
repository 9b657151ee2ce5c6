/*
 * px-sar: the sar routing engine without OpenSM, for job-history replays (seed 004), which
 * route one subnet for thousands of job sets. OpenSM routes the plane once with the plugin
 * option px_snapshot=<file> (px_snapshot.h); px-sar then routes that graph for each job file
 * with the plugin's own code (sar.c, px_run.c, px_graph.c, px_layers.c), so its forwarding
 * tables are the ones OpenSM would have installed (tests/test_history_sar.py compares them).
 *
 *   px-sar SNAPSHOT JOBS OUT [SL]  route once, write the LFTs to OUT (and the layers to SL)
 *   px-sar SNAPSHOT                read "JOBS OUT [SL]" lines from stdin; answer each with
 *                                  "ok OUT" or "error <why>" once OUT (and SL) is complete
 *
 * OUT ("px-lft 1"): a text line "px-lft 1 <nsw> <max_lid>", then per switch in snapshot
 * order its GUID (8 bytes, little endian) and its LFT for LIDs 0..max_lid (one byte each,
 * 255 = no path), written to OUT.tmp and renamed. SL ("px-sl 1"): a text line
 * "px-sl 1 <ndest> <nsw> <nlayers>", the switch GUIDs in snapshot order (8 bytes each, little
 * endian), then per destination its LID (2 bytes, little endian) and the layer (= SL = VL)
 * of the path from each of those switches (255 = none): what
 * the plugin answers path_sl, for checks of the VLs (t2hx/routing/lftupdate.py). As in the
 * plugin, a routing whose VL
 * layering would need more layers than the snapshot's limit is an error (OpenSM would fall
 * back to another engine). Exit status: 0, 1 on a routing error, 2 on bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_engine.h"
#include "px_layers.h"
#include "px_snapshot.h"

int px_log_level = OSM_LOG_ERROR;
static const char *jobs_path;

int px_option(osm_opensm_t *osm, const char *key, char *buf, size_t len)
{
	(void)osm;
	if (strcmp(key, "sar_jobs") || !jobs_path)
		return 0;
	snprintf(buf, len, "%s", jobs_path);
	return 1;
}

static void reset(px_graph_t *g)
{
	int i;

	for (i = 0; i < g->nchan; i++)
		g->chans[i].weight = 0;
	for (i = 0; i < g->ndest; i++)
		g->dests[i].routed = 0;
	for (i = 0; i < g->nsw; i++)
		memset(g->sws[i].lft, OSM_NO_PATH, (size_t)g->sws[i].lft_size + 1);
}

static int write_lfts(const px_graph_t *g, const char *out, char *err, size_t errlen)
{
	char tmp[4112];
	FILE *f;
	int s, b;
	unsigned lid;

	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	if (!(f = fopen(tmp, "wb"))) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "px-lft 1 %d %u\n", g->nsw, (unsigned)g->max_lid);
	for (s = 0; s < g->nsw; s++) {
		const px_switch_t *sw = &g->sws[s];

		for (b = 0; b < 8; b++)
			fputc((int)((sw->guid >> (8 * b)) & 0xff), f);
		for (lid = 0; lid <= g->max_lid; lid++)
			fputc(lid < sw->lft_size ? sw->lft[lid] : OSM_NO_PATH, f);
	}
	if (fclose(f) != 0 || rename(tmp, out) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", out, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

static int write_layers(const px_graph_t *g, const px_layer_result_t *lay, const char *out,
			char *err, size_t errlen)
{
	char tmp[4112];
	FILE *f;
	int d, b;

	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	if (!(f = fopen(tmp, "wb"))) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "px-sl 1 %d %d %d\n", g->ndest, lay->nsw, lay->nlayers);
	for (d = 0; d < g->nsw; d++)
		for (b = 0; b < 8; b++)
			fputc((int)((g->sws[d].guid >> (8 * b)) & 0xff), f);
	for (d = 0; d < g->ndest; d++) {
		fputc(g->dests[d].lid & 0xff, f);
		fputc(g->dests[d].lid >> 8, f);
		fwrite(lay->layer + (size_t)d * (size_t)lay->nsw, 1, (size_t)lay->nsw, f);
	}
	if (fclose(f) != 0 || rename(tmp, out) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", out, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

/* One routing for one job file (layers to `sl` unless NULL); 0, or -1 with why in err. */
static int route(px_graph_t *g, int layers, const char *jobs, const char *out, const char *sl,
		 char *err, size_t errlen)
{
	px_engine_t e = { .name = "sar" };
	px_layer_result_t lay;
	int *order = malloc(((size_t)g->ndest + 1) * sizeof(int));
	int rc = -1;

	jobs_path = jobs;
	reset(g);
	if (!order)
		snprintf(err, errlen, "out of memory");
	else if (sar_route(&e, g, order))
		snprintf(err, errlen, "sar could not route %s (see the messages above)", jobs);
	else if (px_layers_assign(g, order, layers, &lay))
		snprintf(err, errlen, "the routing of %s needs more than %d virtual layers", jobs,
			 layers);
	else {
		rc = (sl && write_layers(g, &lay, sl, err, errlen)) ? -1 :
			write_lfts(g, out, err, errlen);
		px_layers_free(&lay);
	}
	free(order);
	return rc;
}

static int serve(px_graph_t *g, int layers)
{
	char line[12400], jobs[4096], out[4096], sl[4096], err[8400];
	int n;

	while (fgets(line, sizeof(line), stdin)) {
		if ((n = sscanf(line, "%4095s %4095s %4095s", jobs, out, sl)) < 2) {
			printf("error expected 'JOBS OUT [SL]', got: %s", line);
		} else if (route(g, layers, jobs, out, n == 3 ? sl : NULL, err, sizeof(err))) {
			printf("error %s\n", err);
		} else {
			printf("ok %s\n", out);
		}
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	px_graph_t g;
	char err[8400];
	int layers, rc;

	if (argc != 2 && argc != 4 && argc != 5) {
		fprintf(stderr, "usage: px-sar SNAPSHOT [JOBS OUT [SL]]\n");
		return 2;
	}
	if (px_snapshot_read(&g, &layers, argv[1], "sar", err, sizeof(err))) {
		fprintf(stderr, "px-sar: %s\n", err);
		return 2;
	}
	if (argc == 2)
		rc = serve(&g, layers);
	else if ((rc = route(&g, layers, argv[2], argv[3], argc == 5 ? argv[4] : NULL, err,
			     sizeof(err))))
		fprintf(stderr, "px-sar: %s\n", err);
	px_graph_free(&g);
	return rc ? 1 : 0;
}
