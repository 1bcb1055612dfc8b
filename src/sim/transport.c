/* Transport models: the per-flow quantities the engine needs for tcp and
 * rdma (sim.h, docs/model.md "Transport"). The engine (control.c, tcp.c) applies
 * them: wire bytes, a longer latency, a handshake delay, slow-start rounds,
 * the source FIFO of small messages and (tcp) the queues at switch ports. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "../base/json.h"
#include "internal.h"
#include "pktnet.h"

static const char *const kind_names[] = {"fluid", "tcp", "rdma"};

void fs_transport_defaults(fs_transport_kind kind, fs_transport *out) {
  memset(out, 0, sizeof(*out));
  out->kind = kind;
  out->efficiency = 1;
  out->init_window = 10;
  switch (kind) {
    case FS_TRANSPORT_TCP:
      /* MTU 9000 less IPv4 (20) + TCP (20) + timestamp option (12); on the
       * wire also the 2-byte PPP header of point-to-point links. */
      out->mss_bytes = 9000 - 52;
      out->header_bytes = 54;
      out->queue_k = 65; /* DCTCP's K at 100 Gb/s (Alizadeh et al. 2010) */
      /* flows of at most 256 KiB run as packets: about three slow-start
       * rounds from the SYN's 7-segment first flight (7 + 14 + 28
       * segments), i.e. messages whose life is their first round trips,
       * where FIFO order at ports sets their times (docs/model.md, "Small
       * flows as packets") */
      out->packet_bytes = 256 * 1024;
      /* source_fq stays 0: its re-rating costs 3.7-16.6x the fluid run on
       * the tcp benchmarks (docs/performance.md) */
      /* efficiency stays 1: against ns-3's DCTCP an incast's bottleneck
       * runs at line rate while an oversubscribed all-to-all's uplinks run
       * at ~95 % (docs/validation.md), so no one constant is right */
      break;
    case FS_TRANSPORT_RDMA:
      out->mss_bytes = 4096; /* RoCE path MTU */
      out->header_bytes = 62;
      out->persistent = 1;
      /* under DCQCN (rate_control "dcqcn") messages of at most 256 KiB run
       * as packets, tcp's bound: about 21 us at 100 Gb/s, a few of DCQCN's
       * 4 us decrease periods, where the order packets meet at ports sets
       * their times (docs/model.md, "Small flows as packets") */
      out->packet_bytes = 256 * 1024;
      out->dcqcn_prm = (fs_dcqcn){.kmin_kb = 400, .kmax_kb = 1600, .pmax = 0.2, .g = 1.0 / 256,
                                  .alpha_us = 1, .dec_us = 4, .inc_us = 300, .f = 1,
                                  .ai_mbps = 20, .hai_mbps = 200, .min_mbps = 1000};
      break;
    case FS_TRANSPORT_FLUID:
      out->mss_bytes = 9000 - 52; /* unused */
      break;
  }
}

int fs_transport_kind_parse(const char *name, fs_transport_kind *out) {
  for (int k = 0; k < 3; k++)
    if (strcmp(name, kind_names[k]) == 0) {
      *out = (fs_transport_kind)k;
      return 0;
    }
  return FS_EINVAL;
}

const char *fs_transport_kind_name(fs_transport_kind kind) {
  return kind >= FS_TRANSPORT_FLUID && kind <= FS_TRANSPORT_RDMA ? kind_names[kind] : "?";
}

int fs_transport_check(const fs_transport *tp, fs_err *err) {
  if (tp->kind < FS_TRANSPORT_FLUID || tp->kind > FS_TRANSPORT_RDMA)
    return fs_err_set(err, FS_EINVAL, "transport kind %d unknown", (int)tp->kind);
  if (!(tp->mss_bytes >= 1) || !isfinite(tp->mss_bytes))
    return fs_err_set(err, FS_EINVAL, "transport mss must be >= 1 byte, got %g", tp->mss_bytes);
  if (!(tp->header_bytes >= 0) || !isfinite(tp->header_bytes))
    return fs_err_set(err, FS_EINVAL, "transport header_bytes must be >= 0, got %g",
                      tp->header_bytes);
  if (!(tp->init_window >= 1) || !isfinite(tp->init_window))
    return fs_err_set(err, FS_EINVAL, "transport init_window must be >= 1 segment, got %g",
                      tp->init_window);
  if (!(tp->efficiency > 0 && tp->efficiency <= 1))
    return fs_err_set(err, FS_EINVAL, "transport efficiency must be in (0, 1], got %g",
                      tp->efficiency);
  if (!(tp->queue_k >= 0) || !isfinite(tp->queue_k))
    return fs_err_set(err, FS_EINVAL, "transport queue_k must be >= 0 packets, got %g",
                      tp->queue_k);
  if (!(tp->packet_bytes >= 0) || !isfinite(tp->packet_bytes))
    return fs_err_set(err, FS_EINVAL, "transport packet_bytes must be >= 0, got %g",
                      tp->packet_bytes);
  fs_transport copy = *tp;
  fs_transport_key bad;
  fs_err why = {0, ""};
  if (fs_transport_combine(&copy, NULL, 0, &bad, &why))
    return fs_err_set(err, FS_EINVAL, "transport %s: %s", fs_transport_key_name(bad), why.msg);
  return 0;
}

static const char *const key_names[] = {"kind",         "connections", "rate_control",
                                       "source_queue", "queue_k",     "packet_bytes"};

const char *fs_transport_key_name(fs_transport_key key) {
  return key >= FS_TK_KIND && key <= FS_TK_PACKET_BYTES ? key_names[key] : "?";
}

/* A rule broken: blame a if the user gave it, else b if given, else a. */
static int broken(unsigned given, fs_transport_key a, fs_transport_key b, fs_transport_key *bad,
                  fs_err *err, const char *fmt, ...) {
  *bad = given & (1u << a) || !(given & (1u << b)) ? a : b;
  va_list ap;
  va_start(ap, fmt);
  fs_err_setv(err, FS_EINVAL, fmt, ap);
  va_end(ap);
  return FS_EINVAL;
}

int fs_transport_combine(fs_transport *tp, const char *rate_control, unsigned given,
                         fs_transport_key *bad, fs_err *err) {
  const char *kind = fs_transport_kind_name(tp->kind);
  int tcp = tp->kind == FS_TRANSPORT_TCP, rdma = tp->kind == FS_TRANSPORT_RDMA;
  int pkt_given = (given >> FS_TK_PACKET_BYTES) & 1;
  if (rate_control) {
    if (strcmp(rate_control, "dcqcn") == 0 && !rdma)
      return broken(given, FS_TK_RATE_CONTROL, FS_TK_KIND, bad, err,
                    "DCQCN is rdma's rate control (kind rdma, --transport rdma), and the transport is %s", kind);
    if (strcmp(rate_control, "dctcp") == 0 && !tcp)
      return broken(given, FS_TK_RATE_CONTROL, FS_TK_KIND, bad, err,
                    "DCTCP is tcp's rate control (kind tcp, --transport tcp), and the transport is %s", kind);
    tp->dcqcn = rate_control[0] == 'd';
  }
  if (rdma && !tp->persistent)
    return broken(given, FS_TK_CONNECTIONS, FS_TK_KIND, bad, err,
                  "rdma queue pairs are persistent");
  if (tp->dcqcn && tp->source_fq)
    return broken(given, FS_TK_SOURCE_QUEUE, FS_TK_RATE_CONTROL, bad, err,
                  "the source queue \"fq\" is max-min's; under a rate control the NIC's round "
                  "robin is in the model");
  if (tcp && tp->dcqcn && !(tp->queue_k > 0))
    return broken(given, FS_TK_QUEUE_K, FS_TK_RATE_CONTROL, bad, err,
                  "DCTCP marks at K = queue_k packets, which must be > 0");
  if (tp->packet_bytes > 0 && tp->kind == FS_TRANSPORT_FLUID)
    return broken(given, FS_TK_PACKET_BYTES, FS_TK_KIND, bad, err,
                  "flows run as packets under tcp or rdma only, and the transport is %s", kind);
  if (rdma && !tp->dcqcn && tp->packet_bytes > 0 && pkt_given)
    return broken(given, FS_TK_PACKET_BYTES, FS_TK_RATE_CONTROL, bad, err,
                  "under rdma messages run as packets beside DCQCN's queues only: give "
                  "rate_control dcqcn (--rate-control dcqcn), or packet_bytes 0");
  if (tcp && !(tp->queue_k > 0) && tp->packet_bytes > 0) {
    if (pkt_given)
      return broken(given, FS_TK_PACKET_BYTES, FS_TK_QUEUE_K, bad, err,
                    "flows run as packets at switch ports that mark ECN at K = queue_k packets, "
                    "and queue_k is 0: give queue_k > 0, or packet_bytes 0");
    tp->packet_bytes = 0; /* the default's packets have no ports to run at */
  }
  return 0;
}

/* One pass over f's route (weights: the fraction on each link, so a
 * sprayed route counts its paths' average): the time per byte summed over
 * its hops, the store and forward of a last packet of `last` bytes after
 * the first hop, and the rate that binds the flow alone. */
static void route_sums(const fs__simcore *c, const fs__flow *f, double last, double *per_byte,
                       double *store, double *rmax) {
  *per_byte = *store = 0;
  *rmax = INFINITY;
  for (int32_t k = 0; k < f->n; k++) {
    double cap = c->cap_Bps[f->links[k]];
    if (!(cap > 0)) continue;
    double x = f->w[k] / cap;
    *per_byte += x;
    if (c->t->links[f->links[k]].from != f->src) *store += x * last;
    if (cap < *rmax * f->w[k]) *rmax = cap / f->w[k];
  }
}

double fs__transport_store_s(const fs_transport *tp, const fs__simcore *c, const fs__flow *f,
                             double payload) {
  if (!(payload > 0)) return 0;
  double per_byte, store, rmax;
  route_sums(c, f, fs__transport_last_bytes(tp, payload), &per_byte, &store, &rmax);
  return store;
}

double fs__transport_last_bytes(const fs_transport *tp, double payload) {
  double P = tp->mss_bytes;
  return payload - (ceil(payload / P) - 1) * P + tp->header_bytes;
}

int fs__transport_last_short(const fs_transport *tp, double payload) {
  return payload > tp->mss_bytes &&
         fs__transport_last_bytes(tp, payload) < tp->mss_bytes + tp->header_bytes;
}

/* The last packet is often short (the message's remainder) and follows the
 * flow's previous, full packet closely: a switch port still sending that
 * one holds it (docs/model.md, "Store and forward"). With g = how much
 * later the last packet than the packet before it on the same link
 * finishes a hop (times in s), S = (P + H) / C and T = last / C the two
 * packets' serialization on a link: g = spacing - S + T at the source's
 * level, then at each later hop the last packet waits max(0, S - g) and
 * leaves with g = max(g - S, 0) + T. The first hop that holds it resets g
 * to T, so the total wait falls one for one with the spacing (or a pause
 * before the last packet): it is max(0, Z - spacing - pause), and this
 * returns the reach Z = s0 + wait(s0) at the flow's closest spacing
 * s0 = (P + H) / r_max (0: it never waits). A route's levels (runs of
 * entries whose weights sum to 1) average their links by weight, each
 * link's packets every s0 / w: exact on one path. */
static double tail_reach(const fs_transport *tp, const double *cap_Bps, const int32_t *links,
                         const double *w, int32_t n, double payload, double rmax) {
  /* one packet (none ahead of it) or whole packets (never caught up) */
  if (!fs__transport_last_short(tp, payload) || !(rmax < INFINITY)) return 0;
  double full = tp->mss_bytes + tp->header_bytes, last = fs__transport_last_bytes(tp, payload);
  double s0 = full / rmax;
  double g = 0, sp = 0, wait = 0, acc = 0, lg = 0, lsp = 0, lwait = 0;
  int32_t level = 0;
  for (int32_t k = 0; k < n; k++) {
    double cap = cap_Bps[links[k]], wk = w[k];
    if (cap > 0 && wk > 0) {
      double inv = 1 / cap, spk = wk == 1 ? s0 : s0 / wk, S = full * inv, T = last * inv, out;
      if (level == 0) {
        out = spk - S + T;
      } else {
        double gin = g + spk - sp; /* behind the packet before it on this link */
        if (gin >= 0) {
          if (S > gin) lwait += wk * (S - gin);
          out = (gin > S ? gin - S : 0) + T;
        } else { /* it arrives first (another path was faster) */
          out = T - S - (-gin > T ? -gin : T);
        }
      }
      lg += wk * out;
      lsp += wk * spk;
    }
    acc += wk;
    if (acc >= level + 1 - 1e-6 || k == n - 1) { /* the level ends */
      wait += lwait;
      g = lg;
      sp = lsp;
      lg = lsp = lwait = 0;
      level++;
    }
  }
  return wait > 0 ? s0 + wait : 0;
}

double fs__transport_tail_reach_s(const fs_transport *tp, const double *cap_Bps,
                                  const int32_t *links, const double *w, int32_t n,
                                  double payload) {
  double rmax = INFINITY;
  for (int32_t k = 0; k < n; k++) {
    double cap = cap_Bps[links[k]];
    if (cap > 0 && w[k] > 0 && cap < rmax * w[k]) rmax = cap / w[k];
  }
  return tail_reach(tp, cap_Bps, links, w, n, payload, rmax);
}

void fs__transport_fresh(const fs_transport *tp, double payload, fs__tflow *tf) {
  memset(tf, 0, sizeof(*tf));
  tf->payload = payload;
  tf->qlink = -1;
  tf->budget = INFINITY;
  /* a new connection's slow start begins at the initial window */
  tf->cwnd = tp->kind == FS_TRANSPORT_TCP && !tp->persistent && payload > 0
                 ? tp->init_window * (tp->mss_bytes + tp->header_bytes)
                 : INFINITY;
}

void fs__transport_flow(const fs_transport *tp, const fs__simcore *c, fs__flow *f,
                        fs__tflow *tf, double *reach) {
  double P = tp->mss_bytes, H = tp->header_bytes;
  fs__transport_fresh(tp, f->bytes, tf);
  if (reach) *reach = 0;
  if (!(f->bytes > 0)) return;
  double packets = ceil(f->bytes / P), per_byte, store, rmax;
  route_sums(c, f, fs__transport_last_bytes(tp, f->bytes), &per_byte, &store, &rmax);
  if (reach) *reach = tail_reach(tp, c->cap_Bps, f->links, f->w, f->n, f->bytes, rmax);
  f->bytes += packets * H;
  double prop = f->latency_s; /* the route's propagation */
  f->latency_s += store;
  /* a full packet and its ACK per hop for the round trip */
  tf->rtt_s = 2 * prop + (P + 2 * H) * per_byte;
  if (tp->kind != FS_TRANSPORT_TCP) return;
  /* RFC 7323, 2.2: the window field of a SYN is never scaled, so the first
   * flight is at most 65535 bytes, in whole segments (no sender sends a
   * runt while data waits, RFC 1122 4.2.3.4) unless the message fits */
  double payload = f->bytes - packets * H;
  double rwnd_segs = floor(65535.0 / P);
  double first_segs = tp->init_window < rwnd_segs ? tp->init_window : rwnd_segs;
  double fits = tp->init_window * P < 65535.0 ? tp->init_window * P : 65535.0;
  tf->small = payload <= fits;
  if (tp->persistent) return;
  /* SYN and SYN-ACK: a round trip of packets of a header and their
   * options (fs__pktnet_syn_bytes); the data follow the handshake's last
   * packet, a bare ACK, out of the source */
  tf->handshake_s = 2 * prop + 2 * fs__pktnet_syn_bytes(H) * per_byte;
  if (f->n > 0 && c->cap_Bps[f->links[0]] > 0)
    tf->handshake_s += H * f->w[0] / c->cap_Bps[f->links[0]];
  tf->bdp = rmax * tf->rtt_s;
  tf->first = tf->small ? INFINITY : (first_segs < 1 ? 1 : first_segs) * (P + H);
}

/* "dcqcn": {...}, DCQCN's settings (fs_dcqcn), each optional. */
static int dcqcn_json(const fs__jctx *c, const cJSON *t, fs_dcqcn *d) {
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(t, "dcqcn");
  if (!o) return 0;
  const char *P = "$.transport.dcqcn";
  static const char *const keys[] = {"kmin_kb", "kmax_kb", "pmax",     "g",        "alpha_us",
                                     "dec_us",  "inc_us",  "f",        "ai_mbps",  "hai_mbps",
                                     "min_mbps", NULL};
  double f = d->f;
  int rc = fs__json_expect_object(c, o, P, keys);
  if (rc || (rc = fs__json_num(c, o, P, "kmin_kb", 0, d->kmin_kb, 0, 1e9, &d->kmin_kb)) ||
      (rc = fs__json_num(c, o, P, "kmax_kb", 0, d->kmax_kb, 1e-9, 1e9, &d->kmax_kb)) ||
      (rc = fs__json_num(c, o, P, "pmax", 0, d->pmax, 1e-9, 1, &d->pmax)) ||
      (rc = fs__json_num(c, o, P, "g", 0, d->g, 1e-9, 1, &d->g)) ||
      (rc = fs__json_num(c, o, P, "alpha_us", 0, d->alpha_us, 1e-3, 1e6, &d->alpha_us)) ||
      (rc = fs__json_num(c, o, P, "dec_us", 0, d->dec_us, 1e-3, 1e6, &d->dec_us)) ||
      (rc = fs__json_num(c, o, P, "inc_us", 0, d->inc_us, 1e-3, 1e6, &d->inc_us)) ||
      (rc = fs__json_num(c, o, P, "f", 0, f, 0, 1000, &f)) ||
      (rc = fs__json_num(c, o, P, "ai_mbps", 0, d->ai_mbps, 0, 1e9, &d->ai_mbps)) ||
      (rc = fs__json_num(c, o, P, "hai_mbps", 0, d->hai_mbps, 0, 1e9, &d->hai_mbps)) ||
      (rc = fs__json_num(c, o, P, "min_mbps", 0, d->min_mbps, 1e-3, 1e9, &d->min_mbps)))
    return rc;
  if (f != floor(f))
    return fs__json_fail(c, "$.transport.dcqcn.f", cJSON_GetObjectItemCaseSensitive(o, "f"),
                         "must be a whole number of stages");
  d->f = (int)f;
  if (!(d->kmax_kb > d->kmin_kb))
    return fs__json_fail(c, "$.transport.dcqcn.kmax_kb",
                         cJSON_GetObjectItemCaseSensitive(o, "kmax_kb"), "must be above kmin_kb");
  return 0;
}

int fs_transport_from_json(const struct cJSON *root, const char *file, fs_transport *out,
                           fs_err *err) {
  fs__jctx cx = {file, err}, *c = &cx;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "transport");
  fs_transport_defaults(FS_TRANSPORT_FLUID, out);
  if (!t) return 0;
  const char *P = "$.transport";
  const char *kind = NULL;
  if (cJSON_IsString(t)) {
    kind = t->valuestring;
  } else {
    static const char *const keys[] = {"kind",       "connections", "mss_bytes",    "header_bytes",
                                       "init_window", "efficiency", "queue_k",
                                       "source_queue", "rate_control", "dcqcn",
                                       "packet_bytes", NULL};
    int rc = fs__json_expect_object(c, t, P, keys);
    if (rc || (rc = fs__json_str(c, t, P, "kind", 1, NULL, &kind))) return rc;
  }
  fs_transport_kind k;
  if (fs_transport_kind_parse(kind, &k))
    return fs__json_fail(c, cJSON_IsString(t) ? P : "$.transport.kind",
                         cJSON_IsString(t) ? t : cJSON_GetObjectItemCaseSensitive(t, "kind"),
                         "unknown transport (expected fluid, tcp or rdma)");
  fs_transport_defaults(k, out);
  if (cJSON_IsString(t)) return 0;
  const char *conn, *srcq, *ratec;
  int rc;
  if ((rc = fs__json_str(c, t, P, "connections", 0, out->persistent ? "persistent" : "new",
                         &conn)) ||
      (rc = fs__json_num(c, t, P, "mss_bytes", 0, out->mss_bytes, 1, 1e9, &out->mss_bytes)) ||
      (rc = fs__json_num(c, t, P, "header_bytes", 0, out->header_bytes, 0, 1e9,
                         &out->header_bytes)) ||
      (rc = fs__json_num(c, t, P, "init_window", 0, out->init_window, 1, 1e9,
                         &out->init_window)) ||
      (rc = fs__json_num(c, t, P, "efficiency", 0, out->efficiency, 1e-9, 1, &out->efficiency)) ||
      (rc = fs__json_num(c, t, P, "queue_k", 0, out->queue_k, 0, 1e9, &out->queue_k)) ||
      (rc = fs__json_str(c, t, P, "source_queue", 0, out->source_fq ? "fq" : "none", &srcq)) ||
      (rc = fs__json_str(c, t, P, "rate_control", 0, "ideal", &ratec)) ||
      (rc = fs__json_num(c, t, P, "packet_bytes", 0, out->packet_bytes, 0, 1e15,
                         &out->packet_bytes)) ||
      (rc = dcqcn_json(c, t, &out->dcqcn_prm)))
    return rc;
  if (strcmp(ratec, "dcqcn") != 0 && strcmp(ratec, "dctcp") != 0 && strcmp(ratec, "ideal") != 0)
    return fs__json_fail(c, "$.transport.rate_control",
                         cJSON_GetObjectItemCaseSensitive(t, "rate_control"),
                         "must be \"dcqcn\" (rdma), \"dctcp\" (tcp) or \"ideal\"");
  if (strcmp(srcq, "fq") == 0 || strcmp(srcq, "none") == 0) {
    out->source_fq = srcq[0] == 'f';
  } else {
    return fs__json_fail(c, "$.transport.source_queue",
                         cJSON_GetObjectItemCaseSensitive(t, "source_queue"),
                         "must be \"fq\" or \"none\"");
  }
  if (strcmp(conn, "new") == 0 || strcmp(conn, "persistent") == 0) {
    out->persistent = conn[0] == 'p';
  } else {
    return fs__json_fail(c, "$.transport.connections",
                         cJSON_GetObjectItemCaseSensitive(t, "connections"),
                         "must be \"new\" or \"persistent\"");
  }
  unsigned given = 0;
  for (int key = FS_TK_KIND; key <= FS_TK_PACKET_BYTES; key++)
    if (cJSON_GetObjectItemCaseSensitive(t, key_names[key])) given |= 1u << key;
  fs_transport_key bad;
  fs_err why = {0, ""};
  if (fs_transport_combine(out, ratec, given, &bad, &why)) {
    char path[64];
    fs__json_path_key(path, sizeof(path), P, key_names[bad]);
    return fs__json_fail(c, path, cJSON_GetObjectItemCaseSensitive(t, key_names[bad]), "%s",
                         why.msg);
  }
  return 0;
}
