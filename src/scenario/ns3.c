/* The ns-3 validation backend (fabricsim/ns3.h): the exchange file writer,
 * the result reader and the runner of the packet-level program.
 *
 * The exchange file is a line format (docs/formats.md, "The ns-3 exchange
 * file") so that the C++ program needs no JSON library: every node, every
 * directed link (with its reverse, the other direction of its cable), every
 * flow with the path fabricsim routed it on (nodes and links: a node list
 * alone is ambiguous over parallel cables), every task and every
 * dependency. Writing is O(nodes + links + route entries + deps); reading
 * O(items) plus, for the links' busy times, O(E log E) over the E route
 * entries (the intervals of the flows on each link, sorted and merged).
 * Expected sizes are those of a packet-level run: <= ~64 hosts, 10^4 flows. */
#include "fabricsim/ns3.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/base.h"
#include "internal.h"

static const char *kind_name(fs_node_kind k) {
  switch (k) {
  case FS_NODE_HOST: return "host";
  case FS_NODE_SWITCH: return "switch";
  case FS_NODE_NIC: return "nic";
  case FS_NODE_OCS: return "ocs";
  case FS_NODE_WAN: return "wan";
  case FS_NODE_SCALEUP: return "scaleup";
  }
  return "switch";
}

/* Whole payload bytes a packet, at most the MTU of 9000 (+ PPP 2) with
 * the headers; `what` names the packets and their payload in the message. */
static int packet_fits(const fs_scenario *sc, const char *what, fs_err *err) {
  const fs_transport *tp = &sc->transport;
  if (tp->mss_bytes != floor(tp->mss_bytes) || tp->mss_bytes + tp->header_bytes > 9002)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.transport.mss_bytes: the ns-3 backend's %s + headers at most 9002 "
                      "(MTU 9000 + PPP 2), got %g",
                      sc->file, what, tp->mss_bytes);
  return 0;
}

int fs__scenario_single_path_check(const fs_scenario *sc, const char *backend, fs_err *err) {
  if (sc->optimized)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.routing.mode: %s has no routing control "
                      "(it pins each flow to one path), got \"optimized\"",
                      sc->file, backend);
  if (sc->n_failures > 0)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.failures: %s has no routing control, got %d failed cable(s)",
                      sc->file, backend, sc->n_failures);
  if (sc->mode == FS_ROUTE_SPRAY)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.routing.mode: %s pins each flow to one path; "
                      "use shortest, ecmp or explicit, got \"spray\"",
                      sc->file, backend);
  return 0;
}

int fs__scenario_flow_single_path(const fs_scenario *sc, int32_t i, const char *backend,
                                  fs_err *err) {
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(sc->sim, i, &links, &w, &n);
  int single = n > 0 && sc->flows[i].n_paths == 1;
  for (int32_t k = 0; k < n && single; k++) single = w[k] == 1.0;
  if (!single)
    return fs_err_set(err, FS_EINVAL,
                      "%s: $.flows[%d]: %s pins each flow to one path, but this one is routed "
                      "over %.15g paths (mode %s)",
                      sc->file, i, backend, sc->flows[i].n_paths, fs_route_mode_name(sc->mode));
  return 0;
}

int fs_ns3_check(const fs_scenario *sc, fs_err *err) {
  int rc = fs__scenario_single_path_check(sc, "the ns-3 backend", err);
  if (rc) return rc;
  /* Its packets are DCTCP on a new or a warm persistent connection a flow,
   * or RoCEv2 with DCQCN on persistent queue pairs: a run it would not be
   * the reference of is refused, not answered with another. */
  const fs_transport *tp = &sc->transport;
  if (tp->kind == FS_TRANSPORT_RDMA) {
    /* ns-3 itself adds PPP 2, IPv4 20 and UDP 8 bytes; the packets are at
     * most the MTU of 9000 (+ PPP) */
    if (tp->header_bytes != floor(tp->header_bytes) || tp->header_bytes < 30)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.transport.header_bytes: the ns-3 backend's RoCE packets carry "
                        "whole bytes, at least 30 of headers (PPP 2, IPv4 20, UDP 8), got %g",
                        sc->file, tp->header_bytes);
    return packet_fits(sc, "RoCE packets carry whole bytes, payload", err);
  } else if (tp->kind == FS_TRANSPORT_TCP) {
    /* ns-3's TCP packets: PPP 2, IPv4 20, TCP 20 bytes of headers, and 12
     * more with the timestamp option; whole segments and windows */
    if (tp->header_bytes != 42 && tp->header_bytes != 54)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.transport.header_bytes: the ns-3 backend's TCP packets carry 42 "
                        "bytes of headers (PPP 2, IPv4 20, TCP 20) or 54 (with timestamps), got %g",
                        sc->file, tp->header_bytes);
    rc = packet_fits(sc, "TCP segments are whole bytes, segment", err);
    if (rc) return rc;
    if (tp->init_window != floor(tp->init_window) || tp->init_window > 1e6)
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.transport.init_window: the ns-3 backend's initial window is a "
                        "whole number of segments (at most 1e6), got %g",
                        sc->file, tp->init_window);
    if (!(tp->queue_k > 0))
      return fs_err_set(err, FS_EINVAL,
                        "%s: $.transport.queue_k: the ns-3 backend's switch ports mark ECN at K > 0 "
                        "packets (0, the model's switch queues off, has no packet-level "
                        "counterpart), got %g",
                        sc->file, tp->queue_k);
  }
  return 0;
}

int fs_ns3_write(FILE *f, const fs_scenario *sc, fs_err *err) {
  const fs_topo *t = sc->topo;
  const fs_sim *s = sc->sim;
  /* Check every route first, so nothing is written for a refused scenario. */
  for (int32_t i = 0; i < sc->n_flows; i++) {
    int rc = fs__scenario_flow_single_path(sc, i, "the ns-3 backend", err);
    if (rc) return rc;
  }
  fprintf(f, "fabricsim-ns3 1\n");
  if (sc->transport.kind == FS_TRANSPORT_RDMA) {
    fprintf(f, "transport rdma %.0f %.0f\n", sc->transport.mss_bytes, sc->transport.header_bytes);
    /* DCQCN's settings when the scenario changed them (the program's own
     * defaults, and its --dcqcn-* options, are the others) */
    fs_transport def;
    fs_transport_defaults(FS_TRANSPORT_RDMA, &def);
    const fs_dcqcn *d = &sc->transport.dcqcn_prm;
    const fs_dcqcn *e = &def.dcqcn_prm;
    if (d->kmin_kb != e->kmin_kb || d->kmax_kb != e->kmax_kb || d->pmax != e->pmax ||
        d->g != e->g || d->alpha_us != e->alpha_us || d->dec_us != e->dec_us ||
        d->inc_us != e->inc_us || d->f != e->f || d->ai_mbps != e->ai_mbps ||
        d->hai_mbps != e->hai_mbps || d->min_mbps != e->min_mbps)
      fprintf(f, "dcqcn %.17g %.17g %.17g %.17g %.17g %.17g %.17g %d %.17g %.17g %.17g\n",
              d->kmin_kb, d->kmax_kb, d->pmax, d->g, d->alpha_us, d->dec_us, d->inc_us, d->f,
              d->ai_mbps, d->hai_mbps, d->min_mbps);
  }
  else if (sc->transport.kind == FS_TRANSPORT_TCP) {
    const fs_transport *tp = &sc->transport;
    if (tp->persistent) fprintf(f, "transport tcp persistent\n");
    /* its packets, initial window and DCTCP's K, as the model's */
    fprintf(f, "tcp %.0f %.0f %.0f %.17g\n", tp->mss_bytes, tp->header_bytes, tp->init_window,
            tp->queue_k);
  }
  fprintf(f, "nodes %d\n", t->n_nodes);
  for (int32_t v = 0; v < t->n_nodes; v++) fprintf(f, "node %d %s\n", v, kind_name(t->nodes[v].kind));
  for (int32_t l = 0; l < t->n_links; l++) {
    const fs_link *k = &t->links[l];
    fprintf(f, "link %d %d %d %.0f %lld %d\n", l, k->from, k->to, k->capacity_bps,
            (long long)k->latency_ns, k->reverse);
  }
  for (int32_t i = 0; i < sc->n_flows; i++) {
    const fs_scenario_flow *fl = &sc->flows[i];
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(s, i, &links, &w, &n);
    fprintf(f, "flow %d %d %d %.0f %lld %d %d", i, fl->src, fl->dst, fl->bytes,
            (long long)fl->start_ns, n, t->links[links[0]].from);
    for (int32_t k = 0; k < n; k++) fprintf(f, " %d", t->links[links[k]].to);
    for (int32_t k = 0; k < n; k++) fprintf(f, " %d", links[k]);
    fputc('\n', f);
  }
  for (int32_t j = 0; j < sc->n_tasks; j++) {
    const fs_scenario_task *tk = &sc->tasks[j];
    fprintf(f, "task %d %d %lld %lld\n", sc->n_flows + j, tk->host, (long long)tk->start_ns,
            (long long)tk->duration_ns);
  }
  int64_t nd = fs_sim_n_deps(s);
  for (int64_t d = 0; d < nd; d++) {
    int32_t a, b;
    int sent;
    fs_sim_dep(s, d, &a, &b, &sent);
    fprintf(f, "dep %d %d %s\n", a, b, sent ? "sent" : "done");
  }
  fprintf(f, "end\n");
  return ferror(f) ? fs_err_set(err, FS_EIO, "writing the ns-3 exchange file failed") : 0;
}

/* One result line's numbers: "KW a b c" with `want` integers after KW. */
static int scan_ints(const char *p, int want, long long *v) {
  for (int k = 0; k < want; k++) {
    char *end;
    errno = 0;
    while (*p == ' ') p++;
    if (*p == '\0' || *p == '\n') return -1;
    v[k] = strtoll(p, &end, 10);
    if (errno || end == p || (*end != ' ' && *end != '\n' && *end != '\0')) return -1;
    p = end;
  }
  while (*p == ' ') p++;
  return *p == '\0' || *p == '\n' ? 0 : -1;
}

typedef struct interval {
  double a, b;
} interval;

static int cmp_interval(const void *x, const void *y) {
  const interval *p = x, *q = y;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  return p->b < q->b ? -1 : p->b > q->b;
}

/* Busy time of each link: the union of [start, finish] of its flows. */
int fs__scenario_busy_times(const fs_scenario *sc, const double *st, const double *fin,
                            double *busy) {
  const fs_topo *t = sc->topo;
  size_t *off = calloc((size_t)t->n_links + 1, sizeof(*off));
  if (!off) return FS_ENOMEM;
  for (int32_t i = 0; i < sc->n_flows; i++) {
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(sc->sim, i, &links, &w, &n);
    for (int32_t k = 0; k < n; k++) off[links[k] + 1]++;
  }
  for (int32_t l = 0; l < t->n_links; l++) off[l + 1] += off[l];
  interval *iv = fs__malloc(off[t->n_links] + 1, sizeof(*iv));
  size_t *fill = fs__malloc((size_t)t->n_links + 1, sizeof(*fill));
  if (!iv || !fill) {
    FS__FREE_ALL(off, iv, fill);
    return FS_ENOMEM;
  }
  memcpy(fill, off, (size_t)t->n_links * sizeof(*fill));
  for (int32_t i = 0; i < sc->n_flows; i++) {
    const int32_t *links;
    const double *w;
    int32_t n;
    fs_sim_flow_route(sc->sim, i, &links, &w, &n);
    for (int32_t k = 0; k < n; k++) iv[fill[links[k]]++] = (interval){st[i], fin[i]};
  }
  for (int32_t l = 0; l < t->n_links; l++) {
    size_t n = off[l + 1] - off[l];
    interval *x = iv + off[l];
    qsort(x, n, sizeof(*x), cmp_interval);
    double sum = 0, a = 0, b = -1;
    for (size_t k = 0; k < n; k++) {
      if (x[k].a > b) {
        if (b >= a) sum += b - a;
        a = x[k].a;
        b = x[k].b;
      } else if (x[k].b > b) {
        b = x[k].b;
      }
    }
    if (n && b >= a) sum += b - a;
    busy[l] = sum;
  }
  FS__FREE_ALL(off, iv, fill);
  return 0;
}

int fs_ns3_read(const char *text, size_t len, const char *file, fs_scenario *sc, fs_err *err) {
  int32_t n = fs_sim_n_items(sc->sim);
  double *st = fs__malloc((size_t)n + 1, sizeof(double));
  double *fin = fs__malloc((size_t)n + 1, sizeof(double));
  double *busy = fs__malloc((size_t)sc->topo->n_links + 1, sizeof(double));
  uint8_t *seen = calloc((size_t)n + 1, 1);
  int rc = 0;
  if (!st || !fin || !busy || !seen) {
    rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory", file);
    goto done;
  }
  int line = 0, header = 0, end = 0;
  int32_t n_seen = 0;
  for (const char *p = text; p < text + len && *p;) {
    const char *eol = memchr(p, '\n', (size_t)(text + len - p));
    size_t ll = eol ? (size_t)(eol - p) : strlen(p);
    line++;
    char shown[64];
    snprintf(shown, sizeof(shown), "%.*s", (int)(ll < 60 ? ll : 60), p);
    long long v[3];
    if (ll == 0 || *p == '#') {
      /* blank or comment */
    } else if (end) {
      rc = fs_err_set(err, FS_EINVAL, "%s:%d: text after 'end', got '%s'", file, line, shown);
    } else if (!header) {
      if (strncmp(p, "fabricsim-ns3-result ", 21) != 0 || scan_ints(p + 21, 1, v) || v[0] != 1)
        rc = fs_err_set(err, FS_EINVAL, "%s:%d: expected 'fabricsim-ns3-result 1', got '%s'",
                        file, line, shown);
      header = 1;
    } else if (strncmp(p, "item ", 5) == 0) {
      if (scan_ints(p + 5, 3, v) || v[0] < 0 || v[0] >= n || v[1] < 0 || v[2] < v[1])
        rc = fs_err_set(err, FS_EINVAL,
                        "%s:%d: must be 'item I START_NS FINISH_NS' with I in [0, %d] and "
                        "0 <= START_NS <= FINISH_NS, got '%s'",
                        file, line, n - 1, shown);
      else if (seen[v[0]])
        rc = fs_err_set(err, FS_EINVAL, "%s:%d: item %lld listed twice", file, line, v[0]);
      else {
        seen[v[0]] = 1;
        n_seen++;
        st[v[0]] = (double)v[1] * 1e-9;
        fin[v[0]] = (double)v[2] * 1e-9;
      }
    } else if (strncmp(p, "makespan ", 9) == 0) {
      if (scan_ints(p + 9, 1, v) || v[0] < 0)
        rc = fs_err_set(err, FS_EINVAL, "%s:%d: must be 'makespan NS', got '%s'", file, line, shown);
    } else if (ll == 3 && strncmp(p, "end", 3) == 0) {
      end = 1;
    } else {
      rc = fs_err_set(err, FS_EINVAL, "%s:%d: unknown line '%s'", file, line, shown);
    }
    if (rc) goto done;
    p = eol ? eol + 1 : p + ll;
  }
  if (!header || !end) {
    rc = fs_err_set(err, FS_EINVAL, "%s: truncated: %s", file,
                    header ? "no 'end' line" : "no 'fabricsim-ns3-result 1' header");
    goto done;
  }
  if (n_seen != n) {
    int32_t i = 0;
    while (seen[i]) i++;
    rc = fs_err_set(err, FS_EINVAL, "%s: item %d (of %d) has no times", file, i, n);
    goto done;
  }
  if (fs__scenario_busy_times(sc, st, fin, busy)) {
    rc = fs_err_set(err, FS_ENOMEM, "%s: out of memory", file);
    goto done;
  }
  rc = fs_sim_replace_times(sc->sim, st, fin, busy, err);
done:
  FS__FREE_ALL(st, fin, busy, seen);
  return rc;
}

/* A temporary file "DIR/fabricsim-ns3-XXXXXX" (open, the caller closes and
 * removes it); -1 on failure. */
static int temp_file(char *path, size_t cap) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  if (snprintf(path, cap, "%s/fabricsim-ns3-XXXXXX", dir) >= (int)cap) return -1;
  return mkstemp(path);
}

static int spawn(const char *program, const char *in, const char *out, int *status) {
  char a_in[4200], a_out[4200];
  snprintf(a_in, sizeof(a_in), "--in=%s", in);
  snprintf(a_out, sizeof(a_out), "--out=%s", out);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    /* The child's chatter must not mix with the results on stdout. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    char *const argv[] = {(char *)program, a_in, a_out, NULL};
    execv(program, argv);
    _exit(127);
  }
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR) return -1;
  return 0;
}

int fs_ns3_run(fs_scenario *sc, const char *program, fs_err *err) {
  if (access(program, X_OK) != 0)
    return fs_err_set(err, FS_EINVAL,
                      "--backend ns3: the ns-3 program '%s' is missing: run 'make ns3' (needs "
                      "libns3-dev, which scripts/install-deps.sh installs) or set FABRICSIM_NS3",
                      program);
  char in[4096], out[4096];
  int fd_in = temp_file(in, sizeof(in));
  if (fd_in < 0) return fs_err_set(err, FS_EIO, "cannot create a temporary file: %s", strerror(errno));
  int fd_out = temp_file(out, sizeof(out));
  if (fd_out < 0) {
    int e = errno;
    close(fd_in);
    remove(in);
    return fs_err_set(err, FS_EIO, "cannot create a temporary file: %s", strerror(e));
  }
  close(fd_out);
  int rc = 0;
  FILE *f = fdopen(fd_in, "w");
  if (!f) {
    close(fd_in);
    rc = fs_err_set(err, FS_EIO, "%s: cannot write: %s", in, strerror(errno));
    goto cleanup;
  }
  rc = fs_ns3_write(f, sc, err);
  if (fclose(f) != 0 && !rc) rc = fs_err_set(err, FS_EIO, "%s: cannot write", in);
  if (rc) goto cleanup;
  int status = 0;
  if (spawn(program, in, out, &status)) {
    rc = fs_err_set(err, FS_EIO, "cannot run '%s': %s", program, strerror(errno));
    goto cleanup;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 2)
      rc = fs_err_set(err, FS_EINVAL, "%s: %s refused the scenario (exit 2, see its message above)",
                      sc->file, program);
    else if (code == 127)
      rc = fs_err_set(err, FS_EINVAL, "cannot execute '%s'", program);
    else
      rc = fs_err_set(err, FS_EIO, "%s: %s failed (%s %d)", sc->file, program,
                      WIFEXITED(status) ? "exit status" : "signal",
                      WIFEXITED(status) ? code : WTERMSIG(status));
    goto cleanup;
  }
  char *text = NULL;
  size_t len = 0;
  if ((rc = fs__read_file(out, &text, &len, err)) == 0) {
    rc = fs_ns3_read(text, len, out, sc, err);
    free(text);
  }
cleanup:
  remove(in);
  remove(out);
  return rc;
}
