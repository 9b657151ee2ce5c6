/* px_snapshot: write (plugin) and read (px-sar) the switch graph of a routing run. */
#include "px_snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PX_STANDALONE

int px_snapshot_write(const px_graph_t *g, int layers, const char *path)
{
	char tmp[4112];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w"))) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA61: cannot write %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "%s\ngraph %d %d %d %d %d %u %d\n", PX_SNAPSHOT_MAGIC, g->nsw, g->nchan,
		g->nterm, g->nnode, g->ndest, (unsigned)g->max_lid, layers);
	for (i = 0; i < g->nsw; i++)
		fprintf(f, "sw 0x%016" PRIx64 " %u %u %u\n", g->sws[i].guid, (unsigned)g->sws[i].lid,
			(unsigned)g->sws[i].osw->lft_size, (unsigned)g->sws[i].osw->max_lid_ho);
	for (i = 0; i < g->nchan; i++)
		fprintf(f, "chan %d %d %u\n", g->chans[i].from, g->chans[i].to,
			(unsigned)g->chans[i].port);
	for (i = 0; i < g->nnode; i++)
		fprintf(f, "node 0x%016" PRIx64 " =%s\n", g->nodes[i].guid, g->nodes[i].name);
	for (i = 0; i < g->nterm; i++)
		fprintf(f, "term 0x%016" PRIx64 " %d %d %u %u %u\n", g->terms[i].port_guid,
			g->terms[i].node, g->terms[i].sw, (unsigned)g->terms[i].sw_port,
			(unsigned)g->terms[i].base_lid, (unsigned)g->terms[i].top_lid);
	for (i = 0; i < g->ndest; i++)
		fprintf(f, "dest %u %d %u %d %d\n", (unsigned)g->dests[i].lid, g->dests[i].sw,
			(unsigned)g->dests[i].last_port, g->dests[i].term, g->dests[i].offset);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA61: cannot write %s\n", path);
		return -1;
	}
	PX_LOG(g, OSM_LOG_INFO, "graph snapshot written to %s\n", path);
	return 0;
}

#else

typedef struct reader {
	FILE *f;
	const char *path;
	int lineno;
	char line[256];
	char *err;
	size_t errlen;
} reader_t;

static int bad(reader_t *r, const char *what)
{
	snprintf(r->err, r->errlen, "%s:%d: %s", r->path, r->lineno, what);
	return -1;
}

/* The next line, which must start with `tag` followed by a blank; its rest in *rest. */
static int next_line(reader_t *r, const char *tag, const char **rest)
{
	size_t n = strlen(tag);

	r->lineno++;
	if (!fgets(r->line, sizeof(r->line), r->f))
		return bad(r, "truncated (re-route with px_snapshot= to rewrite it)");
	if (strncmp(r->line, tag, n) || r->line[n] != ' ')
		return bad(r, "unexpected line (not a px-snapshot 1 file?)");
	*rest = r->line + n + 1;
	return 0;
}

static int *append(int *arr, int *n, int v)
{
	int *a = realloc(arr, (size_t)(*n + 1) * sizeof(int));

	if (a)
		a[(*n)++] = v;
	return a;
}

static int in_range(int v, int n)
{
	return v >= 0 && v < n;
}

static int read_body(reader_t *r, px_graph_t *g, int *layers)
{
	const char *s;
	unsigned a, b, c, e;
	int i, x, y;
	uint64_t guid;

	if (next_line(r, "graph", &s) ||
	    sscanf(s, "%d %d %d %d %d %u %d", &g->nsw, &g->nchan, &g->nterm, &g->nnode, &g->ndest,
		   &a, layers) != 7 || g->nsw < 1 || g->nchan < 0 || g->nterm < 0 || g->nnode < 0 ||
	    g->ndest < 1 || a > 0xffff)
		return r->err[0] ? -1 : bad(r, "bad graph line");
	g->max_lid = (uint16_t)a;
	g->sws = calloc((size_t)g->nsw + 1, sizeof(*g->sws));
	g->chans = calloc((size_t)g->nchan + 1, sizeof(*g->chans));
	g->nodes = calloc((size_t)g->nnode + 1, sizeof(*g->nodes));
	g->terms = calloc((size_t)g->nterm + 1, sizeof(*g->terms));
	g->dests = calloc((size_t)g->ndest + 1, sizeof(*g->dests));
	g->dest_of_lid = malloc(((size_t)g->max_lid + 1) * sizeof(int));
	g->sw_of_lid = malloc(((size_t)g->max_lid + 1) * sizeof(int));
	if (!g->sws || !g->chans || !g->nodes || !g->terms || !g->dests || !g->dest_of_lid ||
	    !g->sw_of_lid)
		return bad(r, "out of memory");
	for (i = 0; i <= g->max_lid; i++)
		g->dest_of_lid[i] = g->sw_of_lid[i] = -1;
	for (i = 0; i < g->nsw; i++) {
		px_switch_t *sw = &g->sws[i];

		if (next_line(r, "sw", &s) ||
		    sscanf(s, "%" SCNx64 " %u %u %u", &guid, &a, &b, &c) != 4 || a > 0xffff ||
		    b > 0x10000 || c > 0xffff)
			return r->err[0] ? -1 : bad(r, "bad sw line");
		sw->guid = guid;
		sw->lid = (uint16_t)a;
		sw->lft_size = (uint16_t)(b > 0xffff ? 0xffff : b);
		sw->max_lid_ho = (uint16_t)c;
		sw->quadrant = -1;
		if (!(sw->lft = malloc((size_t)sw->lft_size + 1)))
			return bad(r, "out of memory");
		memset(sw->lft, OSM_NO_PATH, (size_t)sw->lft_size + 1);
	}
	for (i = 0; i < g->nchan; i++) {
		if (next_line(r, "chan", &s) || sscanf(s, "%d %d %u", &x, &y, &a) != 3 ||
		    !in_range(x, g->nsw) || !in_range(y, g->nsw) || a > 0xff)
			return r->err[0] ? -1 : bad(r, "bad chan line");
		g->chans[i] = (px_chan_t){ .from = x, .to = y, .port = (uint8_t)a, .weight = 0 };
		if (!(g->sws[x].out = append(g->sws[x].out, &g->sws[x].nout, i)) ||
		    !(g->sws[y].in = append(g->sws[y].in, &g->sws[y].nin, i)))
			return bad(r, "out of memory");
	}
	for (i = 0; i < g->nnode; i++) {
		const char *eq;

		if (next_line(r, "node", &s) || sscanf(s, "%" SCNx64, &guid) != 1 ||
		    !(eq = strchr(s, '=')))
			return r->err[0] ? -1 : bad(r, "bad node line");
		g->nodes[i].guid = guid;
		snprintf(g->nodes[i].name, sizeof(g->nodes[i].name), "%.*s",
			 (int)strcspn(eq + 1, "\n"), eq + 1);
	}
	for (i = 0; i < g->nterm; i++) {
		px_term_t *t = &g->terms[i];

		if (next_line(r, "term", &s) ||
		    sscanf(s, "%" SCNx64 " %d %d %u %u %u", &guid, &x, &y, &a, &b, &c) != 6 ||
		    !in_range(x, g->nnode) || !in_range(y, g->nsw) || a > 0xff || b > c ||
		    c > g->max_lid)
			return r->err[0] ? -1 : bad(r, "bad term line");
		*t = (px_term_t){ .port_guid = guid, .node = x, .sw = y, .sw_port = (uint8_t)a,
				  .base_lid = (uint16_t)b, .top_lid = (uint16_t)c };
		if (!(g->nodes[x].terms = append(g->nodes[x].terms, &g->nodes[x].nterms, i)))
			return bad(r, "out of memory");
		g->sws[y].nterm++;
	}
	for (i = 0; i < g->ndest; i++) {
		if (next_line(r, "dest", &s) ||
		    sscanf(s, "%u %d %u %d %u", &a, &x, &b, &y, &e) != 5 || a > g->max_lid ||
		    !in_range(x, g->nsw) || b > 0xff || y >= g->nterm)
			return r->err[0] ? -1 : bad(r, "bad dest line");
		g->dests[i] = (px_dest_t){ .lid = (uint16_t)a, .sw = x, .last_port = (uint8_t)b,
					   .term = y, .offset = (int)e };
		g->dest_of_lid[a] = i;
		g->sw_of_lid[a] = x;
	}
	return 0;
}

int px_snapshot_read(px_graph_t *g, int *layers, const char *path, const char *engine,
		     char *err, size_t errlen)
{
	reader_t r = { .path = path, .err = err, .errlen = errlen };
	int rc;

	memset(g, 0, sizeof(*g));
	g->engine = engine;
	err[0] = '\0';
	if (!(r.f = fopen(path, "r"))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	r.lineno = 1;
	rc = (!fgets(r.line, sizeof(r.line), r.f) ||
	      strncmp(r.line, PX_SNAPSHOT_MAGIC "\n", sizeof(PX_SNAPSHOT_MAGIC))) ?
		bad(&r, "not a px-snapshot 1 file") : read_body(&r, g, layers);
	if (!rc && fgets(r.line, sizeof(r.line), r.f) && (r.lineno++, 1))
		rc = bad(&r, "trailing data");
	fclose(r.f);
	if (!rc && px_graph_scratch(g)) {
		snprintf(err, errlen, "%s: out of memory", path);
		rc = -1;
	}
	if (rc)
		px_graph_free(g);
	return rc;
}

#endif
