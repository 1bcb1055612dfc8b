/* Ranks and placement: a GPU's coordinates in Megatron's rank order, and
 * which topology host each GPU is (work.h; docs/model-work.md draws both).
 * Servers are gpus_per_node consecutive GPUs; the placement decides which
 * hosts a server's GPUs are. O(hosts) to find the leaves, O(GPUs) to map. */
#include <stdio.h>

#include "fabricsim/work.h"
#include "internal.h"

/* Megatron-Core's order (parallel_state.py, order "tp-cp-ep-dp-pp" with ep
 * folded into dp): tp fastest, then cp, dp, pp. */
void fs_job_coords(const fs_job *job, int32_t gpu, fs_rank_coords *out) {
  int64_t t = job->par.tp, c = job->par.cp, d = job->par.dp;
  out->tp = (int32_t)(gpu % t);
  out->cp = (int32_t)(gpu / t % c);
  out->dp = (int32_t)(gpu / (t * c) % d);
  out->pp = (int32_t)(gpu / (t * c * d));
  out->ep = (int32_t)(out->dp % job->par.ep);
  out->edp = (int32_t)(out->dp / job->par.ep);
}

int32_t fs_job_gpu_of(const fs_job *job, const fs_rank_coords *c) {
  const fs_parallel *p = &job->par;
  return (int32_t)(c->tp + p->tp * (c->cp + p->cp * (c->dp + p->dp * (int64_t)c->pp)));
}

static int is_scaleup(fs_node_kind k) {
  return k != FS_NODE_HOST && k != FS_NODE_SWITCH && k != FS_NODE_NIC && k != FS_NODE_OCS &&
         k != FS_NODE_WAN;
}

/* The first switch among v's neighbours, -1 if none. */
static int32_t switch_next_to(const fs_topo *t, int32_t v) {
  for (int32_t e = t->out_start[v]; e < t->out_start[v + 1]; e++) {
    int32_t w = t->links[t->out_links[e]].to;
    if (t->nodes[w].kind == FS_NODE_SWITCH) return w;
  }
  return -1;
}

int32_t fs__work_leaf(const fs_topo *t, int32_t h) {
  int32_t sw = switch_next_to(t, h);
  if (sw >= 0) return sw;
  for (int32_t e = t->out_start[h]; e < t->out_start[h + 1]; e++) {
    int32_t w = t->links[t->out_links[e]].to;
    if (t->nodes[w].kind == FS_NODE_NIC && (sw = switch_next_to(t, w)) >= 0) return sw;
  }
  return -1;
}

static double switch_gbps(const fs_topo *t, int32_t v) {
  double bps = 0;
  for (int32_t e = t->out_start[v]; e < t->out_start[v + 1]; e++) {
    const fs_link *l = &t->links[t->out_links[e]];
    if (t->nodes[l->to].kind == FS_NODE_SWITCH) bps += l->capacity_bps;
  }
  return bps / 1e9;
}

double fs__work_fabric_gbps(const fs_topo *t, int32_t h) {
  double gbps = switch_gbps(t, h);
  for (int32_t e = t->out_start[h]; e < t->out_start[h + 1]; e++) {
    int32_t w = t->links[t->out_links[e]].to;
    if (t->nodes[w].kind == FS_NODE_NIC) gbps += switch_gbps(t, w);
  }
  if (gbps > 0) return gbps;
  /* a direct-connect fabric (awgr, fullmesh): no switch, the host's port is
   * split over its links to the other hosts */
  for (int32_t e = t->out_start[h]; e < t->out_start[h + 1]; e++) {
    const fs_link *l = &t->links[t->out_links[e]];
    if (t->nodes[l->to].kind == FS_NODE_HOST) gbps += l->capacity_bps / 1e9;
  }
  return gbps;
}

void fs__work_scale_scaleup(fs_topo *t, double eff) {
  for (int32_t e = 0; e < t->n_links; e++) {
    fs_link *l = &t->links[e];
    fs_node_kind a = t->nodes[l->from].kind, b = t->nodes[l->to].kind;
    if ((a == FS_NODE_HOST && is_scaleup(b)) || (b == FS_NODE_HOST && is_scaleup(a)))
      l->capacity_bps *= eff;
  }
}

int32_t fs__work_server_gpus(const fs_topo *t, double *gbps) {
  *gbps = 0;
  if (t->n_hosts == 0) return 1;
  int32_t up = -1;
  for (int32_t e = t->out_start[0]; e < t->out_start[1] && up < 0; e++) {
    const fs_link *l = &t->links[t->out_links[e]];
    if (is_scaleup(t->nodes[l->to].kind)) {
      up = l->to;
      *gbps = l->capacity_bps / 1e9;
    }
  }
  if (up < 0) return 1;
  int32_t n = 0;
  for (int32_t e = t->out_start[up]; e < t->out_start[up + 1]; e++)
    if (t->nodes[t->links[t->out_links[e]].to].kind == FS_NODE_HOST) n++;
  return n;
}

static int place_fail(const fs_job *job, fs_err *err, const char *what) {
  return fs_err_set(err, FS_EINVAL, "%s: $.placement: %s, got \"%s\"", job->file, what,
                    fs_placement_name(job->placement));
}

/* Rail-aligned: the topology's hosts come in runs of H under one leaf
 * (leaf-major numbering); G = gpus_per_node consecutive leaves form a rail
 * group serving H servers, local GPU l of a server on the group's l-th leaf
 * (rail l). Server s = qH + j, GPU l -> host ((q G + l) H + j). A topology
 * with a single leaf has no rails: GPUs keep their numbers. */
static int rail_aligned(const fs_job *job, int32_t *host_of_gpu, fs_err *err) {
  const fs_topo *t = job->topo;
  int32_t n = t->n_hosts, leaf0 = fs__work_leaf(t, 0), H = 0;
  while (H < n && fs__work_leaf(t, H) == leaf0) H++;
  for (int32_t h = H; h < n; h++) {
    int32_t leaf = fs__work_leaf(t, h), first = fs__work_leaf(t, h - h % H);
    if (leaf != first || (h % H == 0 && leaf == fs__work_leaf(t, h - 1)))
      return place_fail(job, err,
                        "rail alignment needs every leaf switch to serve the same number of "
                        "consecutive hosts; use \"packed\"");
  }
  int64_t G = job->hw.gpus_per_node, gpus = fs_job_gpus(job), off = job->gpu_offset;
  if (H == n) {
    for (int64_t g = 0; host_of_gpu && g < gpus; g++) host_of_gpu[g] = (int32_t)(off + g);
    return 0;
  }
  if (n % (G * H)) {
    char what[256];
    snprintf(what, sizeof(what),
             "rail alignment needs the topology's %d leaves of %d hosts to form groups of "
             "gpus_per_node (%lld) leaves; use \"packed\"",
             n / H, H, (long long)G);
    return place_fail(job, err, what);
  }
  for (int64_t g = 0; host_of_gpu && g < gpus; g++) {
    int64_t s = (off + g) / G, l = (off + g) % G, q = s / H, j = s % H;
    host_of_gpu[g] = (int32_t)((q * G + l) * H + j);
  }
  return 0;
}

/* A topology that models servers fixes which GPUs share one: the job's
 * servers are its servers, GPU g is host g. Rail alignment is then the
 * wiring's: every GPU of a server must reach the fabric through its own
 * leaf. */
static int server_topology(const fs_job *job, int32_t *host_of_gpu, fs_err *err) {
  const fs_topo *t = job->topo;
  int64_t G = job->hw.gpus_per_node;
  if (job->placement == FS_PLACE_RAIL_ALIGNED)
    for (int32_t h = 0; h < t->n_hosts; h++)
      for (int32_t o = (int32_t)(h - h % G); o < h; o++)
        if (fs__work_leaf(t, o) == fs__work_leaf(t, h)) {
          char what[256];
          snprintf(what, sizeof(what),
                   "the topology wires GPUs %d and %d of server %lld to the same leaf "
                   "switch, so there are no rails to align with; use \"packed\"",
                   o, h, (long long)(h / G));
          return place_fail(job, err, what);
        }
  for (int64_t g = 0; host_of_gpu && g < fs_job_gpus(job); g++)
    host_of_gpu[g] = (int32_t)(job->gpu_offset + g);
  return 0;
}

int fs_job_place(const fs_job *job, int32_t *host_of_gpu, fs_err *err) {
  if (!job->topo)
    return fs_err_set(err, FS_EINVAL, "%s: $.topology: a job needs one to be placed", job->file);
  if (fs_job_gpus(job) + job->gpu_offset > job->topo->n_hosts)
    return fs_err_set(err, FS_EINVAL, "%s: $.parallelism.dp: %lld GPUs%s exceed the topology's %d hosts",
                      job->file, (long long)fs_job_gpus(job),
                      job->gpu_offset ? " after the cluster's earlier jobs" : "",
                      job->topo->n_hosts);
  double gbps;
  if (fs__work_server_gpus(job->topo, &gbps) > 1) return server_topology(job, host_of_gpu, err);
  if (job->placement == FS_PLACE_RAIL_ALIGNED) return rail_aligned(job, host_of_gpu, err);
  /* Packed: a server's GPUs are consecutive hosts, under one leaf when
   * gpus_per_node divides the hosts per leaf. */
  for (int64_t g = 0; host_of_gpu && g < fs_job_gpus(job); g++)
    host_of_gpu[g] = (int32_t)(job->gpu_offset + g);
  return 0;
}
