/* The flow model's per-rank timelines (t2hx/flowsim/timeline.py, fluid_times): messages
 * start after their dependencies were delivered (plus their compute), drain at max-min
 * rates re-solved over the connected component of the flows an event touches, and are
 * delivered their latency after they drained (docs/modelling.md#per-rank-timelines).
 *
 * This is timeline.py's _Fluid, event for event: the same two queues ordered as its
 * tuples are (events by (time, start 0 | delivery 1, message); drains by (due, version,
 * message), stale versions skipped), the same traversal of what a delivery releases, and
 * max-min with the operations of t2hx/flowsim/maxmin.py in its order (a round's rates summed
 * per link in flow order, then taken from the link's remaining capacity), so its results
 * are the Python loop's to the bit (tests/test_timeline_kernel.py compares both). Built with
 * -std=c11, where GCC contracts no a*b+c into a fused multiply-add.
 *
 * A component's rates are kept under its flows' paths, as the Python loop keeps them: paths
 * are interned once (a path id per message), a component's key is its sorted flows' path
 * ids, and the table starts over when full (a lookup never changes a result). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-9                      /* t2hx/flowsim/maxmin.py RTOL */
#define KEPT 65536                     /* timeline.py SOLVED_KEPT */
#define SLOTS (4 * KEPT)
#define KEY_WORDS_KEPT (8 << 20)      /* path ids held by the table before it starts over */

enum { OK = 0, OOM = 1, ZERO_RATE = 2 };

typedef struct { double t; int32_t what, i; } ev_t;           /* what: 0 start, 1 delivery */
typedef struct { double t; int64_t ver; int32_t i; } dr_t;

typedef struct { int32_t *flow, *hop; int32_t n, cap; } on_link_t;

typedef struct { uint64_t h; int64_t key, rates; int32_t m, used; } slot_t;

typedef struct {
    int64_t n, nlinks;
    const double *cap, *size, *lat, *busy;
    /* per message: its links (lk[lk_off[i]..lk_off[i+1])), path id, dependents */
    int64_t *lk_off; int32_t *lk, *pos, *pid;
    int64_t *u_off; int32_t *users;
    int64_t *waiting, *version;
    double *rate, *rem, *since, *lone, *out;
    on_link_t *on;
    ev_t *ev; int64_t nev, cev;
    dr_t *dr; int64_t ndr, cdr;
    /* scratch: components and max-min */
    int32_t *stack, *comp; uint32_t *seen, epoch;
    uint32_t *lstamp; int32_t *loc; uint32_t lepoch;
    double *remain, *share, *taken, *best, *rates;
    int64_t *cnt, *veto; int32_t *alive, *path_buf;
    /* kept components */
    slot_t *slot; int64_t kept;
    int32_t *keys; int64_t nkeys, ckeys;
    double *kr; int64_t nkr, ckr;
    int64_t resolves, hits, events;
    int err;
} st_t;

/* -- queues: binary heaps ordered as timeline.py's tuples --------------------------- */
static int ev_less(const ev_t *a, const ev_t *b) {
    if (a->t != b->t) return a->t < b->t;
    if (a->what != b->what) return a->what < b->what;
    return a->i < b->i;
}

static int dr_less(const dr_t *a, const dr_t *b) {
    if (a->t != b->t) return a->t < b->t;
    if (a->ver != b->ver) return a->ver < b->ver;
    return a->i < b->i;
}

#define HEAP_FNS(NAME, T, LESS, A, N, C)                                                  \
    static void NAME##_push(st_t *s, T e) {                                               \
        if (s->N == s->C) {                                                               \
            int64_t c = s->C ? 2 * s->C : 1024;                                           \
            T *a = realloc(s->A, (size_t)c * sizeof(T));                                  \
            if (!a) { s->err = OOM; return; }                                             \
            s->A = a; s->C = c;                                                           \
        }                                                                                 \
        int64_t k = s->N++;                                                               \
        while (k > 0) {                                                                   \
            int64_t p = (k - 1) / 2;                                                      \
            if (!LESS(&e, &s->A[p])) break;                                               \
            s->A[k] = s->A[p];                                                            \
            k = p;                                                                        \
        }                                                                                 \
        s->A[k] = e;                                                                      \
    }                                                                                     \
    static T NAME##_pop(st_t *s) {                                                        \
        T top = s->A[0], e = s->A[--s->N];                                                \
        int64_t k = 0, n = s->N;                                                          \
        for (;;) {                                                                        \
            int64_t c = 2 * k + 1;                                                        \
            if (c >= n) break;                                                            \
            if (c + 1 < n && LESS(&s->A[c + 1], &s->A[c])) c++;                           \
            if (!LESS(&s->A[c], &e)) break;                                               \
            s->A[k] = s->A[c];                                                            \
            k = c;                                                                        \
        }                                                                                 \
        if (n) s->A[k] = e;                                                               \
        return top;                                                                       \
    }
HEAP_FNS(ev, ev_t, ev_less, ev, nev, cev)
HEAP_FNS(dr, dr_t, dr_less, dr, ndr, cdr)

/* -- flows on links ---------------------------------------------------------------- */
static int link_add(st_t *s, int32_t link, int32_t f, int32_t hop) {
    on_link_t *o = &s->on[link];
    if (o->n == o->cap) {
        int32_t c = o->cap ? 2 * o->cap : 4;
        int32_t *a = realloc(o->flow, (size_t)c * sizeof(int32_t));
        if (!a) return OOM;
        o->flow = a;
        a = realloc(o->hop, (size_t)c * sizeof(int32_t));
        if (!a) return OOM;
        o->hop = a;
        o->cap = c;
    }
    s->pos[s->lk_off[f] + hop] = o->n;
    o->flow[o->n] = f;
    o->hop[o->n++] = hop;
    return OK;
}

static void link_remove(st_t *s, int32_t link, int32_t f, int32_t hop) {
    on_link_t *o = &s->on[link];
    int32_t at = s->pos[s->lk_off[f] + hop], last = --o->n;
    if (at != last) {
        o->flow[at] = o->flow[last];
        o->hop[at] = o->hop[last];
        s->pos[s->lk_off[o->flow[at]] + o->hop[at]] = at;
    }
}

/* -- max-min over one component, as maxmin.py -------------------------------------- */
static void solve(st_t *s, const int32_t *flows, int32_t m, double *rate) {
    int32_t nt = 0, left = m;
    if (++s->lepoch == 0) { memset(s->lstamp, 0, (size_t)s->nlinks * sizeof(uint32_t)); s->lepoch = 1; }
    for (int32_t k = 0; k < m; k++) {
        for (int64_t j = s->lk_off[flows[k]]; j < s->lk_off[flows[k] + 1]; j++) {
            int32_t l = s->lk[j];
            if (s->lstamp[l] != s->lepoch) {
                s->lstamp[l] = s->lepoch;
                s->loc[l] = nt;
                s->remain[nt++] = s->cap[l];
            }
        }
        s->alive[k] = k;
    }
    const double bound = 1 + RTOL;
    while (left > 0) {
        for (int32_t t = 0; t < nt; t++) { s->cnt[t] = 0; s->veto[t] = 0; s->taken[t] = 0.0; }
        for (int32_t a = 0; a < left; a++) {
            int32_t f = flows[s->alive[a]];
            for (int64_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++) s->cnt[s->loc[s->lk[j]]]++;
        }
        for (int32_t t = 0; t < nt; t++) {
            double sh = s->cnt[t] > 0 ? s->remain[t] / (double)s->cnt[t] : INFINITY;
            s->share[t] = sh < 0.0 ? 0.0 : sh;
        }
        for (int32_t a = 0; a < left; a++) {
            int32_t f = flows[s->alive[a]];
            double b = INFINITY;
            for (int64_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++) {
                double sh = s->share[s->loc[s->lk[j]]];
                if (sh < b) b = sh;
            }
            s->best[a] = b;
            double limit = b * bound;
            for (int64_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++)
                if (s->share[s->loc[s->lk[j]]] > limit) s->veto[s->loc[s->lk[j]]]++;
        }
        int32_t kept = 0;
        for (int32_t a = 0; a < left; a++) {
            int32_t k = s->alive[a], f = flows[k], hit = 0;
            for (int64_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++)
                hit |= s->veto[s->loc[s->lk[j]]] == 0;
            if (!hit) { s->alive[kept++] = k; continue; }
            rate[k] = s->best[a];
            for (int64_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++)
                s->taken[s->loc[s->lk[j]]] += s->best[a];
        }
        for (int32_t t = 0; t < nt; t++) {
            double r = s->remain[t] - s->taken[t];
            s->remain[t] = r < 0.0 ? 0.0 : r;
        }
        left = kept;
    }
}

/* -- kept components ---------------------------------------------------------------- */
static uint64_t mix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static void forget(st_t *s) {
    for (int64_t i = 0; i < SLOTS; i++) s->slot[i].used = 0;
    s->kept = s->nkeys = s->nkr = 0;
}

static int grow(void **a, int64_t *cap, int64_t want, size_t each) {
    if (want <= *cap) return OK;
    int64_t c = *cap ? *cap : 4096;
    while (c < want) c *= 2;
    void *b = realloc(*a, (size_t)c * each);
    if (!b) return OOM;
    *a = b;
    *cap = c;
    return OK;
}

/* The rates of the component's flows (sorted), from the table or solved and kept. */
static const double *component_rates(st_t *s, const int32_t *flows, int32_t m) {
    uint64_t h = mix((uint64_t)m);
    for (int32_t k = 0; k < m; k++) h = mix(h ^ (uint64_t)(uint32_t)s->pid[flows[k]]);
    int64_t i = (int64_t)(h & (SLOTS - 1));
    for (; s->slot[i].used; i = (i + 1) & (SLOTS - 1)) {
        slot_t *e = &s->slot[i];
        if (e->h != h || e->m != m) continue;
        int32_t k = 0;
        while (k < m && s->keys[e->key + k] == s->pid[flows[k]]) k++;
        if (k == m) { s->hits++; return s->kr + e->rates; }
    }
    solve(s, flows, m, s->rates);
    if (s->kept >= KEPT || s->nkeys + m > KEY_WORDS_KEPT) {
        forget(s);
        i = (int64_t)(h & (SLOTS - 1));
    }
    if (grow((void **)&s->keys, &s->ckeys, s->nkeys + m, sizeof(int32_t)) ||
        grow((void **)&s->kr, &s->ckr, s->nkr + m, sizeof(double))) {
        s->err = OOM;
        return s->rates;
    }
    while (s->slot[i].used) i = (i + 1) & (SLOTS - 1);
    s->slot[i] = (slot_t){h, s->nkeys, s->nkr, m, 1};
    for (int32_t k = 0; k < m; k++) {
        s->keys[s->nkeys + k] = s->pid[flows[k]];
        s->kr[s->nkr + k] = s->rates[k];
    }
    s->nkeys += m;
    s->nkr += m;
    s->kept++;
    return s->kr + s->slot[i].rates;
}

/* -- the event loop ------------------------------------------------------------------ */
static void set_rate(st_t *s, int32_t f, double r, double t) {
    s->rem[f] -= s->rate[f] * (t - s->since[f]);
    s->since[f] = t;
    s->rate[f] = r;
    s->version[f]++;
    if (r == 0.0) { s->err = ZERO_RATE; return; }
    dr_push(s, (dr_t){t + s->rem[f] / r, s->version[f], f});
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The flows sharing a link with the seeds (in s->comp[0..*m)), through other flows too,
 * sorted; the seeds are the first *m entries of s->comp on entry. */
static void component(st_t *s, int32_t *m) {
    if (++s->epoch == 0) { memset(s->seen, 0, (size_t)s->n * sizeof(uint32_t)); s->epoch = 1; }
    int32_t n = 0, top = 0;
    for (int32_t k = 0; k < *m; k++) {
        if (s->seen[s->comp[k]] == s->epoch) continue;
        s->seen[s->comp[k]] = s->epoch;
        s->stack[top++] = s->comp[k];
    }
    while (top) {
        int32_t f = s->stack[--top];
        s->comp[n++] = f;
        for (int64_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++) {
            const on_link_t *o = &s->on[s->lk[j]];
            for (int32_t q = 0; q < o->n; q++) {
                int32_t g = o->flow[q];
                if (s->seen[g] != s->epoch) {
                    s->seen[g] = s->epoch;
                    s->stack[top++] = g;
                }
            }
        }
    }
    qsort(s->comp, (size_t)n, sizeof(int32_t), cmp_i32);
    *m = n;
}

static void resolve(st_t *s, int32_t m, double t) {
    component(s, &m);
    s->resolves++;
    const double *r = component_rates(s, s->comp, m);
    for (int32_t k = 0; k < m && !s->err; k++)
        if (r[k] != s->rate[s->comp[k]]) set_rate(s, s->comp[k], r[k], t);
}

static void start(st_t *s, int32_t i, double t) {
    if (s->rem[i] <= 0) {
        ev_push(s, (ev_t){t + s->lat[i], 1, i});
        return;
    }
    int touched = 0;
    for (int64_t j = s->lk_off[i]; j < s->lk_off[i + 1]; j++) {
        touched |= s->on[s->lk[j]].n > 0;
        if (link_add(s, s->lk[j], i, (int32_t)(j - s->lk_off[i]))) { s->err = OOM; return; }
    }
    s->since[i] = t;
    if (!touched) {
        set_rate(s, i, s->lone[i], t);
        return;
    }
    s->comp[0] = i;
    resolve(s, 1, t);
}

/* What a delivery releases, as timeline.py's _deliver: a released message with neither
 * compute, bytes nor latency is delivered at once (a list, last in first out, in
 * path_buf: no drain is under way). */
static void deliver(st_t *s, int32_t first, double t) {
    int32_t *now = s->path_buf, top = 0;
    now[top++] = first;
    while (top && !s->err) {
        int32_t i = now[--top];
        s->out[i] = t;
        for (int64_t k = s->u_off[i]; k < s->u_off[i + 1]; k++) {
            int32_t u = s->users[k];
            if (--s->waiting[u]) continue;
            if (s->busy[u] != 0.0) ev_push(s, (ev_t){t + s->busy[u], 0, u});
            else if (s->rem[u] > 0) start(s, u, t);
            else if (s->lat[u] != 0.0) ev_push(s, (ev_t){t + s->lat[u], 1, u});
            else now[top++] = u;
        }
    }
}

static void drain(st_t *s) {
    dr_t d = dr_pop(s);
    double due = d.t;
    int32_t m = 0;
    s->path_buf[m++] = d.i;
    while (s->ndr) {
        dr_t e = s->dr[0];
        if (e.ver != s->version[e.i]) { dr_pop(s); continue; }
        if ((e.t - due) * s->rate[e.i] > 1e-9 * s->size[e.i]) break;
        dr_pop(s);
        s->path_buf[m++] = e.i;
    }
    if (++s->epoch == 0) { memset(s->seen, 0, (size_t)s->n * sizeof(uint32_t)); s->epoch = 1; }
    uint32_t done = s->epoch;
    for (int32_t k = 0; k < m; k++) s->seen[s->path_buf[k]] = done;
    int32_t near = 0;
    for (int32_t k = 0; k < m; k++) {
        int32_t i = s->path_buf[k];
        s->rem[i] = 0.0;
        s->version[i]++;
        for (int64_t j = s->lk_off[i]; j < s->lk_off[i + 1]; j++) {
            link_remove(s, s->lk[j], i, (int32_t)(j - s->lk_off[i]));
            const on_link_t *o = &s->on[s->lk[j]];
            for (int32_t q = 0; q < o->n; q++)
                if (s->seen[o->flow[q]] != done) {
                    s->seen[o->flow[q]] = done;
                    s->comp[near++] = o->flow[q];
                }
        }
        ev_push(s, (ev_t){due + s->lat[i], 1, i});
    }
    if (near) resolve(s, near, due);
}

static int run(st_t *s) {
    for (int32_t i = 0; i < s->n; i++)
        if (s->waiting[i] == 0) ev_push(s, (ev_t){s->busy[i], 0, i});
    while ((s->nev || s->ndr) && !s->err) {
        while (s->ndr && s->dr[0].ver != s->version[s->dr[0].i]) dr_pop(s);
        s->events++;
        if (s->nev && (!s->ndr || s->ev[0].t <= s->dr[0].t)) {
            ev_t e = ev_pop(s);
            if (e.what == 1) deliver(s, e.i, e.t);
            else start(s, e.i, e.t);
        } else if (s->ndr) {
            drain(s);
        }
    }
    return s->err;
}

/* -- set-up --------------------------------------------------------------------------- */
/* Path ids: equal link sequences, equal ids (an open-addressing table over the messages). */
static int intern_paths(st_t *s) {
    int64_t cap = 1;
    while (cap < 2 * s->n) cap *= 2;
    int32_t *tab = malloc((size_t)cap * sizeof(int32_t));
    if (!tab) return OOM;
    for (int64_t i = 0; i < cap; i++) tab[i] = -1;
    int32_t ids = 0;
    for (int32_t f = 0; f < s->n; f++) {
        int64_t a = s->lk_off[f], len = s->lk_off[f + 1] - a;
        uint64_t h = mix((uint64_t)len);
        for (int64_t j = 0; j < len; j++) h = mix(h ^ (uint64_t)(uint32_t)s->lk[a + j]);
        int64_t k = (int64_t)(h & (uint64_t)(cap - 1));
        for (;; k = (k + 1) & (cap - 1)) {
            int32_t g = tab[k];
            if (g < 0) { tab[k] = f; s->pid[f] = ids++; break; }
            int64_t b = s->lk_off[g];
            if (s->lk_off[g + 1] - b == len &&
                !memcmp(s->lk + a, s->lk + b, (size_t)len * sizeof(int32_t))) {
                s->pid[f] = s->pid[g];
                break;
            }
        }
    }
    free(tab);
    return OK;
}

static void release(st_t *s) {
    if (s->on)
        for (int64_t l = 0; l < s->nlinks; l++) { free(s->on[l].flow); free(s->on[l].hop); }
    void *all[] = {s->lk_off, s->lk, s->pos, s->pid, s->u_off, s->users, s->waiting, s->version,
                   s->rate, s->rem, s->since, s->lone, s->on, s->ev, s->dr, s->stack, s->comp,
                   s->seen, s->lstamp, s->loc, s->remain, s->share, s->taken, s->best, s->rates,
                   s->cnt, s->veto, s->alive, s->path_buf, s->slot, s->keys, s->kr};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) free(all[k]);
}

#define ALLOC(p, count) (((p) = calloc((size_t)(count) ? (size_t)(count) : 1, sizeof *(p))) == NULL)

/* Delivery time of every message into out[n] (NaN: never delivered). paths: n rows of
 * width link ids (-1: none); dep[dep_off[i]..dep_off[i+1]): the messages i waits on.
 * counters: events, resolves, kept components reused. Returns 0, or 1 out of memory, 2 a
 * flow without rate (a link of capacity 0). */
int t2hx_timeline_run(int64_t n, const int32_t *paths, int width, const double *cap,
                      int64_t nlinks, const double *size, const double *lat,
                      const double *busy, const int64_t *dep_off, const int32_t *dep,
                      double *out, int64_t *counters) {
    st_t st = {0}, *s = &st;
    s->n = n; s->nlinks = nlinks; s->cap = cap; s->size = size; s->lat = lat; s->busy = busy;
    s->out = out;
    int64_t nl = 0;
    for (int64_t k = 0; k < n * width; k++) nl += paths[k] >= 0;
    if (ALLOC(s->lk_off, n + 1) || ALLOC(s->lk, nl) || ALLOC(s->pos, nl) || ALLOC(s->pid, n) ||
        ALLOC(s->u_off, n + 1) || ALLOC(s->users, dep_off[n]) || ALLOC(s->waiting, n) ||
        ALLOC(s->version, n) || ALLOC(s->rate, n) || ALLOC(s->rem, n) || ALLOC(s->since, n) ||
        ALLOC(s->lone, n) || ALLOC(s->on, nlinks) || ALLOC(s->stack, n) || ALLOC(s->comp, n) ||
        ALLOC(s->seen, n) || ALLOC(s->lstamp, nlinks) || ALLOC(s->loc, nlinks) ||
        ALLOC(s->remain, nlinks) || ALLOC(s->share, nlinks) || ALLOC(s->taken, nlinks) ||
        ALLOC(s->best, n) || ALLOC(s->rates, n) || ALLOC(s->cnt, nlinks) ||
        ALLOC(s->veto, nlinks) || ALLOC(s->alive, n) || ALLOC(s->path_buf, n) ||
        ALLOC(s->slot, SLOTS)) {
        release(s);
        return OOM;
    }
    for (int64_t i = 0, j = 0; i < n; i++) {
        double lone = INFINITY;
        for (int w = 0; w < width; w++) {
            int32_t l = paths[i * width + w];
            if (l < 0) continue;
            s->lk[j++] = l;
            if (cap[l] < lone) lone = cap[l];
        }
        s->lk_off[i + 1] = j;
        s->lone[i] = lone;
        s->rem[i] = size[i];
        s->waiting[i] = dep_off[i + 1] - dep_off[i];
        out[i] = NAN;
    }
    /* who waits on i, in increasing order (what a stable argsort of dep gives) */
    for (int64_t k = 0; k < dep_off[n]; k++) s->u_off[dep[k] + 1]++;
    for (int64_t i = 0; i < n; i++) s->u_off[i + 1] += s->u_off[i];
    int64_t *fill = s->version;        /* zero again below */
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = dep_off[i]; k < dep_off[i + 1]; k++)
            s->users[s->u_off[dep[k]] + fill[dep[k]]++] = (int32_t)i;
    memset(s->version, 0, (size_t)n * sizeof(int64_t));
    int err = intern_paths(s);
    if (!err) err = run(s);
    counters[0] = s->events;
    counters[1] = s->resolves;
    counters[2] = s->hits;
    release(s);
    return err;
}
