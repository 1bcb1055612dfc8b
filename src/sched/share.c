/* What a running job puts on the fabric and what it gets back
 * (docs/model-sched.md, "Contention"): each distinct job timed once alone
 * by the training engine; its traffic between servers laid on the links
 * from where it is placed; the links shared by weighted max-min
 * (progressive filling) of the jobs' communication speeds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "internal.h"

int fs__sched_profile(const fs_job *job, fs__sched_prof *out, fs_err *err) {
  memset(out, 0, sizeof(*out));
  fs_train_opts o;
  memset(&o, 0, sizeof(o));
  o.no_compare = 1; /* the isolated-TP comparison is not needed here */
  fs_train *tr = NULL;
  fs_train_result r;
  int rc = fs_train_new(job, &o, &tr, err);
  if (!rc) rc = fs_train_run(tr, &r, err);
  fs_train_free(tr);
  if (rc) return rc;
  out->iter_s = r.iter_s;
  /* Only traffic between servers meets other jobs (a job has its servers,
   * or its part of one, to itself); tp never leaves a server (work.h). */
  if (fs_job_gpus(job) > job->hw.gpus_per_node) {
    double m = r.kind[FS_PAR_DP].exposed_s + r.kind[FS_PAR_PP].exposed_s +
               r.kind[FS_PAR_EP].exposed_s + r.kind[FS_PAR_CP].exposed_s;
    out->comm_s = m < r.iter_s ? m : r.iter_s;
  }
  fs_work_comm wc;
  fs_work_comm_stage(job, 0, &wc);
  out->dp_wire = wc.kind[FS_PAR_DP].wire_bytes;
  out->pp_wire = wc.kind[FS_PAR_PP].wire_bytes;
  out->ep_wire = wc.kind[FS_PAR_EP].wire_bytes;
  out->cp_wire = wc.kind[FS_PAR_CP].wire_bytes;
  out->done = 1;
  return 0;
}

/* Adds `bytes` from GPU a to GPU b of the job (if they are on different
 * servers) on the links of its route. */
static int add_pair(const fs_job *job, const int32_t *host_of, int32_t a, int32_t b, double bytes,
                    fs_router *r, uint64_t key, fs_route *rt, double *scratch, int32_t *touched,
                    int32_t *nt, fs_err *err) {
  int64_t G = job->hw.gpus_per_node;
  int32_t ha = host_of[a], hb = host_of[b];
  if (bytes <= 0 || ha / G == hb / G) return 0;
  uint64_t k = fs__mix64(key ^ fs__mix64(((uint64_t)(uint32_t)ha << 32) | (uint32_t)hb));
  int rc = fs_route_by_mode(r, job->mode == FS_ROUTE_EXPLICIT ? FS_ROUTE_ECMP : job->mode, ha, hb,
                            job->seed, k, rt, err);
  if (rc) return rc;
  for (int32_t i = 0; i < rt->n; i++) {
    int32_t l = rt->links[i];
    if (scratch[l] == 0) touched[(*nt)++] = l;
    scratch[l] += bytes * rt->weights[i];
  }
  return 0;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Each GPU sends its ring share to the next rank of its data-parallel and
 * context-parallel rings, its activations to the next pipeline stage (and
 * gets their gradients back) and its all-to-all share to each other rank
 * of its expert group: the bandwidth-optimal patterns whose per-GPU bytes
 * work.h counts. */
int fs__sched_traffic(const fs_job *job, const fs__sched_prof *p, const int32_t *host_of,
                      fs_router *r, uint64_t key, double *scratch, fs__sched_load *out,
                      fs_err *err) {
  memset(out, 0, sizeof(*out));
  int32_t n = (int32_t)fs_job_gpus(job), nt = 0;
  const fs_topo *t = job->topo;
  int32_t *touched = malloc((size_t)t->n_links * sizeof(*touched));
  fs_route rt;
  fs_route_init(&rt);
  if (!touched) return fs_err_set(err, FS_ENOMEM, "out of memory");
  const fs_parallel *P = &job->par;
  int rc = 0;
  for (int32_t g = 0; g < n && !rc; g++) {
    fs_rank_coords c, d;
    fs_job_coords(job, g, &c);
    if (P->dp > 1) {
      d = c;
      d.dp = (int32_t)((c.dp + 1) % P->dp);
      rc = add_pair(job, host_of, g, fs_job_gpu_of(job, &d), p->dp_wire, r, key, &rt, scratch,
                    touched, &nt, err);
    }
    if (!rc && P->cp > 1) {
      d = c;
      d.cp = (int32_t)((c.cp + 1) % P->cp);
      rc = add_pair(job, host_of, g, fs_job_gpu_of(job, &d), p->cp_wire, r, key, &rt, scratch,
                    touched, &nt, err);
    }
    if (!rc && P->pp > 1 && c.pp + 1 < P->pp) {
      /* activations to the next stage, their gradients back: the same
       * bytes each way (stage 0's sends, work.h) */
      d = c;
      d.pp = c.pp + 1;
      int32_t h = fs_job_gpu_of(job, &d);
      rc = add_pair(job, host_of, g, h, p->pp_wire, r, key, &rt, scratch, touched, &nt, err);
      if (!rc)
        rc = add_pair(job, host_of, h, g, p->pp_wire, r, key, &rt, scratch, touched, &nt, err);
    }
    for (int32_t e = 0; !rc && P->ep > 1 && e < P->ep; e++) {
      if (e == c.dp % P->ep) continue;
      d = c;
      d.dp = c.dp - c.dp % (int32_t)P->ep + e;
      rc = add_pair(job, host_of, g, fs_job_gpu_of(job, &d), p->ep_wire / (double)(P->ep - 1), r,
                    key, &rt, scratch, touched, &nt, err);
    }
  }
  fs_route_free(&rt);
  if (!rc && nt) {
    qsort(touched, (size_t)nt, sizeof(*touched), cmp_i32);
    out->links = malloc((size_t)nt * sizeof(*out->links));
    out->bytes = malloc((size_t)nt * sizeof(*out->bytes));
    if (!out->links || !out->bytes) rc = fs_err_set(err, FS_ENOMEM, "out of memory");
    for (int32_t i = 0; i < nt && !rc; i++) {
      out->links[i] = touched[i];
      out->bytes[i] = scratch[touched[i]];
    }
    if (!rc) out->n = nt;
  }
  for (int32_t i = 0; i < nt; i++) scratch[touched[i]] = 0;
  free(touched);
  if (rc) {
    FS__FREE_ALL(out->links, out->bytes);
    memset(out, 0, sizeof(*out));
  }
  return rc;
}

/* Progressive filling: every unfrozen job's speed rises together; the
 * resource whose fair level (capacity left / unfrozen demand) is lowest
 * (the lowest id on a tie) freezes its jobs at that level; a job reaching
 * 1 (its speed alone) stops there. Each level is computed afresh from the
 * resource's own jobs, summed in job order, so a component filled alone
 * gets the very numbers it gets inside a larger fill (the incremental
 * re-rate relies on it). The jobs of each resource are listed once
 * (CSR over the resources in first-seen order, mark[r] = its index + 1). */
int fs__sched_fill(int32_t n, const fs__sched_dem *dl, const double *cap, double *s,
                   fs__sched_fillbuf *b) {
  size_t total = 0;
  for (int32_t j = 0; j < n; j++) {
    s[j] = -1; /* unfrozen */
    total += (size_t)dl[j].n;
  }
  if (fs__grow(&b->start, &b->cap_start, total + 1, sizeof(*b->start)) ||
      fs__grow(&b->res, &b->cap_res, total + 1, sizeof(*b->res)) ||
      fs__grow(&b->live, &b->cap_live, total + 1, sizeof(*b->live)) ||
      fs__grow(&b->jobs, &b->cap_jobs, total + 1, sizeof(*b->jobs)) ||
      fs__grow(&b->touched, &b->cap_touched, total + 1, sizeof(*b->touched)))
    return FS_ENOMEM;
  int32_t nr = 0, left = n;
  b->start[0] = 0;
  for (int32_t j = 0; j < n; j++)
    for (int32_t i = 0; i < dl[j].n; i++) {
      int32_t l = dl[j].res[i];
      if (!b->mark[l]) {
        b->mark[l] = ++nr;
        b->res[nr - 1] = l;
        b->start[nr] = 0;
      }
      b->start[b->mark[l]]++;
      b->active[l] += dl[j].dem[i];
    }
  for (int32_t k = 0; k < nr; k++) { /* start[k]: where resource k's jobs begin */
    b->start[k + 1] += b->start[k];
    b->live[k] = b->start[k]; /* (a cursor for now) */
  }
  for (int32_t j = 0; j < n; j++) /* in job order */
    for (int32_t i = 0; i < dl[j].n; i++) b->jobs[b->live[b->mark[dl[j].res[i]] - 1]++] = j;
  /* The levels in a heap (level, then resource id: the lowest id wins a
   * tie), stale entries skipped by version: a level changes only when a
   * job on its resource freezes. b->live holds each resource's version. */
  fs__heap h;
  fs__heap_init(&h, 1, NULL);
  int rc = 0;
  for (int32_t k = 0; k < nr && !rc; k++) {
    int32_t l = b->res[k];
    b->live[k] = 0;
    if (b->active[l] < 1e-12 * cap[l]) {
      b->active[l] = 0;
      continue;
    }
    rc = fs__heap_push(&h, (fs__heap_ent){(cap[l] - b->frozen[l]) / b->active[l], (uint64_t)l, k, 0});
  }
  while (left > 0 && !rc) {
    while (h.len && h.e[0].b != b->live[h.e[0].a]) fs__heap_pop(&h);
    int32_t bk = h.len && h.e[0].t < 1 ? h.e[0].a : -1;
    double best = bk < 0 ? 1 : h.e[0].t;
    if (best < 1e-9) best = 1e-9; /* never 0: a job always creeps on */
    int32_t from = bk < 0 ? 0 : b->start[bk], to = bk < 0 ? n : b->start[bk + 1];
    int32_t nt = 0;
    for (int32_t x = from; x < to; x++) {
      int32_t j = bk < 0 ? x : b->jobs[x];
      if (s[j] >= 0) continue;
      s[j] = bk < 0 ? 1 : best;
      left--;
      for (int32_t i = 0; i < dl[j].n; i++) {
        int32_t l = dl[j].res[i], k = b->mark[l] - 1;
        b->active[l] -= dl[j].dem[i];
        b->frozen[l] += s[j] * dl[j].dem[i];
        if (b->live[k] >= 0) { /* first touch this step: marked by negating */
          b->live[k] = -b->live[k] - 1;
          b->touched[nt++] = k;
        }
      }
    }
    for (int32_t i = 0; i < nt && !rc; i++) {
      int32_t k = b->touched[i], l = b->res[k];
      b->live[k] = -b->live[k]; /* unmarked, one version newer */
      if (b->active[l] < 1e-12 * cap[l]) {
        b->active[l] = 0;
        continue;
      }
      rc = fs__heap_push(&h, (fs__heap_ent){(cap[l] - b->frozen[l]) / b->active[l], (uint64_t)l,
                                            k, b->live[k]});
    }
  }
  fs__heap_free(&h);
  for (int32_t k = 0; k < nr; k++) {
    int32_t l = b->res[k];
    b->active[l] = b->frozen[l] = 0;
    b->mark[l] = 0;
  }
  return rc ? FS_ENOMEM : 0;
}

int fs_sched_share(int32_t n, int32_t n_res, const double *dem, const double *cap, double *s,
                   fs_err *err) {
  size_t nn = (size_t)(n > 0 ? n : 1), nr = (size_t)(n_res > 0 ? n_res : 1);
  fs__sched_dem *dl = calloc(nn, sizeof(*dl));
  int32_t *idx = malloc(nr * nn * sizeof(*idx));
  double *dv = malloc(nr * nn * sizeof(*dv));
  fs__sched_fillbuf b;
  memset(&b, 0, sizeof(b));
  b.active = calloc(nr, sizeof(*b.active));
  b.frozen = calloc(nr, sizeof(*b.frozen));
  b.mark = calloc(nr, sizeof(*b.mark));
  int rc = 0;
  if (!dl || !idx || !dv || !b.active || !b.frozen || !b.mark) {
    rc = FS_ENOMEM;
  } else {
    for (int32_t j = 0; j < n; j++) {
      int32_t k = 0;
      dl[j].res = idx + (size_t)j * nr;
      dl[j].dem = dv + (size_t)j * nr;
      for (int32_t r = 0; r < n_res; r++)
        if (dem[(size_t)j * (size_t)n_res + (size_t)r] > 0) {
          idx[(size_t)j * nr + (size_t)k] = r;
          dv[(size_t)j * nr + (size_t)k++] = dem[(size_t)j * (size_t)n_res + (size_t)r];
        }
      dl[j].n = k;
    }
    rc = fs__sched_fill(n, dl, cap, s, &b);
  }
  if (rc) fs_err_set(err, FS_ENOMEM, "out of memory");
  fs__sched_fillbuf_free(&b);
  FS__FREE_ALL(dl, idx, dv);
  return rc;
}

void fs__sched_fillbuf_free(fs__sched_fillbuf *b) {
  FS__FREE_ALL(b->start, b->res, b->live, b->jobs, b->touched, b->active, b->frozen, b->mark);
  memset(b, 0, sizeof(*b));
}
