/* The outputs of `fabricsim coll`: one collective over a sweep of sizes in
 * the style of nccl-tests (size, count, time, algbw, busbw), with the
 * closed form beside the simulated time, as a table, JSON or CSV, and the
 * HTML page of the sweep per algorithm. Rows are written one at a time as
 * the caller simulates them, so a long sweep shows its progress and a
 * failing one keeps the rows before the failure: a header, rows, a tail.
 * At most 4,096 sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../base/base.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"

int fs_report_coll_head(FILE *f, const fs_report_coll *c) {
  const fs_coll_params *prm = c->prm;
  if (c->format == FS_REPORT_COLL_TABLE) {
    fprintf(f, "# fabricsim coll: %s, %d ranks on %s, routing %s\n", fs_coll_op_name(prm->op),
            c->ranks, c->t->spec, c->routing);
    fprintf(f, "# model: closed form with alpha %.4g us, beta %.4g ns/B (rank 0 <-> 1)%s\n",
            c->cost.alpha_s * 1e6, c->cost.beta_s_per_byte * 1e9,
            prm->algo != FS_ALGO_AUTO ? ""
            : c->tune == FS_TUNE_SIM  ? "; algo: fastest simulated (--tune sim), * = from cache"
                                      : "; algo/proto: NCCL's cost model (--tune nccl)");
    fprintf(f, "#%13s %12s %6s %12s %10s %10s %12s  %s\n", "size(B)", "count", "type", "time(us)",
            "algbw", "busbw", "model(us)",
            prm->algo == FS_ALGO_AUTO && c->tune == FS_TUNE_NCCL ? "algo/proto" : "algo");
    fprintf(f, "#%13s %12s %6s %12s %10s %10s %12s\n", "", "(elements)", "", "", "(GB/s)", "(GB/s)",
            "");
  } else if (c->format == FS_REPORT_COLL_JSON) {
    fprintf(f, "{\"op\":\"%s\",\"ranks\":%d,\"topology\":\"%s\",\"routing\":\"%s\",\"results\":[",
            fs_coll_op_name(prm->op), c->ranks, c->t->spec, c->routing);
  } else {
    fprintf(f,
            "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,model_us,algo,chunks,flows,"
            "proto\n");
  }
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_coll_ring_model(FILE *f, const fs_report_coll *c, int32_t channels,
                              const fs_coll_cost *cost) {
  if (c->format != FS_REPORT_COLL_TABLE) return 0;
  fprintf(f,
          "# model for the ring over whole servers (%d channels, one NIC each): alpha %.4g "
          "us, beta %.4g ns/B\n",
          channels, cost->alpha_s * 1e6, cost->beta_s_per_byte * 1e9);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_coll_row(FILE *f, const fs_report_coll *c, const fs_report_coll_size *r, int first) {
  double bytes = r->bytes, model = r->model_s;
  /* (a collective of one rank takes no time: no bandwidth, not inf) */
  double algbw = r->res.time_s > 0 ? bytes / r->res.time_s / 1e9 : 0;
  double busbw = algbw * fs_coll_busbw_factor(c->prm->op, c->ranks);
  int show_proto = r->proto != NULL;
  const char *proto_s = show_proto ? r->proto : "";
  char mod[32];
  fs__fmt_num(mod, model * 1e6);
  if (c->format == FS_REPORT_COLL_TABLE)
    fprintf(f, "%14.0f %12.0f %6s %12.3f %10.3f %10.3f %12.3f  %s%s%s%s\n", bytes, floor(bytes / 4),
            "float", r->res.time_s * 1e6, algbw, busbw, model * 1e6, fs_coll_algo_name(r->res.algo),
            show_proto ? "/" : "", proto_s, r->cached ? "*" : "");
  else if (c->format == FS_REPORT_COLL_JSON)
    fprintf(f,
            "%s\n{\"size_bytes\":%.0f,\"time_us\":%.6f,\"algbw_GBps\":%.6f,\"busbw_GBps\":%.6f,"
            "\"model_us\":%s,\"algo\":\"%s\",\"proto\":%s%s%s,\"cached\":%s,\"chunks\":%d,"
            "\"flows\":%lld}",
            first ? "" : ",", bytes, r->res.time_s * 1e6, algbw, busbw, mod,
            fs_coll_algo_name(r->res.algo), show_proto ? "\"" : "", show_proto ? proto_s : "null",
            show_proto ? "\"" : "", r->cached ? "true" : "false", r->res.chunks,
            (long long)r->res.flows);
  else
    fprintf(f, "%.0f,%.0f,float,%.6f,%.6f,%.6f,%s,%s,%d,%lld,%s\n", bytes, floor(bytes / 4),
            r->res.time_s * 1e6, algbw, busbw, mod, fs_coll_algo_name(r->res.algo), r->res.chunks,
            (long long)r->res.flows, proto_s);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_coll_tail(FILE *f, const fs_report_coll *c) {
  if (c->format == FS_REPORT_COLL_JSON) fprintf(f, "]}\n");
  return ferror(f) ? FS_EIO : 0;
}

/* auto may pick several algorithms over a sweep: the page draws each
 * one's rows as its own series (at most this many series). */
enum { MAX_ALGOS = 32 };

int fs_report_coll_html(FILE *f, const fs_report_coll *c, const fs_report_coll_size *rows,
                        size_t n) {
  fs_html_coll_algo groups[MAX_ALGOS];
  fs_coll_algo seen[MAX_ALGOS];
  fs_html_coll_row *sorted = malloc((n ? n : 1) * sizeof(*sorted));
  if (!sorted) return FS_ENOMEM;
  double factor = fs_coll_busbw_factor(c->prm->op, c->ranks);
  int32_t ng = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    fs_coll_algo a = rows[i].res.algo;
    int32_t g = 0;
    while (g < ng && seen[g] != a) g++;
    if (g < ng || ng == MAX_ALGOS) continue;
    seen[ng] = a;
    groups[ng] = (fs_html_coll_algo){fs_coll_algo_name(a), sorted + k, 0};
    for (size_t j = i; j < n; j++) {
      if (rows[j].res.algo != a) continue;
      const fs_report_coll_size *r = &rows[j];
      double busbw = r->bytes / r->res.time_s / 1e9 * factor;
      int ok = isfinite(r->model_s) && r->model_s > 0;
      double model_busbw = ok ? r->bytes / r->model_s / 1e9 * factor : 0;
      sorted[k++] =
          (fs_html_coll_row){r->bytes, r->res.time_s, ok ? r->model_s : 0, busbw, model_busbw};
      groups[ng].n++;
    }
    ng++;
  }
  int rc = fs_html_coll_report(f, fs_coll_op_name(c->prm->op), c->ranks, c->t, groups, ng);
  free(sorted);
  return rc;
}
