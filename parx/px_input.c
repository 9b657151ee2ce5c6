/* px_input: the engines' line-oriented input files (demand, jobs), shared by the plugin
 * and px-sar; the file named by a plugin option is read on every routing run. */
#include "px_engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *px_read_file(px_graph_t *g, const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0, n = 0, r;

	if (!f) {
		PX_LOG(g, OSM_LOG_ERROR, "ERR FA21: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	do {
		if (n + 4096 + 1 > cap) {
			char *t = realloc(text, cap = 2 * cap + 8192);

			if (!t) {
				free(text);
				fclose(f);
				PX_LOG(g, OSM_LOG_ERROR, "ERR FA22: out of memory reading %s\n", path);
				return NULL;
			}
			text = t;
		}
		r = fread(text + n, 1, 4096, f);
		n += r;
	} while (r > 0);
	fclose(f);
	text[n] = '\0';
	return text;
}

void px_input_unknown(px_graph_t *g, px_input_t *in, const char *name)
{
	if (in->unknown < 20)
		PX_LOG(g, OSM_LOG_INFO, "WARNING: %s:%d: node '%s' is not in the fabric; skipped\n",
		       in->path, in->lineno, name);
	else if (in->unknown == 20)
		PX_LOG(g, OSM_LOG_INFO, "WARNING: more unknown nodes in %s not shown\n", in->path);
	in->unknown++;
}

int px_read_input(px_engine_t *e, px_graph_t *g, const char *key, const char *absent,
		  px_line_t line, void *arg)
{
	char *text, *l, *next;
	px_input_t in = { e->input, 0, 0 };
	int rc = 0;

	if (!px_option(e->osm, key, e->input, sizeof(e->input))) {
		PX_LOG(g, OSM_LOG_INFO, "no %s option: %s\n", key, absent);
		return 0;
	}
	if (!(text = px_read_file(g, e->input)))
		return -1;
	for (l = text; !rc && l && *l; l = next) {
		char *save = NULL, *name;
		int node;

		in.lineno++;
		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		if (strchr(l, '#'))
			*strchr(l, '#') = '\0';
		if (!(name = strtok_r(l, PX_BLANKS, &save)))
			continue;
		if ((node = px_graph_find_node(g, name)) < 0)
			px_input_unknown(g, &in, name);
		rc = line(g, &in, node, &save, arg);
	}
	free(text);
	return rc ? -1 : 1;
}
