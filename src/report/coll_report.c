/* The outputs of `fabricsim coll`: one collective over a sweep of sizes in
 * the style of nccl-tests (size, count, time, algbw, busbw), with the
 * closed form beside the simulated time, as a table, JSON or CSV; or
 * nccl-tests' own table, column for column; and the HTML page of the
 * sweep per algorithm. Rows are written one at a time as
 * the caller simulates them, so a long sweep shows its progress and a
 * failing one keeps the rows before the failure: a header, rows, a tail.
 * At most 4,096 sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../base/base.h"
#include "fabricsim/html.h"
#include "fabricsim/report.h"

/* nccl-tests' program for each collective: its "Collective test
 * starting/concluded" lines name it. */
static const char *nccl_program(fs_coll_op op) {
  switch (op) {
    case FS_COLL_ALLREDUCE: return "all_reduce_perf";
    case FS_COLL_ALLGATHER: return "all_gather_perf";
    case FS_COLL_REDUCESCATTER: return "reduce_scatter_perf";
    case FS_COLL_BROADCAST: return "broadcast_perf";
    case FS_COLL_REDUCE: return "reduce_perf";
    case FS_COLL_ALLTOALL: return "alltoall_perf";
    case FS_COLL_SENDRECV: return "sendrecv_perf";
    case FS_COLL_N_OPS: break;
  }
  return "?";
}

/* nccl-tests' header (src/util.cu writeDeviceReport and
 * writeResultHeader, version 2.19.6): its lines and widths, with what is
 * simulated in place of its version line and devices. */
static void nccl_head(FILE *f, const fs_report_coll *c) {
  const fs_report_coll_nccl *n = c->nccl;
  fprintf(f, "# fabricsim coll: nccl-tests' table (as of nccl-tests 2.19.6), simulated, not "
             "measured\n");
  fprintf(f, "# Collective test starting: %s\n", nccl_program(c->prm->op));
  fprintf(f,
          "# nThread %d nGpus %d minBytes %.0f maxBytes %.0f step: %.15g(%s) warmup iters: %d "
          "iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
          n->nthreads, n->ngpus, n->min_bytes, n->max_bytes, n->step,
          n->step_is_factor ? "factor" : "bytes", n->warmup, n->iters, n->agg_iters, n->check,
          n->graph, n->unalign);
  if (n->noted)
    fprintf(f, "# %s: accepted; a deterministic simulation runs each size once, so they "
               "change nothing\n", n->noted);
  fprintf(f, "#\n");
  fprintf(f, "# Using devices (simulated: %s, routing %s, algo %s)\n", c->t->spec, c->routing,
          fs_coll_algo_name(c->prm->algo));
  for (int32_t r = 0; r < c->ranks; r++)
    fprintf(f, "#  Rank %2d on host %d\n", r, n->hosts ? n->hosts[r] : r);
  fprintf(f, "#\n");
  fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
             "          \n", "", "", "", "", "");
  fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size",
          "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
          "busbw", "#wrong", 0, "");
  fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
          "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
          0, "");
}

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
    if (c->nccl && c->nccl->noted)
      fprintf(f, "# %s: accepted; a deterministic simulation runs each size once, so they "
                 "change nothing\n", c->nccl->noted);
    fprintf(f, "#%13s %12s %8s %6s %6s %12s %10s %10s %12s  %s\n", "size(B)", "count", "type",
            "redop", "root", "time(us)", "algbw", "busbw", "model(us)",
            prm->algo == FS_ALGO_AUTO && c->tune == FS_TUNE_NCCL ? "algo/proto" : "algo");
    fprintf(f, "#%13s %12s %8s %6s %6s %12s %10s %10s %12s\n", "", "(per rank)", "", "", "", "",
            "(GB/s)", "(GB/s)", "");
  } else if (c->format == FS_REPORT_COLL_JSON) {
    fprintf(f, "{\"op\":\"%s\",\"ranks\":%d,\"topology\":\"%s\",\"routing\":\"%s\",\"results\":[",
            fs_coll_op_name(prm->op), c->ranks, c->t->spec, c->routing);
  } else if (c->format == FS_REPORT_COLL_CSV) {
    fprintf(f,
            "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,model_us,algo,chunks,flows,"
            "proto,redop,root\n");
  } else {
    nccl_head(f, c);
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

/* v in width characters as nccl-tests prints its times and bandwidths
 * (src/util.cu getFloatStr): two decimals, else one, else none, else
 * exponent notation, whichever first fits. out holds width + 1. */
static void nccl_num(char *out, int width, double v) {
  if (snprintf(out, (size_t)width + 1, "%*.2f", width, v) <= width) return;
  if (snprintf(out, (size_t)width + 1, "%*.1f", width, v) <= width) return;
  if (snprintf(out, (size_t)width + 1, "%*.0f", width, v) <= width) return;
  snprintf(out, (size_t)width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

/* One row of nccl-tests' table (src/util.cu writeBenchmarkLinePreamble and
 * writeBenchmarkLineBody): the in-place half repeats the out-of-place one,
 * as the simulation moves the same bytes either way. #wrong: 0 when
 * nccl-tests would check (-c > 0; nothing simulated can be wrong), N/A
 * when it would not. */
static void nccl_row(FILE *f, const fs_report_coll *c, const fs_report_coll_size *r, double algbw,
                     double busbw) {
  char root[16], t[8], a[7], b[7];
  snprintf(root, sizeof(root), "%6d", r->root);
  nccl_num(t, 7, r->res.time_s * 1e6);
  nccl_num(a, 6, algbw);
  nccl_num(b, 6, busbw);
  fprintf(f, "%12lld  %12lld  %8s  %6s  %6s", (long long)r->bytes, (long long)r->count, r->type,
          r->redop, root);
  for (int half = 0; half < 2; half++) {
    if (c->nccl && c->nccl->check)
      fprintf(f, "  %7s  %6s  %6s  %6g", t, a, b, 0.0);
    else
      fprintf(f, "  %7s  %6s  %6s    N/A", t, a, b);
  }
  fputc('\n', f);
}

int fs_report_coll_row(FILE *f, fs_report_coll *c, const fs_report_coll_size *r, int first) {
  double bytes = r->bytes, model = r->model_s;
  /* (a collective of one rank, or of no bytes, takes no time: no
   * bandwidth, not inf or nan) */
  double algbw = r->res.time_s > 0 ? bytes / r->res.time_s / 1e9 : 0;
  double busbw = algbw * fs_coll_busbw_factor(c->prm->op, c->ranks);
  c->busbw_sum += busbw;
  c->busbw_n++;
  int show_proto = r->proto != NULL;
  const char *proto_s = show_proto ? r->proto : "";
  char mod[32];
  fs__fmt_num(mod, model * 1e6);
  if (c->format == FS_REPORT_COLL_TABLE)
    fprintf(f, "%14.0f %12.0f %8s %6s %6d %12.3f %10.3f %10.3f %12.3f  %s%s%s%s\n", bytes,
            r->count, r->type, r->redop, r->root, r->res.time_s * 1e6, algbw, busbw, model * 1e6,
            fs_coll_algo_name(r->res.algo), show_proto ? "/" : "", proto_s,
            r->cached ? "*" : "");
  else if (c->format == FS_REPORT_COLL_JSON)
    fprintf(f,
            "%s\n{\"size_bytes\":%.0f,\"count\":%.0f,\"type\":\"%s\",\"redop\":\"%s\","
            "\"root\":%d,\"time_us\":%.6f,\"algbw_GBps\":%.6f,\"busbw_GBps\":%.6f,"
            "\"model_us\":%s,\"algo\":\"%s\",\"proto\":%s%s%s,\"cached\":%s,\"chunks\":%d,"
            "\"flows\":%lld}",
            first ? "" : ",", bytes, r->count, r->type, r->redop, r->root, r->res.time_s * 1e6,
            algbw, busbw, mod, fs_coll_algo_name(r->res.algo), show_proto ? "\"" : "",
            show_proto ? proto_s : "null", show_proto ? "\"" : "", r->cached ? "true" : "false",
            r->res.chunks, (long long)r->res.flows);
  else if (c->format == FS_REPORT_COLL_CSV)
    fprintf(f, "%.0f,%.0f,%s,%.6f,%.6f,%.6f,%s,%s,%d,%lld,%s,%s,%d\n", bytes, r->count, r->type,
            r->res.time_s * 1e6, algbw, busbw, mod, fs_coll_algo_name(r->res.algo), r->res.chunks,
            (long long)r->res.flows, proto_s, r->redop, r->root);
  else
    nccl_row(f, c, r, algbw, busbw);
  return ferror(f) ? FS_EIO : 0;
}

int fs_report_coll_tail(FILE *f, const fs_report_coll *c) {
  if (c->format == FS_REPORT_COLL_JSON) fprintf(f, "]}\n");
  if (c->format == FS_REPORT_COLL_NCCL_TESTS) {
    /* src/util.cu writeResultFooter, finalizeFooter, writeErrors: nccl-tests
     * averages the bus bandwidth over its out-of-place and in-place runs,
     * the same here; no NCCL_TESTS_MIN_BW check, so no verdict after it;
     * no error, so the last line is empty */
    double avg = c->busbw_n ? c->busbw_sum / (double)c->busbw_n : 0;
    fprintf(f, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
    fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", avg, "");
    fprintf(f, "#\n");
    fprintf(f, "# Collective test concluded: %s\n", nccl_program(c->prm->op));
    fprintf(f, "#\n\n");
  }
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
    /* a size nccl-tests' rounding left empty was not run: no point */
    if (!(rows[i].bytes > 0)) continue;
    fs_coll_algo a = rows[i].res.algo;
    int32_t g = 0;
    while (g < ng && seen[g] != a) g++;
    if (g < ng || ng == MAX_ALGOS) continue;
    seen[ng] = a;
    groups[ng] = (fs_html_coll_algo){fs_coll_algo_name(a), sorted + k, 0};
    for (size_t j = i; j < n; j++) {
      if (rows[j].res.algo != a || !(rows[j].bytes > 0)) continue;
      const fs_report_coll_size *r = &rows[j];
      double busbw = r->res.time_s > 0 ? r->bytes / r->res.time_s / 1e9 * factor : 0;
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
