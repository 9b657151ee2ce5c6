/* Event loop of the packet engine (t2hx/flowsim/packet.py, docs/modelling.md#packet-engine).
 *
 * Packets of at most one MTU travel along routes of directed links. A link is a serial
 * output port (rate, propagation latency) whose downstream end holds one FIFO input buffer
 * per VL, sized in 64-byte credits (IBA 1.2.1 vol. 1, link layer flow control); a
 * sender transmits a packet only when the buffer behind the link has credits for all of
 * its blocks, and gets them back when the packet's tail has left that buffer plus the
 * link's latency (the flow-control packet's flight). A packet at the head of an input
 * buffer requests the output its route names next; an output serves its requesters per VL
 * in arrival order (round robin among inputs), and picks the VL by the IB VL arbitration
 * tables (high/low priority, weights in 64-byte units, high-priority limit in 4 KiB units).
 * Only the head of a VL's input FIFO may request: a packet behind a blocked one waits,
 * whatever output it wants (head-of-line blocking arises on its own); with `voq` the input
 * buffer queues per output instead (every packet requests as soon as it is ready, the VL's
 * credits shared), and with `oldest` an output serves a VL's requesters in the order their
 * packets reached the node. Switching is virtual cut-through: a packet may leave a node
 * `fwd` after its head arrived (crossbar/HCA latency), and never so early that its tail
 * would overtake the incoming tail. A link with an output buffer (`obuf` credits for all
 * VLs) takes a packet when more than its credits are free there: the packet crosses at
 * `xrate` (its input buffer's credits go back when that ends) and the buffer drains onto
 * the wire in order at the link's rate.
 *
 * The host interface is two more links per host (host->HCA DMA reads, HCA->host DMA
 * writes) at the PCIe rates packet.py derives; a link may charge a paired link extra
 * bytes per payload byte sent (read requests of the sender's DMA travel upstream, sharing
 * the direction that carries received data). Sources are messages: a message becomes
 * active at its start time, or `delay` after the last of the messages it depends on was
 * delivered (rendezvous handshakes; a job's next step after its previous one), and its host
 * link serves the active messages of a VL in round robin, one packet each. A message with
 * no links (and no bytes) is a join: it is delivered the moment it starts, so a step of
 * n messages waits on one join of the n before it, not on n x n dependencies.
 *
 * Events: READY (a packet's head may leave the node it reached), WAKE (an output may
 * transmit: it fell idle, or credits come back), START (a message becomes active) and
 * DELIVER (a tail reached host memory). They leave in time order, equal times in the order
 * they were scheduled. Credits that come back are queued per (link, VL) with their time
 * and applied when the sender looks, so an unblocked stream costs no credit events.
 *
 * A context holds a fabric and all the loop's state; made once, it runs any number of
 * independent phases (one call may run many, on several threads with a context each),
 * resetting only the links the phase's routes use, so a phase costs what its packets do.
 * The event queue is a calendar: buckets a fraction of a packet's time wide over a window
 * ahead of the last event taken, each a time-sorted list of 16-byte nodes, found through a
 * two-level occupancy mask, with a heap for the events beyond the window (its own choice
 * of width never changes the order). A link is one record (the fields every packet reads
 * in its first cache line), a (link, VL) one cache line holding its credits, FIFO,
 * requester list, its own place as a requester and the first credit return on its way
 * back (more wait in a ring that starts at 8 entries and doubles when full; returns that
 * are back are taken whenever one is queued, which changes nothing but keeps the queue
 * short). Nothing is allocated in the loop once the pools have reached their peak. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CREDIT_BYTES 64
#define MAX_VL 15
enum { EV_START = 0, EV_READY = 1, EV_WAKE = 2, EV_DELIVER = 3 };
#define EV_BITS 30
#define EV_ARG ((1u << EV_BITS) - 1)
#define NCOUNTERS 7
#define INLINE static inline __attribute__((always_inline))

/* flags of a link */
enum { L_HOST = 1, L_SINK = 2, L_OBUF = 4, L_PAIR = 8 };

/* A directed link: the first cache line holds what every packet on it reads. */
typedef struct {
    double free_at, wake_at, inv_rate, inv_xfer, lat, fwd, debt;
    int32_t hdr;
    uint16_t vmask;                    /* VLs with requesters */
    uint8_t flags, pad;
    double wire_at, debt_per_byte;     /* output buffer backlog; request bytes charged */
    int32_t cap, pair, obuf, hi_idx, lo_idx, pad2;
    int64_t hi_left, lo_left, hi_sent; /* VL arbitration */
} __attribute__((aligned(64))) link_t;

/* A requester (an input FIFO, a message at its host, a packet of a queue per output):
 * the next in its list and the credits of the packet it would send, fixed while it waits. */
typedef struct {
    int32_t next, need;
} req_t;

typedef struct __attribute__((packed)) {
    double t;                          /* when they are back */
    int32_t n;                         /* credits */
} ret_t;

/* State of one (link, VL): credits of the buffer behind the link and the r_len returns on
 * their way back, in order (one in `one`, more in a ring of r_mask + 1 entries from r_off
 * while `ext`; no ring yet when r_mask < 0), the input FIFO of packets that arrived over
 * the link (linked through the pool), the requesters waiting for the link as an output,
 * and the FIFO's own place in such a list. */
typedef struct {
    int32_t cred, r_len, r_off, r_mask, r_head;
    int32_t q_head, q_tail, l_first, l_last;
    req_t rq;                          /* the FIFO as a requester */
    uint8_t ext, pad[3];
    ret_t one;
} __attribute__((aligned(64))) lv_t;

typedef struct {
    int32_t msg, ri, last, next;       /* ri: route index of the link it is on; last: of its
                                        * last link; next: in its FIFO or the free list */
    int32_t payload : 24, vl : 8;
    int32_t need;                      /* credits */
    int32_t at, out;                   /* the (link, VL) whose buffer it reaches, the link
                                        * it goes on to */
} pkt_t;

typedef struct {
    int64_t bytes;
    int32_t sent, done, npk, wait, r0, r1;     /* its links: route[r0..r1) */
} msg_t;

/* The event queue: bucket i of the calendar holds the events whose time x satisfies
 * floor(x * inv_w) = i, for i in [cur, cur + NB) (cur: the bucket of the last event
 * taken), as a list sorted by time (a new event goes after every one of equal time);
 * later events wait in a heap ordered by (time, push number). An event in the heap
 * precedes any event of equal time in the calendar (it was pushed while its bucket was
 * still beyond the window), so ties between the two go to the heap. */
#define NB 4096
#define NBW (NB / 64)
typedef struct {
    double t;
    uint32_t v;
    int32_t next;
} qn_t;

typedef struct {
    double t;
    uint64_t seq;
    uint32_t v;
} hev_t;

typedef struct {
    int32_t head, tail;
} bucket_t;

typedef struct {
    qn_t *node; int32_t free, cap;     /* free: a list through the unused nodes */
    bucket_t bk[NB];
    uint64_t occ[NBW], summary;        /* bit b: bucket b not empty; bit w: occ[w] != 0 */
    double inv_w, last, lim;           /* lim: cur + NB */
    int64_t cur, n, peak, popped;
    hev_t *heap; int64_t hn, hcap;
} queue_t;

/* A VL arbitration table of n entries (vl, weight); with at most 64 entries, for each VL
 * the entries that serve it (a weight above 0) as bits. */
typedef struct {
    const int32_t *tab;
    int32_t n, bits;
    uint64_t of_vl[32];
} table_t;

typedef struct {
    /* the fabric */
    int32_t nlinks, mtu, ib_hdr, oldest, voq, nhigh, nlow;
    int32_t *high, *low; int64_t high_limit;     /* bytes, <0: none */
    table_t hi_tab, lo_tab;
    link_t *ln;
    int32_t nvl;                       /* VL stride of lvs (grows to the most a phase uses) */
    lv_t *lvs;
    ret_t *ring; int64_t ring_n, ring_cap;
    uint32_t *stamp, epoch;            /* links the phase uses: stamp == epoch */
    /* one phase */
    int64_t nmsg, nq, preq;            /* requester ids: lv, nq + message, preq + packet */
    const int32_t *route; const int8_t *vl; const double *delay;
    msg_t *msg; int64_t msg_cap;
    int64_t *child_off; int32_t *child; int64_t child_cap;
    double *first, *end;
    req_t *req; int64_t req_cap;       /* requesters nq + ...: messages, then packets */
    pkt_t *pool; int32_t free_pkt, fresh, pool_cap, pool_used, pool_peak;
    double *arr;                       /* per packet, oldest first: when its head reached
                                        * the node it is at */
    queue_t q;
    int64_t events, hops, created, delivered, credit_errors, heap_peak;
    int oom;
} st_t;

/* -- the event queue ---------------------------------------------------------------- */
static int heap_push(queue_t *q, hev_t e) {
    if (q->hn == q->hcap) {
        int64_t cap = q->hcap ? 2 * q->hcap : 256;
        hev_t *a = realloc(q->heap, (size_t)cap * sizeof(hev_t));
        if (!a) return 1;
        q->heap = a;
        q->hcap = cap;
    }
    int64_t k = q->hn++;
    while (k > 0) {
        int64_t p = (k - 1) >> 2;
        hev_t *h = &q->heap[p];
        if (h->t < e.t || (h->t == e.t && h->seq < e.seq)) break;
        q->heap[k] = *h;
        k = p;
    }
    q->heap[k] = e;
    return 0;
}

static hev_t heap_pop(queue_t *q) {
    hev_t top = q->heap[0], e = q->heap[--q->hn];
    int64_t k = 0, n = q->hn;
    for (;;) {
        int64_t c = 4 * k + 1, m = c, end = c + 4 < n ? c + 4 : n;
        if (c >= n) break;
        for (int64_t j = c + 1; j < end; j++) {
            const hev_t *a = &q->heap[j], *b = &q->heap[m];
            if (a->t < b->t || (a->t == b->t && a->seq < b->seq)) m = j;
        }
        const hev_t *b = &q->heap[m];
        if (e.t < b->t || (e.t == b->t && e.seq < b->seq)) break;
        q->heap[k] = *b;
        k = m;
    }
    q->heap[k] = e;
    return top;
}

static void queue_reset(queue_t *q, double width) {
    for (int b = 0; b < NB; b++) q->bk[b].head = -1;
    memset(q->occ, 0, sizeof q->occ);
    q->summary = 0;
    q->inv_w = 1.0 / width;
    q->last = 0.0;
    q->cur = 0;
    q->lim = NB;
    q->n = q->hn = q->peak = q->popped = 0;
    for (int32_t i = 0; i < q->cap; i++) q->node[i].next = i + 1 < q->cap ? i + 1 : -1;
    q->free = q->cap ? 0 : -1;
}

/* Free nodes: twice as many, all on the free list. Returns 1 when out of memory. */
static __attribute__((noinline)) int grow_nodes(queue_t *q) {
    int32_t cap = q->cap ? 2 * q->cap : 1024;
    qn_t *nd = realloc(q->node, (size_t)cap * sizeof(qn_t));
    if (!nd) return 1;
    for (int32_t i = q->cap; i < cap; i++) nd[i].next = i + 1 < cap ? i + 1 : q->free;
    q->free = q->cap;
    q->node = nd;
    q->cap = cap;
    return 0;
}

/* Node i (time t) into bucket b after the last one not later than it, not at its end. */
static __attribute__((noinline)) void insert_sorted(queue_t *q, int b, int32_t i, double t) {
    qn_t *nd = q->node;
    int32_t h = q->bk[b].head;
    if (t < nd[h].t) {
        nd[i].next = h;
        q->bk[b].head = i;
        return;
    }
    int32_t p = h;
    while (nd[nd[p].next].t <= t) p = nd[p].next;
    nd[i].next = nd[p].next;
    nd[p].next = i;
}

static __attribute__((noinline)) void push_far(st_t *s, double t, uint32_t v) {
    queue_t *q = &s->q;
    if (heap_push(q, (hev_t){t, (uint64_t)(q->popped + q->n), v})) s->oom = 1;   /* pushes so far */
}

INLINE void push(st_t *s, double t, int type, int32_t a) {
    queue_t *q = &s->q;
    if (t < q->last) t = q->last;     /* never earlier than the last event taken */
    uint32_t v = ((uint32_t)type << EV_BITS) | (uint32_t)a;
    if (++q->n > q->peak) q->peak = q->n;
    double x = t * q->inv_w;
    if (__builtin_expect(!(x < q->lim), 0)) {    /* beyond the window */
        push_far(s, t, v);
        return;
    }
    int b = (int)((int64_t)x & (NB - 1));
    if (__builtin_expect(q->free < 0, 0) && grow_nodes(q)) { s->oom = 1; return; }
    int32_t i = q->free;
    qn_t *nd = q->node;
    q->free = nd[i].next;
    nd[i].t = t;
    nd[i].v = v;
    nd[i].next = -1;
    bucket_t *k = &q->bk[b];
    if (k->head < 0) {
        k->head = k->tail = i;
        q->occ[b >> 6] |= 1ull << (b & 63);
        q->summary |= 1ull << (b >> 6);
    } else if (nd[k->tail].t <= t) {
        nd[k->tail].next = i;
        k->tail = i;
    } else {
        insert_sorted(q, b, i, t);
    }
}

/* The first non-empty bucket at or after the window's start (circularly), or -1. */
INLINE int first_bucket(const queue_t *q) {
    int b0 = (int)(q->cur & (NB - 1)), w = b0 >> 6;
    uint64_t m = q->occ[w] & (~0ull << (b0 & 63));
    if (m) return (w << 6) + __builtin_ctzll(m);
    uint64_t later = q->summary & (w + 1 < 64 ? ~0ull << (w + 1) : 0);
    uint64_t words = later ? later : q->summary;       /* wrapped: the buckets before b0 */
    if (!words) return -1;
    w = __builtin_ctzll(words);
    return (w << 6) + __builtin_ctzll(q->occ[w]);
}

typedef struct { double t; uint32_t v; } ev_t;

/* The next event when the window's first bucket is empty, or the heap holds events. */
static __attribute__((noinline)) ev_t pop_slow(st_t *s) {
    queue_t *q = &s->q;
    int b = first_bucket(q);
    ev_t e;
    if (b >= 0 && !(q->hn && q->heap[0].t <= q->node[q->bk[b].head].t)) {
        int32_t i = q->bk[b].head;
        e.t = q->node[i].t;
        e.v = q->node[i].v;
        q->bk[b].head = q->node[i].next;
        if (q->bk[b].head < 0) {
            q->occ[b >> 6] &= ~(1ull << (b & 63));
            if (!q->occ[b >> 6]) q->summary &= ~(1ull << (b >> 6));
        }
        q->node[i].next = q->free;
        q->free = i;
        q->cur += (b - (int)(q->cur & (NB - 1))) & (NB - 1);
    } else {
        hev_t h = heap_pop(q);
        e.t = h.t;
        e.v = h.v;
        double x = e.t * q->inv_w;
        q->cur = x < 4e18 ? (int64_t)x : (int64_t)4e18;
    }
    q->lim = (double)(q->cur + NB);
    q->last = e.t;
    q->n--;
    q->popped++;
    return e;
}

INLINE ev_t pop(st_t *s) {
    queue_t *q = &s->q;
    int b = (int)(q->cur & (NB - 1));
    int32_t i = q->bk[b].head;
    if (__builtin_expect(i < 0 || q->hn > 0, 0)) return pop_slow(s);
    qn_t *nd = &q->node[i];
    ev_t e = {nd->t, nd->v};
    q->bk[b].head = nd->next;
    if (nd->next < 0) {
        q->occ[b >> 6] &= ~(1ull << (b & 63));
        if (!q->occ[b >> 6]) q->summary &= ~(1ull << (b >> 6));
    }
    nd->next = q->free;
    q->free = i;
    q->last = e.t;
    q->n--;
    q->popped++;
    return e;
}

/* -- credits, requests, arbitration ------------------------------------------------- */
INLINE int32_t credits_of(const st_t *s, int32_t payload) {
    return (int32_t)((uint32_t)(payload + s->ib_hdr + CREDIT_BYTES - 1) / CREDIT_BYTES);
}

/* The i-th return on its way back to a (link, VL). */
INLINE const ret_t *queued(const st_t *s, const lv_t *c, int32_t i) {
    return c->ext ? &s->ring[c->r_off + ((c->r_head + i) & c->r_mask)] : &c->one;
}

/* Credits of a (link, VL) that have come back by `now` (the returns are taken in the
 * order they were queued, up to the first one still on its way). */
INLINE int32_t credits_now(st_t *s, lv_t *c, double now) {
    if (!c->ext) {
        if (c->r_len && c->one.t <= now) {
            c->cred += c->one.n;
            c->r_len = 0;
        }
        return c->cred;
    }
    while (c->r_len > 0) {
        const ret_t *r = &s->ring[c->r_off + c->r_head];
        if (r->t > now) break;
        c->cred += r->n;
        c->r_head = (c->r_head + 1) & c->r_mask;
        c->r_len--;
    }
    if (!c->r_len) c->ext = 0;         /* the next one fits in `one` again */
    return c->cred;
}

/* Room for a second return, or one more in a full ring: the queue moves, in order, into
 * the ring this (link, VL) has (empty: the queue was in `one`), else into a new one at
 * the end of the rings, twice the size of the old (8 at first). Returns 1 when out of
 * memory. */
static __attribute__((noinline)) int grow_ring(st_t *s, lv_t *c) {
    if (!c->ext && c->r_mask >= 0) {
        s->ring[c->r_off] = c->one;
        c->r_head = 0;
        c->ext = 1;
        return 0;
    }
    int64_t cap = c->r_mask < 0 ? 8 : 2 * ((int64_t)c->r_mask + 1);
    if (s->ring_n + cap > s->ring_cap) {
        int64_t want = s->ring_cap ? 2 * s->ring_cap : 4096;
        while (want < s->ring_n + cap) want *= 2;
        if (want > INT32_MAX) return 1;
        ret_t *a = realloc(s->ring, (size_t)want * sizeof(ret_t));
        if (!a) return 1;
        s->ring = a;
        s->ring_cap = want;
    }
    for (int32_t i = 0; i < c->r_len; i++) s->ring[s->ring_n + i] = *queued(s, c, i);
    c->r_off = (int32_t)s->ring_n;
    c->r_mask = (int32_t)cap - 1;
    c->r_head = 0;
    c->ext = 1;
    s->ring_n += cap;
    return 0;
}

/* Queues credits coming back to a (link, VL) at t, first taking those back by `now` (as
 * the sender would when it looks: it changes nothing, and keeps the queue short). */
INLINE void credit_return(st_t *s, lv_t *c, double t, int32_t n, double now) {
    credits_now(s, c, now);
    if (!c->ext && !c->r_len) {
        c->one.t = t;
        c->one.n = n;
        c->r_len = 1;
        return;
    }
    if ((!c->ext || c->r_len == c->r_mask + 1) && grow_ring(s, c)) { s->oom = 1; return; }
    ret_t *r = &s->ring[c->r_off + ((c->r_head + c->r_len) & c->r_mask)];
    r->t = t;
    r->n = n;
    c->r_len++;
}

INLINE void wake(st_t *s, int32_t l, double t) {
    link_t *k = &s->ln[l];
    if (t < k->free_at) t = k->free_at;          /* it cannot send before */
    if (t < k->wake_at) {
        k->wake_at = t;
        push(s, t, EV_WAKE, l);
    }
}

INLINE req_t *requester(st_t *s, int32_t r) {
    return r < s->nq ? &s->lvs[r].rq : &s->req[r - s->nq];
}

/* The payload of a message's next packet. */
INLINE int32_t message_payload(const st_t *s, const msg_t *m) {
    int64_t left = m->bytes - (int64_t)m->sent * s->mtu;
    return (int32_t)(left < s->mtu ? (left > 0 ? left : 0) : s->mtu);
}

/* The credits of the packet requester r would send next. */
INLINE void next_packet(st_t *s, int32_t r, req_t *q) {
    if (r < s->preq) {
        if (r < s->nq) { q->need = s->pool[s->lvs[r].q_head].need; return; }
        q->need = credits_of(s, message_payload(s, &s->msg[r - s->nq]));
        return;
    }
    q->need = s->pool[r - s->preq].need;
}

/* When requester q's packet reached the node (oldest first), -1 for a message. */
INLINE double arrival(const st_t *s, int32_t q) {
    return q < s->nq ? s->arr[s->lvs[q].q_head] : q >= s->preq ? s->arr[q - s->preq] : -1.0;
}

/* Requester r (an input FIFO (link, vl) id, nq + message or preq + packet) waits for
 * output l. */
INLINE void request(st_t *s, int32_t l, int v, int32_t r) {
    link_t *k = &s->ln[l];
    if (k->flags & L_HOST) v = 0;      /* a host serves its messages in one round */
    lv_t *c = &s->lvs[(int64_t)l * s->nvl + v];
    req_t *me = requester(s, r);
    me->next = -1;
    next_packet(s, r, me);
    k->vmask |= (uint16_t)(1u << v);
    if (c->l_first < 0) { c->l_first = c->l_last = r; return; }
    if (s->oldest && (r < s->nq || r >= s->preq)) {   /* before the first younger one */
        double a = arrival(s, r);
        for (int32_t q = c->l_first, prev = -1; q >= 0; prev = q, q = requester(s, q)->next) {
            if (arrival(s, q) > a) {
                requester(s, r)->next = q;
                if (prev < 0) c->l_first = r;
                else requester(s, prev)->next = r;
                return;
            }
        }
    }
    requester(s, c->l_last)->next = r;
    c->l_last = r;
}

/* Lowers *retry to when a (link, VL) will have `need` credits, if credits on their way
 * back make that happen. */
static void credit_time(const st_t *s, const lv_t *c, int32_t need, double *retry) {
    int64_t have = c->cred;
    for (int32_t i = 0; i < c->r_len; i++) {
        const ret_t *r = queued(s, c, i);
        have += r->n;
        if (have >= need) {
            if (r->t < *retry) *retry = r->t;
            return;
        }
    }
}

INLINE int eligible(st_t *s, const link_t *k, lv_t *c, double now, double *retry) {
    int32_t r = c->l_first;
    if (r < 0) return 0;
    if (k->flags & L_SINK) return 1;
    int32_t need = requester(s, r)->need;
    if (c->cred < need && credits_now(s, c, now) < need) {   /* returns: when short */
        credit_time(s, c, need, retry);
        return 0;
    }
    if (k->flags & L_OBUF) {           /* room in the output buffer: more than need */
        double room = (double)(k->obuf - need - 1) * CREDIT_BYTES * k->inv_rate;
        double t = k->wire_at - room;  /* the backlog drains at the link's rate */
        if (t > now) {
            if (t < *retry) *retry = t;
            return 0;
        }
    }
    return 1;
}

/* Weighted round robin over one arbitration table; returns the VL or -1. */
INLINE int scan(const int32_t *tab, int n, int32_t *idx, int64_t *left, uint32_t mask) {
    for (int k = 0; k <= n; k++) {
        int32_t vl = tab[2 * *idx], w = tab[2 * *idx + 1];
        if (w > 0 && (mask >> vl & 1u)) {
            if (*left <= 0) *left = w;
            return vl;
        }
        if (++*idx == n) *idx = 0;
        *left = 0;
    }
    return -1;
}

/* scan() through the table's bits: the same VL, index and weight left. */
INLINE int scan_table(const table_t *t, int32_t *idx, int64_t *left, uint32_t mask) {
    if (!t->bits) return scan(t->tab, t->n, idx, left, mask);
    uint64_t cand = 0;
    for (uint32_t w = mask; w; w &= w - 1) cand |= t->of_vl[__builtin_ctz(w)];
    if (!cand) {                       /* n + 1 entries passed over */
        if (++*idx == t->n) *idx = 0;
        *left = 0;
        return -1;
    }
    uint64_t ahead = cand & (~0ull << *idx);
    int j = __builtin_ctzll(ahead ? ahead : cand);
    if (j != *idx) { *idx = j; *left = 0; }
    if (*left <= 0) *left = t->tab[2 * j + 1];
    return t->tab[2 * j];
}

INLINE void charge(int32_t *idx, int64_t *left, int n, int32_t credits) {
    *left -= credits;
    if (*left <= 0) { if (++*idx == n) *idx = 0; *left = 0; }
}

INLINE int32_t transmit(st_t *s, int32_t l, int v, int32_t r, double now);

/* Takes requester r (after `prev`, -1: the head) off list c of link k. */
INLINE void unlink_req(st_t *s, link_t *k, int v, lv_t *c, int32_t r, int32_t prev) {
    int32_t next = requester(s, r)->next;
    if (prev < 0) c->l_first = next;
    else requester(s, prev)->next = next;
    if (c->l_last == r) c->l_last = prev;
    if (c->l_first < 0) { c->l_last = -1; k->vmask &= (uint16_t)~(1u << v); }
}

/* A host's link: its messages in round robin, one packet each, whatever their VL; a
 * message whose VL has no credits at the HCA is passed over (it keeps its place). */
static void arbitrate_host(st_t *s, int32_t l, double now) {
    link_t *k = &s->ln[l];
    lv_t *c0 = &s->lvs[(int64_t)l * s->nvl];
    double retry = INFINITY;
    for (int32_t r = c0->l_first, prev = -1; r >= 0; prev = r, r = requester(s, r)->next) {
        int v = s->vl[r - s->nq];
        int32_t need = requester(s, r)->need;
        lv_t *c = c0 + v;
        if ((k->flags & L_SINK) || c->cred >= need || credits_now(s, c, now) >= need) {
            unlink_req(s, k, 0, c0, r, prev);
            transmit(s, l, v, r, now);           /* a message: nothing follows */
            return;
        }
        credit_time(s, c, need, &retry);
    }
    if (retry < INFINITY) wake(s, l, retry);
}

/* Output l serves one requester if it can (and, if that lets a FIFO's next packet request
 * another output, that output next). */
INLINE void arbitrate(st_t *s, int32_t l, double now) {
    for (;;) {
        link_t *k = &s->ln[l];
        if (k->free_at > now) { wake(s, l, k->free_at); return; }
        if (k->flags & L_HOST) { arbitrate_host(s, l, now); return; }
        lv_t *c0 = &s->lvs[(int64_t)l * s->nvl];
        uint32_t mask = 0;
        double retry = INFINITY;
        for (uint32_t w = k->vmask; w; w &= w - 1) {
            int v = __builtin_ctz(w);
            if (eligible(s, k, c0 + v, now, &retry)) mask |= 1u << v;
        }
        if (!mask) {
            if (retry < INFINITY) wake(s, l, retry);
            return;
        }
        int v = -1;
        if (mask & (mask - 1)) {
            int32_t need;
            if (s->nhigh && (s->high_limit < 0 || k->hi_sent < s->high_limit ||
                             (s->high_limit == 0 && k->hi_sent == 0))) {
                v = scan_table(&s->hi_tab, &k->hi_idx, &k->hi_left, mask);
                if (v >= 0) {
                    need = requester(s, c0[v].l_first)->need;
                    charge(&k->hi_idx, &k->hi_left, s->nhigh, need);
                    k->hi_sent += (int64_t)need * CREDIT_BYTES;
                }
            }
            if (v < 0 && s->nlow) {
                v = scan_table(&s->lo_tab, &k->lo_idx, &k->lo_left, mask);
                if (v >= 0) {
                    charge(&k->lo_idx, &k->lo_left, s->nlow, requester(s, c0[v].l_first)->need);
                    k->hi_sent = 0;
                }
            }
            if (v < 0 && s->nhigh) {
                v = scan_table(&s->hi_tab, &k->hi_idx, &k->hi_left, mask);
                if (v >= 0)
                    charge(&k->hi_idx, &k->hi_left, s->nhigh, requester(s, c0[v].l_first)->need);
            }
        }
        if (v < 0) v = __builtin_ctz(mask);
        int32_t r = c0[v].l_first;
        unlink_req(s, k, v, c0 + v, r, -1);
        l = transmit(s, l, v, r, now);
        if (l < 0) return;
    }
}

/* A packet record for the next packet of a message (the pool grows to its peak). */
static int32_t new_packet(st_t *s) {
    int32_t p;
    if (s->free_pkt >= 0) {
        p = s->free_pkt;
        s->free_pkt = s->pool[p].next;
    } else {
        if (s->fresh == s->pool_cap) {
            int64_t cap = s->pool_cap ? 2 * (int64_t)s->pool_cap : 1024;
            if (cap > (int64_t)EV_ARG || s->preq + cap > INT32_MAX) return -1;
            pkt_t *a = realloc(s->pool, (size_t)cap * sizeof(pkt_t));
            if (!a) return -1;
            s->pool = a;
            if (s->oldest) {
                double *t = realloc(s->arr, (size_t)cap * sizeof(double));
                if (!t) return -1;
                s->arr = t;
            }
            s->pool_cap = (int32_t)cap;
            if (s->voq && s->nmsg + cap > s->req_cap) {      /* packets request, too */
                req_t *q = realloc(s->req, (size_t)(s->nmsg + cap) * sizeof(req_t));
                if (!q) return -1;
                s->req = q;
                s->req_cap = s->nmsg + cap;
            }
        }
        p = s->fresh++;
    }
    if (++s->pool_used > s->pool_peak) s->pool_peak = s->pool_used;
    return p;
}

/* Sends the next packet of requester r (off its list already) on link l, VL v. Returns
 * the other output the FIFO's next packet now requests (to arbitrate next), or -1. */
INLINE int32_t transmit(st_t *s, int32_t l, int v, int32_t r, double now) {
    int32_t p, in = -1;
    lv_t *in_c = NULL;                    /* the input buffer it leaves, of link in */
    if (r < s->nq) {                      /* a switch/HCA input FIFO: its head packet */
        in_c = &s->lvs[r];
        p = in_c->q_head;
        in_c->q_head = s->pool[p].next;
        if (in_c->q_head < 0) in_c->q_tail = -1;
        in = s->route[s->pool[p].ri];
    } else if (r >= s->preq) {            /* a packet of a queue per output */
        p = (int32_t)(r - s->preq);
        in = s->route[s->pool[p].ri];
        in_c = &s->lvs[(int64_t)in * s->nvl + v];
    } else {                              /* a message at its host: its next packet */
        int64_t mi = r - s->nq;
        msg_t *m = &s->msg[mi];
        p = new_packet(s);
        if (p < 0) { s->oom = 1; return -1; }
        pkt_t *np = &s->pool[p];
        np->msg = (int32_t)mi;
        np->ri = m->r0 - 1;
        np->last = m->r1 - 1;
        np->vl = v;
        np->payload = message_payload(s, m);
        np->need = requester(s, r)->need;
        if (m->sent == 0) s->first[mi] = now;
        m->sent++;
        s->created++;
    }
    link_t *k = &s->ln[l];
    pkt_t *pk = &s->pool[p];
    int32_t need = pk->need;
    double ser = (double)(pk->payload + k->hdr) * k->inv_rate + k->debt;
    double start = now, out = ser;        /* head onto the wire; tail out of the input */
    if (k->flags & L_OBUF) {              /* through the crossbar into the output buffer */
        out = (double)(pk->payload + k->hdr) * k->inv_xfer;
        if (k->wire_at > start) start = k->wire_at;
        k->wire_at = start + ser;
    }
    k->debt = 0.0;
    if (k->flags & L_PAIR) s->ln[k->pair].debt += pk->payload * k->debt_per_byte;
    if (!(k->flags & L_SINK)) {
        lv_t *c = &s->lvs[(int64_t)l * s->nvl + v];
        c->cred -= need;
        if (c->cred < 0) s->credit_errors++;
    }
    k->free_at = now + out;
    s->hops++;
    pk->ri++;
    if (pk->ri == pk->last)
        push(s, start + ser + k->lat, EV_DELIVER, p);
    else {
        pk->at = (int32_t)((int64_t)l * s->nvl + v);
        pk->out = s->route[pk->ri + 1];
        const link_t *nx = &s->ln[pk->out];
        double ser_next = (double)(pk->payload + nx->hdr) * nx->inv_xfer;
        double wait = k->fwd;
        if (ser - ser_next > wait) wait = ser - ser_next;   /* no overtaking of the tail */
        double arr = start + k->lat;
        if (s->oldest) s->arr[p] = arr;
        push(s, arr + wait, EV_READY, p);
    }
    int32_t follow = -1;
    if (in_c) {
        /* its blocks leave the input buffer with its tail; the credits fly back (a sender
         * waiting for them on that VL is woken then) */
        const link_t *ki = &s->ln[in];
        if (!(ki->flags & L_SINK)) {
            double t = now + out + ki->lat;
            credit_return(s, in_c, t, need, now);
            const lv_t *w = ki->flags & L_HOST ? &s->lvs[(int64_t)in * s->nvl] : in_c;
            if (w->l_first >= 0) wake(s, in, t);
        }
        if (r < s->nq && in_c->q_head >= 0) {   /* the next packet of that FIFO is now its head */
            follow = s->pool[in_c->q_head].out;
            request(s, follow, v, r);
        }
    } else {
        const msg_t *m = &s->msg[r - s->nq];
        if (m->sent < m->npk) request(s, l, v, r);   /* round robin among the host's messages */
    }
    if (k->vmask) wake(s, l, k->free_at);
    return follow != l ? follow : -1;
}

/* Message m was delivered at t: children whose last dependency it was start `delay` later
 * (events leave in time order, so the last delivery is the latest). */
static void release(st_t *s, int64_t m, double t) {
    for (int64_t k = s->child_off[m]; k < s->child_off[m + 1]; k++) {
        int32_t c = s->child[k];
        if (--s->msg[c].wait == 0) push(s, t + s->delay[c], EV_START, c);
    }
}

/* -- a context ---------------------------------------------------------------------- */
void t2hx_packet_free(void *ctx) {
    st_t *s = ctx;
    if (!s) return;
    free(s->high); free(s->low); free(s->ln); free(s->lvs); free(s->ring); free(s->stamp);
    free(s->msg); free(s->child_off); free(s->child); free(s->req); free(s->pool); free(s->arr);
    free(s->q.node); free(s->q.heap);
    free(s);
}

static void table_of(table_t *t, const int32_t *tab, int32_t n) {
    t->tab = tab;
    t->n = n;
    t->bits = n <= 64;
    memset(t->of_vl, 0, sizeof t->of_vl);
    for (int32_t i = 0; t->bits && i < n; i++)
        if (tab[2 * i + 1] > 0) t->of_vl[tab[2 * i]] |= 1ull << i;
}

/* A context for a fabric, or NULL (*rc: 1 out of memory, 3 bad input). */
void *t2hx_packet_new(int nlinks, const double *rate, const double *lat, const double *fwd,
                      const int32_t *hdr, const int32_t *cap, const int32_t *pair,
                      const double *debt_per_byte, const int32_t *obuf, const double *xrate,
                      int mtu, int ib_hdr, int oldest, int voq, int nhigh, const int32_t *high,
                      int nlow, const int32_t *low, int64_t high_limit, int *rc) {
    *rc = 3;
    if (nlinks <= 0 || nlinks > (int)EV_ARG || mtu <= 0 || mtu > (1 << 22) || ib_hdr < 0 ||
        nhigh < 0 || nlow < 0)
        return NULL;
    for (int i = 0; i < nhigh; i++)
        if (high[2 * i] < 0 || high[2 * i] > 31) return NULL;
    for (int i = 0; i < nlow; i++)
        if (low[2 * i] < 0 || low[2 * i] > 31) return NULL;
    int32_t most = (mtu + ib_hdr + CREDIT_BYTES - 1) / CREDIT_BYTES;   /* credits of a packet */
    for (int32_t l = 0; l < nlinks; l++) {
        if (!(rate[l] > 0)) return NULL;
        if (obuf[l] > 0 && (!(xrate[l] > 0) || obuf[l] <= most)) return NULL;
        if (pair[l] >= nlinks) return NULL;
    }
    *rc = 1;
    st_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->nlinks = nlinks; s->mtu = mtu; s->ib_hdr = ib_hdr; s->oldest = oldest; s->voq = voq;
    s->nhigh = nhigh; s->nlow = nlow; s->high_limit = high_limit;
    s->high = malloc((size_t)(2 * nhigh + 1) * sizeof(int32_t));
    s->low = malloc((size_t)(2 * nlow + 1) * sizeof(int32_t));
    s->ln = aligned_alloc(64, (size_t)nlinks * sizeof(link_t));
    s->stamp = calloc((size_t)nlinks, sizeof(uint32_t));
    if (!s->high || !s->low || !s->ln || !s->stamp) { t2hx_packet_free(s); return NULL; }
    memcpy(s->high, high, (size_t)(2 * nhigh) * sizeof(int32_t));
    memcpy(s->low, low, (size_t)(2 * nlow) * sizeof(int32_t));
    table_of(&s->hi_tab, s->high, nhigh);
    table_of(&s->lo_tab, s->low, nlow);
    memset(s->ln, 0, (size_t)nlinks * sizeof(link_t));
    for (int32_t l = 0; l < nlinks; l++) {
        link_t *k = &s->ln[l];
        k->inv_rate = 1.0 / rate[l];
        k->inv_xfer = obuf[l] > 0 ? 1.0 / xrate[l] : k->inv_rate;
        k->lat = lat[l];
        k->fwd = fwd[l];
        k->hdr = hdr[l];
        k->cap = cap[l];
        k->pair = pair[l];
        k->obuf = obuf[l];
        k->debt_per_byte = debt_per_byte[l];
        k->flags = (uint8_t)((cap[l] < 0 ? L_SINK : 0) | (obuf[l] > 0 ? L_OBUF : 0) |
                             (pair[l] >= 0 ? L_PAIR : 0));
    }
    *rc = 0;
    return s;
}

/* Room for a phase of nmsg messages, nchild dependencies and nvl VLs. */
static int reserve(st_t *s, int64_t nmsg, int64_t nchild, int32_t nvl) {
    if (nvl > s->nvl) {                   /* a wider stride: every (link, VL) anew */
        free(s->lvs);
        s->lvs = aligned_alloc(64, (size_t)s->nlinks * (size_t)nvl * sizeof(lv_t));
        if (!s->lvs) { s->nvl = 0; return 1; }
        for (int64_t i = 0; i < (int64_t)s->nlinks * nvl; i++) s->lvs[i].r_mask = -1;
        s->nvl = nvl;
        s->ring_n = 0;
        memset(s->stamp, 0, (size_t)s->nlinks * sizeof(uint32_t));
        s->epoch = 0;
    }
    if (nmsg + 1 > s->msg_cap) {
        free(s->msg); free(s->child_off);
        s->msg = malloc((size_t)(nmsg + 1) * sizeof(msg_t));
        s->child_off = malloc((size_t)(nmsg + 1) * sizeof(int64_t));
        if (!s->msg || !s->child_off) { s->msg_cap = 0; return 1; }
        s->msg_cap = nmsg + 1;
    }
    if (nchild + 1 > s->child_cap) {
        free(s->child);
        s->child = malloc((size_t)(nchild + 1) * sizeof(int32_t));
        if (!s->child) { s->child_cap = 0; return 1; }
        s->child_cap = nchild + 1;
    }
    int64_t nreq = nmsg + (s->voq ? s->pool_cap : 0) + 1;
    if (nreq > s->req_cap) {
        req_t *q = realloc(s->req, (size_t)nreq * sizeof(req_t));
        if (!q) return 1;
        s->req = q;
        s->req_cap = nreq;
    }
    return 0;
}

/* A link a phase uses: its state and its (link, VL)s as if new. */
static void reset_link(st_t *s, int32_t l) {
    link_t *k = &s->ln[l];
    k->free_at = k->debt = k->wire_at = 0.0;
    k->wake_at = INFINITY;
    k->vmask = 0;
    k->flags &= (uint8_t)~L_HOST;
    k->hi_idx = k->lo_idx = 0;
    k->hi_left = k->lo_left = k->hi_sent = 0;
    lv_t *c = &s->lvs[(int64_t)l * s->nvl];
    for (int v = 0; v < s->nvl; v++) {
        c[v].cred = k->cap > 0 ? k->cap : 0;
        c[v].r_head = c[v].r_len = 0;
        c[v].ext = 0;
        c[v].q_head = c[v].q_tail = c[v].l_first = c[v].l_last = -1;
    }
}

/* The longest a packet occupies a link plus its flight (the calendar's scale). */
static double packet_span(const st_t *s, int32_t l) {
    const link_t *k = &s->ln[l];
    return (double)(s->mtu + k->hdr) * k->inv_rate + k->lat + k->fwd;
}

/* One phase. Returns 0, or 1: out of memory, 3: bad input, 4: a message never finished.
 * counters: events, packet-hops, packets created, delivered, credit errors, event peak,
 * pool peak. route_off and dep_off index route and dep as given; dep holds message
 * indices of this phase. Not inlined into its caller: the loop has the registers to
 * itself (2 % fewer instructions per event). */
static __attribute__((noinline)) int run(st_t *s, int64_t nmsg, const int64_t *bytes,
                                         const int64_t *route_off, const int32_t *route,
                                         const int8_t *vl, const int64_t *dep_off,
                                         const int32_t *dep, const double *delay,
                                         double *first, double *end, int64_t *counters) {
    s->events = s->hops = s->created = s->delivered = s->credit_errors = s->heap_peak = 0;
    s->pool_used = s->pool_peak = 0;
    s->oom = 0;
    int rc = 3;
    int32_t nvl = 1;
    if (nmsg < 0 || nmsg > (int64_t)EV_ARG || route_off[nmsg] >= INT32_MAX ||
        route_off[0] < 0 || dep_off[0] < 0 || dep_off[nmsg] < dep_off[0])
        goto out;
    for (int64_t m = 0; m < nmsg; m++) {
        int64_t hops = route_off[m + 1] - route_off[m];
        if (bytes[m] < 0 || hops < 0 || (hops == 0 && bytes[m] > 0) || vl[m] < 0 ||
            vl[m] >= MAX_VL || dep_off[m + 1] < dep_off[m] || !(delay[m] >= 0))
            goto out;
        if (vl[m] + 1 > nvl) nvl = vl[m] + 1;
        for (int64_t k = route_off[m]; k < route_off[m + 1]; k++)
            if (route[k] < 0 || route[k] >= s->nlinks) goto out;
        for (int64_t k = dep_off[m]; k < dep_off[m + 1]; k++)
            if (dep[k] >= m || dep[k] < 0) goto out;       /* dependencies point backwards */
    }
    rc = 1;
    if (reserve(s, nmsg, dep_off[nmsg] - dep_off[0], nvl)) goto out;
    s->nmsg = nmsg;
    s->nq = (int64_t)s->nlinks * s->nvl;
    s->preq = s->nq + nmsg;
    if (s->preq + (s->voq ? s->pool_cap : 0) > INT32_MAX) { rc = 3; goto out; }
    s->route = route; s->vl = vl; s->delay = delay; s->first = first; s->end = end;
    /* the links this phase uses, as new */
    if (++s->epoch == 0) {
        memset(s->stamp, 0, (size_t)s->nlinks * sizeof(uint32_t));
        s->epoch = 1;
    }
    double span = 0.0;
    for (int64_t k = route_off[0]; k < route_off[nmsg]; k++) {
        int32_t l = route[k];
        if (s->stamp[l] != s->epoch) {
            s->stamp[l] = s->epoch;
            reset_link(s, l);
            double t = packet_span(s, l);
            if (t > span) span = t;
        }
    }
    memset(s->child_off, 0, (size_t)(nmsg + 1) * sizeof(int64_t));
    for (int64_t m = 0; m < nmsg; m++) {
        msg_t *g = &s->msg[m];
        for (int64_t k = dep_off[m]; k < dep_off[m + 1]; k++) s->child_off[dep[k] + 1]++;
        int64_t n = (bytes[m] + s->mtu - 1) / s->mtu;
        g->bytes = bytes[m];
        g->sent = g->done = 0;
        g->npk = (int32_t)(n > 0 ? n : 1);
        g->wait = (int32_t)(dep_off[m + 1] - dep_off[m]);
        g->r0 = (int32_t)route_off[m];
        g->r1 = (int32_t)route_off[m + 1];
        first[m] = end[m] = -1.0;
    }
    for (int64_t m = 0; m < nmsg; m++) s->child_off[m + 1] += s->child_off[m];
    for (int64_t m = 0; m < nmsg; m++)          /* `sent` as a fill cursor, reset below */
        for (int64_t k = dep_off[m]; k < dep_off[m + 1]; k++)
            s->child[s->child_off[dep[k]] + s->msg[dep[k]].sent++] = (int32_t)m;
    for (int64_t m = 0; m < nmsg; m++) {
        s->msg[m].sent = 0;
        if (route_off[m + 1] > route_off[m]) s->ln[route[route_off[m]]].flags |= L_HOST;
    }
    rc = 3;
    for (int64_t m = 0; m < nmsg; m++) {   /* a host's send queue has no output buffer, */
        const link_t *h = &s->ln[route[route_off[m]]];   /* and its link carries nothing else */
        if (route_off[m + 1] > route_off[m] && (h->flags & L_OBUF)) goto out;
        for (int64_t k = route_off[m] + 1; k < route_off[m + 1]; k++)
            if (s->ln[route[k]].flags & L_HOST) goto out;
    }
    rc = 1;
    s->free_pkt = -1;
    s->fresh = 0;
    /* about one event per bucket when every link streams; the result does not depend on it */
    queue_reset(&s->q, span > 0 && span < 1.0 ? span / (NB / 2) : 1e-9);
    for (int64_t m = 0; m < nmsg; m++)
        if (s->msg[m].wait == 0) push(s, delay[m] + 0.0, EV_START, (int32_t)m);
    int64_t finished = 0;
    while (s->q.n > 0 && !s->oom) {
        ev_t ev = pop(s);
        double t = ev.t;
        int type = (int)(ev.v >> EV_BITS);
        int32_t a = (int32_t)(ev.v & EV_ARG), out = -1;   /* out: the output to arbitrate */
        if (type == EV_READY) {
            pkt_t *pk = &s->pool[a];
            int v = pk->vl;
            if (s->voq) {                 /* it requests its output at once */
                out = pk->out;
                request(s, out, v, (int32_t)(s->preq + a));
            } else {
                lv_t *c = &s->lvs[pk->at];
                pk->next = -1;
                if (c->q_tail < 0) {      /* the head of its FIFO: it requests */
                    c->q_head = c->q_tail = a;
                    out = pk->out;
                    request(s, out, v, (int32_t)(c - s->lvs));
                } else {
                    s->pool[c->q_tail].next = a;
                    c->q_tail = a;
                }
            }
        } else if (type == EV_WAKE) {
            if (t == s->ln[a].wake_at) s->ln[a].wake_at = INFINITY;
            out = a;
        } else if (type == EV_START) {
            const msg_t *m = &s->msg[a];
            if (m->r1 == m->r0) {        /* a join */
                first[a] = end[a] = t;
                finished++;
                release(s, a, t);
            } else {
                out = s->route[m->r0];
                request(s, out, s->vl[a], (int32_t)(s->nq + a));
            }
        } else {                          /* EV_DELIVER */
            pkt_t *pk = &s->pool[a];
            int64_t m = pk->msg;
            pk->next = s->free_pkt;
            s->free_pkt = a;
            s->pool_used--;
            s->delivered++;
            if (++s->msg[m].done == s->msg[m].npk) {
                end[m] = t;
                finished++;
                release(s, m, t);
            }
        }
        if (out >= 0) arbitrate(s, out, t);
    }
    s->events = s->q.popped;
    s->heap_peak = s->q.peak;
    rc = s->oom ? 1 : 0;
    if (!rc && finished != nmsg) rc = 4;        /* a message never finished: deadlock */
out:
    if (counters) {
        counters[0] = s->events; counters[1] = s->hops; counters[2] = s->created;
        counters[3] = s->delivered; counters[4] = s->credit_errors; counters[5] = s->heap_peak;
        counters[6] = s->pool_peak;
    }
    return rc;
}

/* Phases [p0, p1) of a batch: phase i's messages are [msg_off[i], msg_off[i+1]) of the
 * message arrays (route_off and dep_off index route and dep as given, dep holds indices
 * within the phase), its counters counters[7i..7i+7); rc[i] its return code. */
typedef struct {
    st_t *s;
    int64_t nphase;
    const int64_t *msg_off, *bytes, *route_off, *dep_off;
    const int32_t *route, *dep;
    const int8_t *vl;
    const double *delay;
    double *first, *end;
    int64_t *counters;
    int32_t *rc;
    int64_t *next;                     /* shared: the next phase to take */
    pthread_mutex_t *lock;
} batch_t;

static void *worker(void *arg) {
    batch_t *b = arg;
    for (;;) {
        int64_t i;
        pthread_mutex_lock(b->lock);
        i = (*b->next)++;
        pthread_mutex_unlock(b->lock);
        if (i >= b->nphase) return NULL;
        int64_t o = b->msg_off[i];
        b->rc[i] = run(b->s, b->msg_off[i + 1] - o, b->bytes + o, b->route_off + o, b->route,
                       b->vl + o, b->dep_off + o, b->dep, b->delay + o, b->first + o,
                       b->end + o, b->counters + NCOUNTERS * i);
    }
}

/* Runs nphase independent phases on `nctx` contexts of one fabric (one thread each; the
 * phases' results do not depend on which runs them). Returns the first phase's non-zero
 * return code, else 0. */
int t2hx_packet_phases(void **ctx, int nctx, int64_t nphase, const int64_t *msg_off,
                       const int64_t *bytes, const int64_t *route_off, const int32_t *route,
                       const int8_t *vl, const int64_t *dep_off, const int32_t *dep,
                       const double *delay, double *first, double *end, int64_t *counters,
                       int32_t *rc) {
    if (nctx < 1) return 3;
    int64_t next = 0;
    pthread_mutex_t lock;
    pthread_mutex_init(&lock, NULL);
    batch_t b[64];
    pthread_t th[64];
    int threads = nctx < 64 ? nctx : 64, started[64] = {0};
    if (threads > nphase) threads = nphase > 0 ? (int)nphase : 1;
    for (int i = 0; i < threads; i++)
        b[i] = (batch_t){ctx[i], nphase, msg_off, bytes, route_off, dep_off, route, dep, vl,
                         delay, first, end, counters, rc, &next, &lock};
    /* a thread that cannot start leaves its phases to the others */
    for (int i = 1; i < threads; i++) started[i] = !pthread_create(&th[i], NULL, worker, &b[i]);
    worker(&b[0]);
    for (int i = 1; i < threads; i++)
        if (started[i]) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&lock);
    for (int64_t i = 0; i < nphase; i++)
        if (rc[i]) return rc[i];
    return 0;
}
