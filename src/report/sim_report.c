/* JSON, CSV and text reports of a scenario's run. JSON is streamed with
 * fprintf rather than built as a tree: outputs reach 10^6 flows. Numbers go
 * through fs__fmt_num (%.15g) so they are exact enough and byte-stable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "fabricsim/report.h"
#include "fabricsim/trace.h"


static void put_num(FILE *f, double v) {
  char buf[32];
  fs__fmt_num(buf, v);
  fputs(buf, f);
}

static void put_path(FILE *f, const fs_scenario *sc, int32_t item, int csv) {
  const int32_t *links;
  const double *w;
  int32_t n;
  fs_sim_flow_route(sc->sim, item, &links, &w, &n);
  const fs_topo *t = sc->topo;
  if (!csv) fputc('[', f);
  for (int32_t k = 0; k <= n; k++) {
    int32_t node = k == 0 ? t->links[links[0]].from : t->links[links[k - 1]].to;
    if (k) fputc(csv ? ' ' : ',', f);
    fprintf(f, "%d", node);
  }
  if (!csv) fputc(']', f);
}

static int finish(FILE *f) { return ferror(f) ? FS_EIO : 0; }

/* The "control" member: the settings and what the controller did. Only
 * deterministic counts (not the optimiser's wall time), so two runs stay
 * byte-identical. */
static void put_control(FILE *f, const fs_scenario *sc) {
  const fs_netctl_stats *c = &sc->control;
  int64_t moved = 0;
  for (int32_t i = 0; i < sc->n_flows; i++) moved += sc->flows[i].moved;
  fprintf(f, "\"control\":{\"optimized\":%s", sc->optimized ? "true" : "false");
  if (sc->optimized)
    fprintf(f, ",\"base\":\"%s\",\"optimizer\":\"%s\",\"interval_ns\":%lld,\"reconfig_ns\":%lld",
            fs_route_mode_name(sc->mode), fs_routeopt_kind_name(sc->optimizer),
            (long long)sc->interval_ns, (long long)sc->reconfig_ns);
  fprintf(f,
          ",\"detect_ns\":%lld,\"reopts\":%d,\"pairs_moved\":%lld,\"flows_rerouted\":%lld,"
          "\"flows_held\":%lld,\"cables_failed\":%d,\"failure_reroutes\":%lld,"
          "\"flows_moved\":%lld}",
          (long long)sc->detect_ns, c->reopts, (long long)c->pairs_moved,
          (long long)c->flows_rerouted, (long long)c->flows_held, c->cables_failed,
          (long long)c->failure_reroutes, (long long)moved);
}

int fs_report_sim_json(FILE *f, const fs_scenario *sc) {
  const fs_sim *s = sc->sim;
  const fs_topo *t = sc->topo;
  double makespan = fs_sim_makespan_s(s);
  fs_sim_counters cnt = fs_sim_get_counters(s);
  fprintf(f, "{\"makespan_ns\":");
  put_num(f, makespan * 1e9);
  fprintf(f, ",\"topology\":");
  fs__fput_json_str(f, t->spec);
  if (sc->optimized)
    fprintf(f, ",\"routing\":{\"mode\":\"optimized\",\"base\":\"%s\",\"seed\":%llu}",
            fs_route_mode_name(sc->mode), (unsigned long long)sc->seed);
  else
    fprintf(f, ",\"routing\":{\"mode\":\"%s\",\"seed\":%llu}", fs_route_mode_name(sc->mode),
            (unsigned long long)sc->seed);
  fprintf(f, ",\"events\":%llu,\"batches\":%llu", (unsigned long long)cnt.events,
          (unsigned long long)cnt.batches);
  if (cnt.packets) fprintf(f, ",\"packets\":%lld", (long long)cnt.packets);
  fprintf(f, ",\n\"flows\":[");
  for (int32_t i = 0; i < sc->n_flows; i++) {
    const fs_scenario_flow *fl = &sc->flows[i];
    double st = fs_sim_start_s(s, i), fin = fs_sim_finish_s(s, i);
    fprintf(f, "%s\n{\"id\":", i ? "," : "");
    fs__fput_json_str(f, fl->id);
    fprintf(f, ",\"src\":%d,\"dst\":%d,\"bytes\":", fl->src, fl->dst);
    put_num(f, fl->bytes);
    fprintf(f, ",\"start_ns\":");
    put_num(f, st * 1e9);
    fprintf(f, ",\"finish_ns\":");
    put_num(f, fin * 1e9);
    fprintf(f, ",\"fct_ns\":");
    put_num(f, (fin - st) * 1e9);
    if (fl->n_paths == 1) {
      fprintf(f, ",\"path\":");
      put_path(f, sc, i, 0);
    } else {
      fprintf(f, ",\"paths\":");
      put_num(f, fl->n_paths);
    }
    fputc('}', f);
  }
  fprintf(f, "],\n\"tasks\":[");
  for (int32_t j = 0; j < sc->n_tasks; j++) {
    int32_t it = sc->n_flows + j;
    fprintf(f, "%s\n{\"id\":", j ? "," : "");
    fs__fput_json_str(f, sc->tasks[j].id);
    fprintf(f, ",\"host\":%d,\"start_ns\":", sc->tasks[j].host);
    put_num(f, fs_sim_start_s(s, it) * 1e9);
    fprintf(f, ",\"finish_ns\":");
    put_num(f, fs_sim_finish_s(s, it) * 1e9);
    fputc('}', f);
  }
  fprintf(f, "],\n\"links\":[");
  const fs_sim_link_stats *ls = fs_sim_links(s);
  int first = 1;
  for (int32_t l = 0; l < t->n_links; l++) {
    if (ls[l].bytes <= 0) continue;
    fprintf(f, "%s\n{\"id\":%d,\"from\":%d,\"to\":%d,\"capacity_gbps\":", first ? "" : ",", l,
            t->links[l].from, t->links[l].to);
    put_num(f, t->links[l].capacity_bps / 1e9);
    fprintf(f, ",\"bytes\":");
    put_num(f, ls[l].bytes);
    fprintf(f, ",\"busy_ns\":");
    put_num(f, ls[l].busy_s * 1e9);
    fprintf(f, ",\"utilization\":");
    put_num(f, makespan > 0 ? ls[l].bytes * 8 / (t->links[l].capacity_bps * makespan) : 0);
    fputc('}', f);
    first = 0;
  }
  fprintf(f, "]");
  if (sc->controlled) {
    fprintf(f, ",\n");
    put_control(f, sc);
  }
  fprintf(f, "}\n");
  return finish(f);
}

int fs_report_sim_csv(FILE *f, const fs_scenario *sc) {
  const fs_sim *s = sc->sim;
  fprintf(f, "id,src,dst,bytes,start_ns,finish_ns,fct_ns,paths,path\n");
  for (int32_t i = 0; i < sc->n_flows; i++) {
    const fs_scenario_flow *fl = &sc->flows[i];
    double st = fs_sim_start_s(s, i), fin = fs_sim_finish_s(s, i);
    fs__csv_field(f, fl->id);
    fprintf(f, ",%d,%d,", fl->src, fl->dst);
    put_num(f, fl->bytes);
    fputc(',', f);
    put_num(f, st * 1e9);
    fputc(',', f);
    put_num(f, fin * 1e9);
    fputc(',', f);
    put_num(f, (fin - st) * 1e9);
    fputc(',', f);
    put_num(f, fl->n_paths);
    fputc(',', f);
    if (fl->n_paths == 1) put_path(f, sc, i, 1);
    fputc('\n', f);
  }
  return finish(f);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int fs_report_summarize(const fs_scenario *sc, fs_sim_summary *out) {
  const fs_sim *s = sc->sim;
  const fs_topo *t = sc->topo;
  memset(out, 0, sizeof(*out));
  out->makespan_s = fs_sim_makespan_s(s);
  out->flows = sc->n_flows;
  out->tasks = sc->n_tasks;
  double *fct = fs__malloc((size_t)sc->n_flows, sizeof(double));
  if (!fct) return FS_ENOMEM;
  double sum = 0;
  for (int32_t i = 0; i < sc->n_flows; i++) {
    fct[i] = fs_sim_finish_s(s, i) - fs_sim_start_s(s, i);
    sum += fct[i];
    out->total_bytes += sc->flows[i].bytes;
  }
  qsort(fct, (size_t)sc->n_flows, sizeof(double), cmp_double);
  if (sc->n_flows) {
    int32_t n = sc->n_flows;
    out->fct_mean_s = sum / n;
    /* Nearest-rank percentiles. */
    out->fct_p50_s = fct[(int32_t)ceil(0.50 * n) - 1];
    out->fct_p99_s = fct[(int32_t)ceil(0.99 * n) - 1];
    out->fct_max_s = fct[n - 1];
  }
  free(fct);
  const fs_sim_link_stats *ls = fs_sim_links(s);
  for (int32_t l = 0; l < t->n_links; l++) {
    if (ls[l].bytes <= 0) continue;
    out->links_used++;
    double u = out->makespan_s > 0
                   ? ls[l].bytes * 8 / (t->links[l].capacity_bps * out->makespan_s)
                   : 0;
    if (u > out->max_link_util) out->max_link_util = u;
  }
  return 0;
}

int fs_report_sim_summary(FILE *f, const fs_scenario *sc) {
  fs_sim_summary m;
  if (fs_report_summarize(sc, &m)) return FS_ENOMEM;
  fs_sim_counters c = fs_sim_get_counters(sc->sim);
  fprintf(f, "scenario:        %s\n", sc->file);
  fprintf(f, "topology:        %s\n", sc->topo->spec);
  if (sc->optimized)
    fprintf(f, "routing:         optimized over %s (seed %llu)\n", fs_route_mode_name(sc->mode),
            (unsigned long long)sc->seed);
  else
    fprintf(f, "routing:         %s (seed %llu)\n", fs_route_mode_name(sc->mode),
            (unsigned long long)sc->seed);
  fprintf(f, "flows, tasks:    %d, %d (%.6g MB moved)\n", m.flows, m.tasks, m.total_bytes / 1e6);
  fprintf(f, "makespan:        %.6g us\n", m.makespan_s * 1e6);
  fprintf(f, "flow completion: mean %.6g us, p50 %.6g us, p99 %.6g us, max %.6g us\n",
          m.fct_mean_s * 1e6, m.fct_p50_s * 1e6, m.fct_p99_s * 1e6, m.fct_max_s * 1e6);
  fprintf(f, "links used:      %d, busiest at %.1f%% of capacity over the makespan\n",
          m.links_used, m.max_link_util * 100);
  fprintf(f, "engine:          %llu events in %llu batches, %llu flow re-ratings",
          (unsigned long long)c.events, (unsigned long long)c.batches,
          (unsigned long long)c.flows_rerated);
  if (c.packets) fprintf(f, ", %lld packets (flows run as packets)", (long long)c.packets);
  fprintf(f, "\n");
  const fs_netctl_stats *k = &sc->control;
  if (sc->controlled && sc->optimized)
    fprintf(f, "re-optimising:   %s every %.6g us (reconfiguration %.6g us): %d runs, %lld pairs "
            "moved, %lld flows re-routed (%lld in flight), optimiser %.3g ms max\n",
            fs_routeopt_kind_name(sc->optimizer), (double)sc->interval_ns * 1e-3,
            (double)sc->reconfig_ns * 1e-3, k->reopts, (long long)k->pairs_moved,
            (long long)(k->flows_rerouted - k->failure_reroutes), (long long)k->flows_held,
            k->opt_wall_max_s * 1e3);
  if (sc->controlled && sc->n_failures)
    fprintf(f, "failures:        %d cables failed, detected after %.6g us: %lld flows re-routed "
            "around them\n",
            k->cables_failed, (double)sc->detect_ns * 1e-3, (long long)k->failure_reroutes);
  return finish(f);
}

int fs_report_sim_trace(FILE *f, const fs_scenario *sc) {
  const fs_sim *s = sc->sim;
  const fs_topo *t = sc->topo;
  fs_trace tr;
  fs_trace_begin(&tr, f);
  uint8_t *named = calloc((size_t)t->n_hosts, 1);
  if (!named) return FS_ENOMEM;
  char name[64];
  for (int32_t i = 0; i < sc->n_flows + sc->n_tasks; i++) {
    int32_t host = i < sc->n_flows ? sc->flows[i].src : sc->tasks[i - sc->n_flows].host;
    if (!named[host]++) {
      fs_topo_node_name(t, host, name, sizeof(name));
      fs_trace_process(&tr, host, name, host);
    }
    double st = fs_sim_start_s(s, i), fin = fs_sim_finish_s(s, i);
    if (i < sc->n_flows) {
      char label[160];
      snprintf(label, sizeof(label), "%.120s -> %d", sc->flows[i].id, sc->flows[i].dst);
      fs_trace_async(&tr, host, label, "flows out", i, st, fin - st);
    } else {
      fs_trace_async(&tr, host, sc->tasks[i - sc->n_flows].id, "tasks", i, st, fin - st);
    }
  }
  free(named);
  return fs_trace_end(&tr);
}
