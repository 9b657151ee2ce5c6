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
 * DELIVER (a tail reached host memory). Credits that come back are queued per (link, VL)
 * with their time and applied when the sender looks, so an unblocked stream costs no
 * credit events. A radix heap of array buckets (4-bit digits; grown to their peak, then
 * reused), a packet pool, per-(link, VL) state in one cache line and rings of credit
 * returns; nothing else is allocated after setup. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CREDIT_BYTES 64
enum { EV_START = 0, EV_READY = 1, EV_WAKE = 2, EV_DELIVER = 3 };

/* An event: time, then type (2 bits) and argument (30 bits). 16 bytes. */
typedef struct {
    double t;
    uint32_t v;
} ev_t;
#define EV_BITS 30
#define EV_ARG ((1u << EV_BITS) - 1)
/* Radix heap digits of RADIX bits: bucket 0 holds the time equal to the last one taken,
 * bucket 1 + level * 2^RADIX + digit the times whose highest digit differing from it is at
 * `level`, with that digit; bucket order is time order. */
#define RADIX 4
#define BUCKETS (1 + ((64 + RADIX - 1) / RADIX) * (1 << RADIX))
#define MASKW ((BUCKETS + 62) / 64)

/* A bucket of the radix heap: a growable array, taken in order from `head` (bucket 0). */
typedef struct {
    ev_t *a;
    int32_t len, cap, head;
} bucket_t;

typedef struct {
    int32_t msg, ri, next;             /* ri: route index of the link it is on; next: in its
                                        * FIFO, or in the free list */
    int32_t payload : 24, vl : 8;
    double arr;                        /* when its head reached the node it is at */
} pkt_t;

/* State of one (link, VL): credits of the buffer behind the link and their returns (a
 * ring of `ring_cap` entries from `ring_off`), the input FIFO of packets that arrived over
 * the link (linked through the pool), the requesters waiting for the link as an output. */
typedef struct {
    int64_t cred, ring_off;
    int32_t ring_cap, q_head, q_tail, q_len, r_head, r_len, l_first, l_last;
} __attribute__((aligned(64))) lv_t;

typedef struct {
    double t;                          /* when they are back */
    int64_t n;                         /* credits */
} ret_t;

typedef struct {
    /* links */
    int nlinks, nvl;
    const double *rate, *lat, *fwd, *debt_per_byte;
    const int32_t *hdr, *cap, *pair, *obuf;
    const double *xrate;
    double *inv_rate, *inv_xfer;       /* per link: 1/rate; 1/(rate out of the input buffer) */
    /* messages */
    int64_t nmsg;
    const int64_t *bytes, *route_off;
    const int32_t *route;
    const int8_t *vl;
    const double *delay;
    int mtu, ib_hdr, oldest;           /* oldest: inputs of a VL served oldest packet first */
    int voq;                           /* input buffers queue per output: packets request alone */
    int64_t preq;                      /* requester id of pool packet 0 (voq) */
    /* VL arbitration: entries (vl, weight) */
    int nhigh, nlow; const int32_t *high, *low; int64_t high_limit;   /* bytes, <0: none */
    /* state: links */
    double *free_at, *wake_at, *debt, *wire_at; uint32_t *vmask;
    char *host;            /* per link: its sources are messages (a host's send queue) */
    int32_t *hi_idx, *lo_idx; int64_t *hi_left, *lo_left, *hi_sent;
    /* state per (link, vl): credits, pending credit returns, input FIFO, requesters */
    lv_t *lvs;                                     /* per (link, VL), one cache line */
    ret_t *ring;                                   /* credits coming back, per (link, VL) */
    int32_t *rnext;                                /* per requester: next in its list */
    /* messages */
    int32_t *sent, *done, *npk, *wait, *child;     /* wait: dependencies not delivered */
    int64_t *child_off;                            /* children of m: child[off[m]..off[m+1]) */
    double *first, *end;
    /* packets */
    pkt_t *pool; int32_t free_pkt, fresh, pool_cap, pool_used, pool_peak;
    /* radix heap: times never go below the last one popped (a monotone queue), so an
     * event sits in the bucket of the highest digit where its time differs from that one;
     * buckets are arrays filled in order, so equal times leave in the order they were
     * scheduled; they grow to their peak size and are reused */
    bucket_t bk[BUCKETS]; int64_t hn, hcap; uint64_t last;
    uint64_t full[MASKW];              /* bit b-1: bucket b (b >= 1) is not empty */
    /* counters */
    int64_t events, hops, created, delivered, credit_errors, heap_peak, overflow;
} st_t;

static inline uint64_t bits(double t) {
    uint64_t u;
    memcpy(&u, &t, sizeof u);          /* non-negative doubles order as their bits */
    return u;
}

static inline int bucket(uint64_t k, uint64_t last) {
    if (k == last) return 0;
    int level = (63 - __builtin_clzll(k ^ last)) / RADIX;
    return 1 + (level << RADIX) + (int)(k >> (level * RADIX) & ((1u << RADIX) - 1));
}

static inline void append(st_t *s, int b, ev_t e) {
    bucket_t *q = &s->bk[b];
    if (q->len == q->cap) {
        int32_t cap = q->cap ? 2 * q->cap : 64;
        ev_t *a = realloc(q->a, (size_t)cap * sizeof(ev_t));
        if (!a) { s->overflow = 1; return; }
        q->a = a;
        q->cap = cap;
    }
    q->a[q->len++] = e;
    if (b) s->full[(b - 1) >> 6] |= 1ull << ((b - 1) & 63);
}

static void push(st_t *s, double t, int type, int32_t a) {
    if (s->hn >= s->hcap) { s->overflow = 1; return; }
    uint64_t k = bits(t);
    if (k < s->last) { k = s->last; memcpy(&t, &k, sizeof t); }   /* never earlier */
    ev_t e = {t, ((uint32_t)type << EV_BITS) | (uint32_t)a};
    append(s, bucket(k, s->last), e);
    if (++s->hn > s->heap_peak) s->heap_peak = s->hn;
}

static ev_t pop(st_t *s) {
    bucket_t *z = &s->bk[0];
    if (z->head == z->len) {
        z->head = z->len = 0;
        int w = 0;
        while (!s->full[w]) w++;
        int b = (w << 6) + __builtin_ctzll(s->full[w]) + 1;
        s->full[w] &= s->full[w] - 1;
        bucket_t *q = &s->bk[b];
        uint64_t low = UINT64_MAX;
        for (int32_t i = 0; i < q->len; i++) {
            uint64_t k = bits(q->a[i].t);
            if (k < low) low = k;
        }
        s->last = low;
        for (int32_t i = 0; i < q->len; i++)   /* in order: equal times stay first come first */
            append(s, bucket(bits(q->a[i].t), low), q->a[i]);
        q->len = 0;
    }
    s->hn--;
    return z->a[z->head++];
}

static int32_t credits_of(const st_t *s, int32_t payload) {
    return (payload + s->ib_hdr + CREDIT_BYTES - 1) / CREDIT_BYTES;
}

/* Credits of (link, vl) that have come back by `now`. */
static int64_t credits_now(st_t *s, int64_t lv, double now) {
    int32_t cap = s->lvs[lv].ring_cap;
    while (s->lvs[lv].r_len > 0) {
        int64_t k = s->lvs[lv].ring_off + s->lvs[lv].r_head;
        if (s->ring[k].t > now) break;
        s->lvs[lv].cred += s->ring[k].n;
        if (++s->lvs[lv].r_head == cap) s->lvs[lv].r_head = 0;
        s->lvs[lv].r_len--;
    }
    return s->lvs[lv].cred;
}

static void wake(st_t *s, int32_t l, double t) {
    if (t < s->free_at[l]) t = s->free_at[l];     /* it cannot send before */
    if (t < s->wake_at[l]) {
        s->wake_at[l] = t;
        push(s, t, EV_WAKE, l);
    }
}

/* Requester r (an input FIFO (link, vl) id, or nlinks*nvl + message) waits for output l. */
static void request(st_t *s, int32_t l, int v, int32_t r) {
    if (s->host[l]) v = 0;                /* a host serves its messages in one round */
    int64_t lv = (int64_t)l * s->nvl + v;
    s->rnext[r] = -1;
    s->vmask[l] |= 1u << v;
    if (s->lvs[lv].l_first < 0) { s->lvs[lv].l_first = s->lvs[lv].l_last = r; return; }
    int64_t nq = (int64_t)s->nlinks * s->nvl;
    if (s->oldest && (r < nq || r >= s->preq)) {   /* before the first younger one */
        double a = r < nq ? s->pool[s->lvs[r].q_head].arr : s->pool[r - s->preq].arr;
        for (int32_t q = s->lvs[lv].l_first, prev = -1; q >= 0; prev = q, q = s->rnext[q]) {
            double b = q < nq ? s->pool[s->lvs[q].q_head].arr
                              : q >= s->preq ? s->pool[q - s->preq].arr : -1.0;
            if (b > a) {
                s->rnext[r] = q;
                if (prev < 0) s->lvs[lv].l_first = r;
                else s->rnext[prev] = r;
                return;
            }
        }
    }
    s->rnext[s->lvs[lv].l_last] = r;
    s->lvs[lv].l_last = r;
}

/* Payload of the packet requester r would send next. */
static int32_t head_payload(const st_t *s, int32_t r) {
    int64_t nq = (int64_t)s->nlinks * s->nvl;
    if (r < nq) return s->pool[s->lvs[r].q_head].payload;
    if (r >= s->preq) return s->pool[r - s->preq].payload;
    int64_t m = r - nq;
    int64_t left = s->bytes[m] - (int64_t)s->sent[m] * s->mtu;
    return (int32_t)(left < s->mtu ? (left > 0 ? left : 0) : s->mtu);
}

/* Lowers *retry to when (link, vl) will have `need` credits, if credits on their way
 * back make that happen. */
static void credit_time(const st_t *s, int64_t lv, int32_t need, double *retry) {
    int64_t have = s->lvs[lv].cred;
    int32_t k = s->lvs[lv].r_head, cap = s->lvs[lv].ring_cap;
    for (int32_t i = 0; i < s->lvs[lv].r_len; i++, k = k + 1 == cap ? 0 : k + 1) {
        have += s->ring[s->lvs[lv].ring_off + k].n;
        if (have >= need) {
            double t = s->ring[s->lvs[lv].ring_off + k].t;
            if (t < *retry) *retry = t;
            return;
        }
    }
}

static int eligible(st_t *s, int32_t l, int v, double now, double *retry) {
    int64_t lv = (int64_t)l * s->nvl + v;
    int32_t r = s->lvs[lv].l_first;
    if (r < 0) return 0;
    if (s->cap[l] < 0) return 1;
    int32_t need = credits_of(s, head_payload(s, r));
    if (s->lvs[lv].cred < need && credits_now(s, lv, now) < need) {   /* returns: when short */
        credit_time(s, lv, need, retry);
        return 0;
    }
    if (s->obuf[l] > 0) {                 /* room in the output buffer: more than need */
        double room = (double)(s->obuf[l] - need - 1) * CREDIT_BYTES * s->inv_rate[l];
        double t = s->wire_at[l] - room;  /* the backlog drains at the link's rate */
        if (t > now) {
            if (t < *retry) *retry = t;
            return 0;
        }
    }
    return 1;
}

/* Weighted round robin over one arbitration table; returns the VL or -1. */
static int scan(const int32_t *tab, int n, int32_t *idx, int64_t *left, uint32_t mask) {
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

static void charge(int32_t *idx, int64_t *left, int n, int32_t credits) {
    *left -= credits;
    if (*left <= 0) { if (++*idx == n) *idx = 0; *left = 0; }
}

static void transmit(st_t *s, int32_t l, int v, int32_t r, double now);

/* Takes requester r (after `prev`, -1: the head) off list lv of link l. */
static void unlink_req(st_t *s, int32_t l, int v, int64_t lv, int32_t r, int32_t prev) {
    int32_t next = s->rnext[r];
    if (prev < 0) s->lvs[lv].l_first = next;
    else s->rnext[prev] = next;
    if (s->lvs[lv].l_last == r) s->lvs[lv].l_last = prev;
    if (s->lvs[lv].l_first < 0) { s->lvs[lv].l_last = -1; s->vmask[l] &= ~(1u << v); }
}

/* A host's link: its messages in round robin, one packet each, whatever their VL; a
 * message whose VL has no credits at the HCA is passed over (it keeps its place). */
static void arbitrate_host(st_t *s, int32_t l, double now) {
    int64_t lv = (int64_t)l * s->nvl, nq = (int64_t)s->nlinks * s->nvl;
    double retry = INFINITY;
    for (int32_t r = s->lvs[lv].l_first, prev = -1; r >= 0; prev = r, r = s->rnext[r]) {
        int v = s->vl[r - nq];
        int32_t need = credits_of(s, head_payload(s, r));
        if (s->cap[l] < 0 || s->lvs[lv + v].cred >= need || credits_now(s, lv + v, now) >= need) {
            unlink_req(s, l, 0, lv, r, prev);
            transmit(s, l, v, r, now);
            return;
        }
        credit_time(s, lv + v, need, &retry);
    }
    if (retry < INFINITY) wake(s, l, retry);
}

static void arbitrate(st_t *s, int32_t l, double now) {
    if (s->free_at[l] > now) { wake(s, l, s->free_at[l]); return; }
    if (s->host[l]) { arbitrate_host(s, l, now); return; }
    uint32_t mask = 0; double retry = INFINITY;
    for (uint32_t w = s->vmask[l]; w; w &= w - 1) {
        int v = __builtin_ctz(w);
        if (eligible(s, l, v, now, &retry)) mask |= 1u << v;
    }
    if (!mask) {
        if (retry < INFINITY) wake(s, l, retry);
        return;
    }
    int v = -1;
    if (mask & (mask - 1)) {
        int32_t r, need;
        if (s->nhigh && (s->high_limit < 0 || s->hi_sent[l] < s->high_limit ||
                         (s->high_limit == 0 && s->hi_sent[l] == 0))) {
            v = scan(s->high, s->nhigh, &s->hi_idx[l], &s->hi_left[l], mask);
            if (v >= 0) {
                r = s->lvs[(int64_t)l * s->nvl + v].l_first;
                need = credits_of(s, head_payload(s, r));
                charge(&s->hi_idx[l], &s->hi_left[l], s->nhigh, need);
                s->hi_sent[l] += (int64_t)need * CREDIT_BYTES;
            }
        }
        if (v < 0 && s->nlow) {
            v = scan(s->low, s->nlow, &s->lo_idx[l], &s->lo_left[l], mask);
            if (v >= 0) {
                r = s->lvs[(int64_t)l * s->nvl + v].l_first;
                charge(&s->lo_idx[l], &s->lo_left[l], s->nlow, credits_of(s, head_payload(s, r)));
                s->hi_sent[l] = 0;
            }
        }
        if (v < 0 && s->nhigh) {
            v = scan(s->high, s->nhigh, &s->hi_idx[l], &s->hi_left[l], mask);
            if (v >= 0) {
                r = s->lvs[(int64_t)l * s->nvl + v].l_first;
                charge(&s->hi_idx[l], &s->hi_left[l], s->nhigh, credits_of(s, head_payload(s, r)));
            }
        }
    }
    if (v < 0) v = __builtin_ctz(mask);
    int64_t lv = (int64_t)l * s->nvl + v;
    int32_t r = s->lvs[lv].l_first;
    unlink_req(s, l, v, lv, r, -1);
    transmit(s, l, v, r, now);
}

/* Sends the next packet of requester r (off its list already) on link l, VL v. */
static void transmit(st_t *s, int32_t l, int v, int32_t r, double now) {
    int64_t lv = (int64_t)l * s->nvl + v, nq = (int64_t)s->nlinks * s->nvl;
    int32_t p;
    int64_t in_lv = -1;                   /* the input buffer it leaves, of link in */
    int32_t in = -1;
    if (r < nq) {                         /* a switch/HCA input FIFO: its head packet */
        p = s->lvs[r].q_head;
        s->lvs[r].q_head = s->pool[p].next;
        if (s->lvs[r].q_head < 0) s->lvs[r].q_tail = -1;
        s->lvs[r].q_len--;
        in_lv = r;
        in = s->route[s->pool[p].ri];
    } else if (r >= s->preq) {            /* a packet of a queue per output */
        p = (int32_t)(r - s->preq);
        in = s->route[s->pool[p].ri];
        in_lv = (int64_t)in * s->nvl + v;
    } else {                              /* a message at its host: its next packet */
        int64_t m = r - nq;
        if (s->free_pkt >= 0) {
            p = s->free_pkt;
            s->free_pkt = s->pool[p].next;
        } else if (s->fresh < s->pool_cap) {
            p = s->fresh++;
        } else {
            s->overflow = 2;
            return;
        }
        if (++s->pool_used > s->pool_peak) s->pool_peak = s->pool_used;
        s->pool[p].msg = (int32_t)m;
        s->pool[p].ri = (int32_t)s->route_off[m] - 1;
        s->pool[p].vl = v;
        s->pool[p].payload = head_payload(s, r);
        if (s->sent[m] == 0) s->first[m] = now;
        s->sent[m]++;
        s->created++;
    }
    pkt_t *pk = &s->pool[p];
    int32_t need = credits_of(s, pk->payload);
    double ser = (double)(pk->payload + s->hdr[l]) * s->inv_rate[l] + s->debt[l];
    double start = now, out = ser;        /* head onto the wire; tail out of the input */
    if (s->obuf[l] > 0) {                 /* through the crossbar into the output buffer */
        out = (double)(pk->payload + s->hdr[l]) * s->inv_xfer[l];
        if (s->wire_at[l] > start) start = s->wire_at[l];
        s->wire_at[l] = start + ser;
    }
    s->debt[l] = 0.0;
    if (s->pair[l] >= 0) s->debt[s->pair[l]] += pk->payload * s->debt_per_byte[l];
    if (s->cap[l] >= 0) {
        s->lvs[lv].cred -= need;
        if (s->lvs[lv].cred < 0) s->credit_errors++;
    }
    s->free_at[l] = now + out;
    s->hops++;
    pk->ri++;
    int64_t m = pk->msg;
    int64_t last = s->route_off[m + 1] - 1;
    if (pk->ri == last)
        push(s, start + ser + s->lat[l], EV_DELIVER, p);
    else {
        int32_t nxt = s->route[pk->ri + 1];
        double ser_next = (double)(pk->payload + s->hdr[nxt]) * s->inv_xfer[nxt];
        double wait = s->fwd[l];
        if (ser - ser_next > wait) wait = ser - ser_next;   /* no overtaking of the tail */
        pk->arr = start + s->lat[l];
        push(s, pk->arr + wait, EV_READY, p);
    }
    int32_t follow = -1;
    if (in_lv >= 0) {
        /* its blocks leave the input buffer with its tail; the credits fly back (a sender
         * waiting for them on that VL is woken then) */
        if (s->cap[in] >= 0) {
            int32_t cap = s->lvs[in_lv].ring_cap;
            int64_t k = s->lvs[in_lv].r_head + s->lvs[in_lv].r_len;
            if (k >= cap) k -= cap;
            k += s->lvs[in_lv].ring_off;
            s->ring[k].t = now + out + s->lat[in];
            s->ring[k].n = need;
            s->lvs[in_lv].r_len++;
            if (s->lvs[s->host[in] ? (int64_t)in * s->nvl : in_lv].l_first >= 0)
                wake(s, in, s->ring[k].t);
        }
        if (r < nq && s->lvs[r].q_len > 0) {            /* the next packet of that FIFO is now its head */
            pkt_t *nx = &s->pool[s->lvs[r].q_head];
            follow = s->route[nx->ri + 1];
            request(s, follow, v, r);
        }
    } else if (s->sent[r - nq] < s->npk[r - nq]) {
        request(s, l, v, r);              /* round robin among the host's messages */
    }
    if (s->vmask[l]) wake(s, l, s->free_at[l]);
    if (follow >= 0 && follow != l) arbitrate(s, follow, now);
}

/* Message m was delivered at t: children whose last dependency it was start `delay` later
 * (events leave in time order, so the last delivery is the latest). */
static void release(st_t *s, int64_t m, double t) {
    for (int64_t k = s->child_off[m]; k < s->child_off[m + 1]; k++) {
        int32_t c = s->child[k];
        if (--s->wait[c] == 0) push(s, t + s->delay[c], EV_START, c);
    }
}

static void *zalloc(size_t n, size_t size, int *bad) {
    void *p = calloc(n ? n : 1, size);
    if (!p) *bad = 1;
    return p;
}

static void *xalloc(size_t n, size_t size, int *bad) {
    void *p = malloc((n ? n : 1) * size);
    if (!p) *bad = 1;
    return p;
}

/* Returns 0, or 1: out of memory, 2: the event heap or packet pool was too small,
 * 3: bad input. counters: events, packet-hops, packets created, delivered, credit
 * errors, heap peak, pool peak. */
int t2hx_packet_run(int nlinks, int nvl, const double *rate, const double *lat,
                    const double *fwd, const int32_t *hdr, const int32_t *cap,
                    const int32_t *pair, const double *debt_per_byte,
                    const int32_t *obuf, const double *xrate,
                    int64_t nmsg, const int64_t *bytes, const int64_t *route_off,
                    const int32_t *route, const int8_t *vl, const int64_t *dep_off,
                    const int32_t *dep, const double *delay, int mtu, int ib_hdr, int oldest, int voq,
                    int nhigh, const int32_t *high, int nlow, const int32_t *low,
                    int64_t high_limit, double *first, double *end, int64_t *counters) {
    if (nlinks <= 0 || nlinks > (int)EV_ARG || nvl <= 0 || nvl > 15 || mtu <= 0 ||
        nmsg > (int64_t)EV_ARG || route_off[nmsg] >= INT32_MAX || mtu > (1 << 22))
        return 3;
    st_t s;
    memset(&s, 0, sizeof s);
    int bad = 0;
    s.nlinks = nlinks; s.nvl = nvl; s.rate = rate; s.lat = lat; s.fwd = fwd; s.hdr = hdr;
    s.cap = cap; s.pair = pair; s.debt_per_byte = debt_per_byte;
    s.obuf = obuf; s.xrate = xrate;
    s.nmsg = nmsg; s.bytes = bytes; s.route_off = route_off; s.route = route; s.vl = vl;
    s.delay = delay; s.mtu = mtu; s.ib_hdr = ib_hdr; s.oldest = oldest; s.voq = voq;
    s.nhigh = nhigh; s.nlow = nlow; s.high = high; s.low = low; s.high_limit = high_limit;
    s.first = first; s.end = end;
    int64_t nq = (int64_t)nlinks * nvl;
    s.free_at = zalloc((size_t)nlinks, sizeof(double), &bad);
    s.wake_at = zalloc((size_t)nlinks, sizeof(double), &bad);
    s.debt = zalloc((size_t)nlinks, sizeof(double), &bad);
    s.wire_at = zalloc((size_t)nlinks, sizeof(double), &bad);
    s.inv_rate = zalloc((size_t)nlinks, sizeof(double), &bad);
    s.inv_xfer = zalloc((size_t)nlinks, sizeof(double), &bad);
    s.vmask = zalloc((size_t)nlinks, sizeof(uint32_t), &bad);
    s.host = zalloc((size_t)nlinks, sizeof(char), &bad);
    s.hi_idx = zalloc((size_t)nlinks, sizeof(int32_t), &bad);
    s.lo_idx = zalloc((size_t)nlinks, sizeof(int32_t), &bad);
    s.hi_left = zalloc((size_t)nlinks, sizeof(int64_t), &bad);
    s.lo_left = zalloc((size_t)nlinks, sizeof(int64_t), &bad);
    s.hi_sent = zalloc((size_t)nlinks, sizeof(int64_t), &bad);
    s.lvs = aligned_alloc(sizeof(lv_t), (size_t)(nq ? nq : 1) * sizeof(lv_t));
    if (!s.lvs) bad = 1;
    else memset(s.lvs, 0, (size_t)nq * sizeof(lv_t));
    s.sent = zalloc((size_t)nmsg, sizeof(int32_t), &bad);
    s.done = zalloc((size_t)nmsg, sizeof(int32_t), &bad);
    s.npk = zalloc((size_t)nmsg, sizeof(int32_t), &bad);
    s.wait = zalloc((size_t)nmsg, sizeof(int32_t), &bad);
    s.child_off = zalloc((size_t)nmsg + 1, sizeof(int64_t), &bad);
    s.child = zalloc((size_t)(dep_off[nmsg] > 0 ? dep_off[nmsg] : 1), sizeof(int32_t), &bad);
    int rc = 1;
    if (bad) goto out;
    rc = 3;
    /* ring sizes: a FIFO holds at most as many packets as its buffer has credits; a link
     * into host memory (cap < 0) holds none */
    int64_t slots = 0, finite = 0;
    for (int32_t l = 0; l < nlinks; l++) {
        if (rate[l] <= 0) goto out;
        if (obuf[l] > 0 && (xrate[l] <= 0 || obuf[l] <= (mtu + ib_hdr + CREDIT_BYTES - 1) /
                            CREDIT_BYTES)) goto out;       /* room for more than a packet */
        s.inv_rate[l] = 1.0 / rate[l];
        s.inv_xfer[l] = obuf[l] > 0 ? 1.0 / xrate[l] : s.inv_rate[l];
        for (int v = 0; v < nvl; v++) {
            int64_t lv = (int64_t)l * nvl + v;
            s.lvs[lv].ring_cap = cap[l] > 0 ? cap[l] : 1;
            s.lvs[lv].ring_off = slots;
            slots += s.lvs[lv].ring_cap;
            s.lvs[lv].cred = cap[l] > 0 ? cap[l] : 0;
            s.lvs[lv].l_first = s.lvs[lv].l_last = s.lvs[lv].q_head = s.lvs[lv].q_tail = -1;
            if (cap[l] > 0) finite += cap[l];
        }
        s.wake_at[l] = INFINITY;
    }
    if (dep_off[0] != 0) goto out;
    for (int64_t m = 0; m < nmsg; m++) {
        int64_t hops = route_off[m + 1] - route_off[m];
        if (bytes[m] < 0 || hops < 0 || (hops == 0 && bytes[m] > 0) || vl[m] < 0 ||
            vl[m] >= nvl || dep_off[m + 1] < dep_off[m])
            goto out;
        for (int64_t k = dep_off[m]; k < dep_off[m + 1]; k++) {
            if (dep[k] >= m || dep[k] < 0) goto out;   /* dependencies point backwards */
            s.child_off[dep[k] + 1]++;
        }
        int64_t n = (bytes[m] + mtu - 1) / mtu;
        s.npk[m] = (int32_t)(n > 0 ? n : 1);
        s.wait[m] = (int32_t)(dep_off[m + 1] - dep_off[m]);
        first[m] = end[m] = -1.0;
    }
    for (int64_t m = 0; m < nmsg; m++) s.child_off[m + 1] += s.child_off[m];
    for (int64_t m = 0; m < nmsg; m++)          /* `sent` as a fill cursor, reset below */
        for (int64_t k = dep_off[m]; k < dep_off[m + 1]; k++)
            s.child[s.child_off[dep[k]] + s.sent[dep[k]]++] = (int32_t)m;
    memset(s.sent, 0, (size_t)nmsg * sizeof(int32_t));
    for (int64_t m = 0; m < nmsg; m++)
        if (route_off[m + 1] > route_off[m]) s.host[route[route_off[m]]] = 1;
    for (int32_t l = 0; l < nlinks; l++)    /* a host's send queue has no output buffer */
        if (s.host[l] && obuf[l] > 0) goto out;
    for (int64_t m = 0; m < nmsg; m++)      /* a host's link carries nothing else */
        for (int64_t k = route_off[m] + 1; k < route_off[m + 1]; k++)
            if (s.host[route[k]]) goto out;
    rc = 1;
    /* large and mostly untouched: malloc, so only the pages in use are ever mapped */
    s.ring = xalloc((size_t)slots, sizeof(ret_t), &bad);
    /* packets alive: each holds credits of some buffer, or is on its way into host memory
     * (one per link into host memory at a time, plus its flight) */
    int64_t want = finite + 4 * (int64_t)nlinks + 64;
    s.pool_cap = (int32_t)(want < (int64_t)EV_ARG ? want : (int64_t)EV_ARG);
    s.pool = xalloc((size_t)s.pool_cap, sizeof(pkt_t), &bad);
    s.preq = nq + nmsg;
    if (s.preq + s.pool_cap > INT32_MAX) { rc = 3; goto out; }
    s.rnext = xalloc((size_t)(s.preq + (voq ? s.pool_cap : 0)), sizeof(int32_t), &bad);
    s.hcap = 2 * (int64_t)s.pool_cap + 4 * (int64_t)nlinks + nmsg + 64;
    if (s.hcap > INT32_MAX) s.hcap = INT32_MAX;
    if (bad) goto out;
    s.free_pkt = -1;
    s.fresh = 0;
    s.last = 0;
    for (int64_t m = 0; m < nmsg; m++)
        if (s.wait[m] == 0) push(&s, delay[m], EV_START, (int32_t)m);
    int64_t finished = 0;
    while (s.hn > 0 && !s.overflow) {
        ev_t ev = pop(&s);
        struct { double t; int type; int32_t a; } e = {ev.t, (int)(ev.v >> EV_BITS),
                                                       (int32_t)(ev.v & EV_ARG)};
        s.events++;
        if (e.type == EV_READY) {
            pkt_t *pk = &s.pool[e.a];
            int32_t in = s.route[pk->ri];
            int v = pk->vl;
            int64_t lv = (int64_t)in * nvl + v;
            if (s.voq) {                  /* it requests its output at once */
                int32_t out = s.route[pk->ri + 1];
                request(&s, out, v, (int32_t)(s.preq + e.a));
                arbitrate(&s, out, e.t);
                continue;
            }
            pk->next = -1;
            if (s.lvs[lv].q_tail >= 0) s.pool[s.lvs[lv].q_tail].next = e.a;
            else s.lvs[lv].q_head = e.a;
            s.lvs[lv].q_tail = e.a;
            if (++s.lvs[lv].q_len == 1) {
                int32_t out = s.route[pk->ri + 1];
                request(&s, out, v, (int32_t)lv);
                arbitrate(&s, out, e.t);
            }
        } else if (e.type == EV_WAKE) {
            if (e.t == s.wake_at[e.a]) s.wake_at[e.a] = INFINITY;
            arbitrate(&s, e.a, e.t);
        } else if (e.type == EV_START) {
            if (s.route_off[e.a + 1] == s.route_off[e.a]) {     /* a join */
                first[e.a] = end[e.a] = e.t;
                finished++;
                release(&s, e.a, e.t);
                continue;
            }
            int32_t l = s.route[s.route_off[e.a]];
            request(&s, l, s.vl[e.a], (int32_t)(nq + e.a));
            arbitrate(&s, l, e.t);
        } else {                          /* EV_DELIVER */
            pkt_t *pk = &s.pool[e.a];
            int64_t m = pk->msg;
            pk->next = s.free_pkt;
            s.free_pkt = e.a;
            s.pool_used--;
            s.delivered++;
            if (++s.done[m] == s.npk[m]) {
                end[m] = e.t;
                finished++;
                release(&s, m, e.t);
            }
        }
    }
    rc = s.overflow ? 2 : 0;
    if (!rc && finished != nmsg) rc = 4;        /* a message never finished: deadlock */
out:
    if (counters) {
        counters[0] = s.events; counters[1] = s.hops; counters[2] = s.created;
        counters[3] = s.delivered; counters[4] = s.credit_errors; counters[5] = s.heap_peak;
        counters[6] = s.pool_peak;
    }
    free(s.free_at); free(s.wake_at); free(s.debt); free(s.wire_at); free(s.inv_rate); free(s.inv_xfer); free(s.vmask); free(s.host); free(s.hi_idx); free(s.lo_idx);
    free(s.hi_left); free(s.lo_left); free(s.hi_sent); free(s.lvs);
   
   
    free(s.rnext); free(s.sent); free(s.done); free(s.npk);
    free(s.wait); free(s.child_off); free(s.child); free(s.ring); free(s.pool);
    for (int b = 0; b < BUCKETS; b++) free(s.bk[b].a);
    return rc;
}
