/* HTML reports (--report FILE.html) through the built binary: every page is
 * well-formed (a stack check of its elements: html, body, svg, ... closed in
 * order), loads nothing from the network (no http:// or https://), is
 * byte-identical when run twice, and a report path that cannot be written
 * fails before the run with exit 2 and one line naming the file. The page
 * pieces are also checked on their own, through a memory stream. The
 * browser check (headless Chromium, no console error, a non-blank
 * screenshot) is scripts/test-report.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabricsim/html.h"
#include "test.h"

/* The whole file, NUL-terminated, malloc'd; NULL if unreadable. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long size = -1;
  if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1))) {
    *len = fread(buf, 1, (size_t)size, f);
    buf[*len] = '\0';
  }
  if (f) fclose(f);
  return buf;
}

static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* 0 if every element opened is closed in order (void and self-closed ones
 * aside) and html, head, body appear once each; else a message in why. */
static int check_well_formed(const char *s, char *why, size_t n) {
  enum { DEPTH = 64 };
  char stack[DEPTH][16];
  int depth = 0, html = 0, body = 0, head = 0, svg = 0;
  for (const char *p = s; (p = strchr(p, '<')); p++) {
    if (p[1] == '!') continue; /* doctype */
    int close = p[1] == '/';
    const char *q = p + 1 + close;
    char name[16];
    size_t k = 0;
    while (is_name_char(*q) && k + 1 < sizeof(name)) name[k++] = *q++;
    name[k] = '\0';
    if (!k) {
      snprintf(why, n, "a bare '<' at offset %ld", (long)(p - s));
      return -1;
    }
    const char *gt = strchr(q, '>');
    if (!gt) {
      snprintf(why, n, "<%s not closed by '>'", name);
      return -1;
    }
    if (close) {
      if (!depth || strcmp(stack[depth - 1], name) != 0) {
        snprintf(why, n, "</%s> closes <%s>", name, depth ? stack[depth - 1] : "(nothing)");
        return -1;
      }
      depth--;
      continue;
    }
    html += strcmp(name, "html") == 0;
    head += strcmp(name, "head") == 0;
    body += strcmp(name, "body") == 0;
    svg += strcmp(name, "svg") == 0;
    if (gt[-1] == '/' || strcmp(name, "meta") == 0 || strcmp(name, "br") == 0) continue;
    if (depth == DEPTH) {
      snprintf(why, n, "nesting deeper than %d", DEPTH);
      return -1;
    }
    snprintf(stack[depth++], sizeof(stack[0]), "%s", name);
  }
  if (depth) {
    snprintf(why, n, "<%s> never closed", stack[depth - 1]);
    return -1;
  }
  if (html != 1 || head != 1 || body != 1 || svg < 1) {
    snprintf(why, n, "want one html, head, body and some svg, got %d, %d, %d, %d", html, head,
             body, svg);
    return -1;
  }
  return 0;
}

static void check_page(const char *html, const char *what, int line) {
  char why[256];
  if (check_well_formed(html, why, sizeof(why)))
    test_fail(__FILE__, line, "%s: not well-formed: %s", what, why);
  if (strstr(html, "http://") || strstr(html, "https://"))
    test_fail(__FILE__, line, "%s: refers to the network (http:// or https://)", what);
  if (!strstr(html, "data-report"))
    test_fail(__FILE__, line, "%s: no load marker", what);
}

/* Runs `fabricsim ARGS --report DIR/a.html` and again into b.html; checks
 * the page and that both are the same bytes. */
static void check_report(const char *args, int line) {
  char dir[] = "/tmp/fabricsim-html-XXXXXX";
  if (!mkdtemp(dir)) {
    test_fail(__FILE__, line, "mkdtemp failed");
    return;
  }
  char cmd[1024], a[128], b[128];
  static char out[1 << 16];
  snprintf(a, sizeof(a), "%s/a.html", dir);
  snprintf(b, sizeof(b), "%s/b.html", dir);
  for (int k = 0; k < 2; k++) {
    snprintf(cmd, sizeof(cmd), "%s --report '%s'", args, k ? b : a);
    int st = test_run_cli(cmd, "2>&1 >/dev/null", out, sizeof(out));
    if (st != 0) test_fail(__FILE__, line, "%s: exit %d: %s", cmd, st, out);
  }
  size_t na = 0, nb = 0;
  char *x = slurp(a, &na), *y = slurp(b, &nb);
  if (!x || !y) {
    test_fail(__FILE__, line, "%s: no report written", args);
  } else {
    check_page(x, args, line);
    if (na != nb || memcmp(x, y, na) != 0)
      test_fail(__FILE__, line, "%s: two runs gave different pages (%zu and %zu bytes)", args,
                na, nb);
  }
  free(x);
  free(y);
  remove(a);
  remove(b);
  rmdir(dir);
}

TEST(test_html_reports_well_formed_and_deterministic) {
  check_report("sim examples/demo.json", __LINE__);
  check_report("sim examples/demo.json --routing spray --summary", __LINE__);
  check_report("train examples/gpt-13b.json --no-compare", __LINE__);
  check_report("train examples/tenant-a.json examples/tenant-b.json", __LINE__);
  check_report("coll --op allreduce --ranks 16 --topo fattree:k=4 --size 1K:1M", __LINE__);
  check_report("coll --op allgather --algo ring --ranks 8 --topo star:hosts=8 --size 4K:64K",
               __LINE__);
  check_report("route --jobs examples/jobs-4dp.json --optimizer greedy,ecmp,spray --topo "
               "leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400",
               __LINE__);
  check_report("ocs schedule --matrix examples/ocs-job.json", __LINE__);
  check_report("ocs schedule --matrix examples/ocs-job.json --sweep", __LINE__);
  check_report("wan train examples/wan-4dc.json --cut east-central", __LINE__);
  check_report("wan provision examples/wan-nsfnet-flex.json", __LINE__);
  check_report("wan dynamic examples/wan-erlang-link.json --loads 4:12:4 --requests 5000",
               __LINE__);
}

/* The WAN page's spectrum: a lightpath's units in one rectangle named by
 * its demand, format and rate. On wan-4dc.json the job's pair
 * east-central (600 km: 8QAM, 3 bits of 4 on a 400 Gb/s grid = 300 Gb/s
 * a wavelength) holds wavelengths 2 to 7 on its fibre, one per lightpath. */
TEST(test_html_wan_page_shows_each_lightpaths_spectrum) {
  char out[4096];
  const char *page = "/tmp/fabricsim-wan-page-test.html";
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "wan train examples/wan-4dc.json --report %s", page);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1 >/dev/null", out, sizeof(out)), 0);
  size_t n = 0;
  char *html = slurp(page, &n);
  CHECK(html != NULL);
  if (html) {
    for (int u = 2; u <= 7; u++) {
      char want[128];
      snprintf(want, sizeof(want), "<title>wavelength %d-%d: demand 2 east-central (the job), "
               "8QAM, %s Gb/s</title>", u, u, u < 7 ? "300" : "100");
      if (!strstr(html, want)) test_fail(__FILE__, __LINE__, "no %s", want);
    }
    CHECK(strstr(html, "all-reduce across sites") != NULL);
  }
  free(html);
  remove(page);
}

/* The OCS page says what a reader asks of a schedule: which nodes each
 * circuit joins, where the phases start and how far the schedule is from
 * the lower bound. On examples/ocs-matrix.json every row and column of
 * the 4 x 4 matrix sums to at most 500 MB, so the bound at 100 Gb/s, degree
 * 1 is 500e6 * 8 / 100e9 = 40 ms (hand-computed); its largest entry,
 * 0 -> 1 (400 MB), must be a circuit of some configuration. */
TEST(test_html_ocs_page_names_circuits_phases_and_bound) {
  char out[4096];
  const char *page = "/tmp/fabricsim-ocs-page-test.html";
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "ocs schedule --matrix examples/ocs-matrix.json --report %s", page);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1 >/dev/null", out, sizeof(out)), 0);
  size_t n = 0;
  char *html = slurp(page, &n);
  CHECK(html != NULL);
  if (html) {
    CHECK(strstr(html, "<td>lower bound</td><td>40.000</td>") != NULL);
    CHECK(strstr(html, "0\u2192" "1") != NULL);          /* a circuit's endpoints */
    CHECK(strstr(html, "Circuit configurations") != NULL); /* the table of slots */
  }
  free(html);
  /* phases: each one's name marks its start on the time line */
  snprintf(cmd, sizeof(cmd), "ocs schedule --matrix examples/ocs-job.json --report %s", page);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1 >/dev/null", out, sizeof(out)), 0);
  html = slurp(page, &n);
  CHECK(html != NULL);
  if (html) {
    static const char *const names[] = {">dp-ring-allreduce</text>", ">moe-alltoall</text>",
                                        ">pp-sends</text>"};
    for (int i = 0; i < 3; i++) CHECK(strstr(html, names[i]) != NULL);
  }
  free(html);
  /* the sweep: completion against the delay, on decade ticks 1 ns .. 100 ms */
  snprintf(cmd, sizeof(cmd), "ocs schedule --matrix examples/ocs-job.json --sweep --report %s",
           page);
  CHECK_EQ_INT(test_run_cli(cmd, "2>&1 >/dev/null", out, sizeof(out)), 0);
  html = slurp(page, &n);
  CHECK(html != NULL);
  if (html) {
    CHECK(strstr(html, "Job completion time vs reconfiguration delay") != NULL);
    CHECK(strstr(html, ">1 ns</text>") != NULL);
    CHECK(strstr(html, ">100 ms</text>") != NULL);
  }
  free(html);
  remove(page);
}

/* A path whose directory does not exist, or is a regular file: exit 2 before
 * the run, one line naming the file, nothing written. */
TEST(test_html_bad_report_path_exits_2_naming_the_file) {
  static const char *const cmds[] = {
      "sim examples/demo.json", "train examples/gpt-13b.json",
      "coll --op allreduce --ranks 4 --topo star:hosts=4 --size 1K",
      ("route --jobs examples/jobs-4dp.json --optimizer spray --topo "
       "leafspine:leaves=8,spines=8,hosts_per_leaf=8,host_gbps=400,fabric_gbps=400"),
      "ocs schedule --matrix examples/ocs-job.json"};
  static const char *const paths[] = {"/nonexistent-fabricsim-dir/r.html",
                                      "examples/demo.json/r.html"};
  for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
    for (size_t p = 0; p < 2; p++) {
      char cmd[1024], out[4096];
      snprintf(cmd, sizeof(cmd), "%s --report '%s'", cmds[c], paths[p]);
      int st = test_run_cli(cmd, "2>&1", out, sizeof(out));
      char want[256];
      snprintf(want, sizeof(want), "fabricsim: %s: cannot write: ", paths[p]);
      const char *nl = strchr(out, '\n');
      if (st != 2 || strncmp(out, want, strlen(want)) != 0 || !nl || nl[1] != '\0')
        test_fail(__FILE__, __LINE__, "%s: want exit 2 and one line starting\n  %s\ngot %d:\n%s",
                  cmd, want, st, out);
    }
}

/* The pieces alone: escaping, an empty chart, a topology too big to draw. */
TEST(test_html_pieces_escape_and_degrade) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  fs_html h;
  fs_html_begin(&h, f, "a <b> & \"c\"", "sub");
  fs_html_section(&h, "<script>", "note & more");
  const char *labels[] = {"x<y"};
  double v[] = {3};
  fs_html_bars(&h, "bars", "%", labels, v, 1);
  fs_html_bars(&h, "no bars", "", labels, v, 0);
  const char *parts[] = {"compute", "nothing here"};
  double pv[] = {2.5, 0};
  fs_html_split(&h, "split", "ms", parts, pv, 2); /* a part of 0: not in the legend */
  fs_html_series s = {"empty", NULL, NULL, 0, 0, 0};
  fs_html_axes ax = {"empty chart", "x", "y", 1, 1, 1, 0};
  fs_html_lines(&h, &ax, &s, 1);
  const char *rows[] = {"r0"};
  const char *cls[] = {"c0"};
  fs_html_span sp = {0, 0, 0.5, 0.25, "a<b"};
  fs_html_gantt(&h, "gantt", rows, 1, cls, 1, &sp, 1, 1.0, NULL, 0);
  double u[] = {0, 0.5, 1.5};
  fs_html_heatmap(&h, "heat", rows, 1, 3, u, 1e-3);
  fs_topo *t = NULL;
  fs_err err = {0, ""};
  CHECK_OK(fs_topo_from_spec("fattree:k=8", &t, &err), &err);
  fs_html_topology(&h, t, NULL); /* 208 nodes: aggregated */
  fs_topo_free(t);
  CHECK_EQ_INT(fs_html_end(&h), 0);
  fclose(f);
  check_page(buf, "pieces", __LINE__);
  CHECK(strstr(buf, "a &lt;b&gt; &amp; &quot;c&quot;") != NULL);
  CHECK(strstr(buf, "<h2>&lt;script&gt;</h2>") != NULL);
  CHECK(strstr(buf, "Topology, aggregated") != NULL); /* 208 nodes: in blocks */
  CHECK(strstr(buf, ">compute: 2.500 ms (100.0%)<") != NULL);
  CHECK(strstr(buf, "nothing here") == NULL);
  CHECK(strstr(buf, ": a&lt;b</title>") != NULL);      /* a span's label, escaped */
  free(buf);
}

/* The colour of a legend entry `name` in page (the fill of the swatch
 * just before its text), or "" if absent. */
static void legend_color(const char *page, const char *name, char *out) {
  out[0] = '\0';
  char want[96];
  snprintf(want, sizeof(want), ">%s", name);
  for (const char *p = strstr(page, want); p; p = strstr(p + 1, want)) {
    const char *f = p;
    while (f > page && strncmp(f, "fill=\"#", 7) != 0) f--;
    if (f > page && p - f < 160) {
      memcpy(out, f + 6, 7);
      out[7] = '\0';
      return;
    }
  }
}

/* One colour per kind of traffic and phase on every chart of a page: the
 * time split's "exposed dp" is the timeline's "DP collective" (they were
 * coloured by position, issue 45). */
/* Sums the N of every "<title>N links" (bundles) and "; N links inside"
 * (blocks) in page. */
static long long count_cables(const char *page) {
  long long total = 0;
  for (const char *p = page; (p = strstr(p, "<title>")) != NULL; p += 7) {
    long long k;
    char word[16];
    if (sscanf(p + 7, "%lld %15[a-z]", &k, word) == 2 && strcmp(word, "links") == 0) total += k;
  }
  for (const char *p = page; (p = strstr(p, "; ")) != NULL; p += 2) {
    long long k;
    char w1[16], w2[16];
    if (sscanf(p + 2, "%lld %15[a-z] %15[a-z]", &k, w1, w2) == 3 && strcmp(w1, "links") == 0 &&
        strcmp(w2, "inside") == 0)
      total += k;
  }
  return total;
}

/* A fabric over 64 nodes is drawn in blocks: every cable is in exactly one
 * bundle or block (the counts sum to the topology's cables), a fat-tree's
 * hosts are in one block per pod (k = 8: 8 blocks of 16) and a pod's hosts
 * reach its edge switches by one bundle of 16 cables. */
TEST(test_html_large_topology_drawn_in_blocks) {
  static const char *const specs[] = {"fattree:k=8", "torus:dims=16x16",
                                      "leafspine:leaves=40,spines=8,hosts_per_leaf=4",
                                      "dragonfly:a=4,h=2,p=2"};
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    fs_topo *t = NULL;
    fs_err err = {0, ""};
    CHECK_OK(fs_topo_from_spec(specs[i], &t, &err), &err);
    CHECK(t->n_nodes > FS_HTML_MAX_TOPO_NODES);
    fs_html h;
    fs_html_begin(&h, f, "topo", NULL);
    fs_html_topology(&h, t, NULL);
    CHECK_EQ_INT(fs_html_end(&h), 0);
    fclose(f);
    if (count_cables(buf) != t->n_links / 2)
      test_fail(__FILE__, __LINE__, "%s: %lld cables drawn, the topology has %d", specs[i],
                count_cables(buf), t->n_links / 2);
    if (i == 0) {
      int blocks16 = 0;
      for (const char *p = buf; (p = strstr(p, "<title>16 x host")) != NULL; p++) blocks16++;
      CHECK_EQ_INT(blocks16, 8);
      CHECK(strstr(buf, "<title>16 links, 1600 Gb/s each way") != NULL);
    }
    check_page(buf, specs[i], __LINE__);
    free(buf);
    fs_topo_free(t);
  }
}

TEST(test_html_one_colour_per_kind) {
  char path[96];
  snprintf(path, sizeof(path), "/tmp/fabricsim-colours-%d.html", (int)getpid());
  char cmd[256], out[512];
  snprintf(cmd, sizeof(cmd), "train examples/gpt-13b.json --no-compare --report %s", path);
  CHECK_EQ_INT(test_run_cli(cmd, ">/dev/null 2>&1", out, sizeof(out)), 0);
  size_t len = 0;
  char *page = slurp(path, &len);
  remove(path);
  CHECK(page != NULL);
  if (!page) return;
  static const char *const same[][2] = {
      {"exposed dp", "DP collective"}, {"exposed tp", "TP"}, {"exposed pp", "PP send"},
      {"compute", "forward"}};
  for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
    char a[8], b[8];
    legend_color(page, same[i][0], a);
    legend_color(page, same[i][1], b);
    CHECK(a[0] == '#' && strcmp(a, b) == 0);
    if (strcmp(a, b) != 0) fprintf(stderr, "  (%s %s, %s %s)\n", same[i][0], a, same[i][1], b);
  }
  char dp[8], ep[8];
  legend_color(page, "exposed dp", dp);
  legend_color(page, "backward", ep);
  CHECK(strcmp(dp, ep) != 0);
  free(page);
}

/* Counts and sizes in groups of three digits. */
TEST(test_html_thousands_groups_digits) {
  static const struct {
    double v;
    int dec;
    const char *want;
  } cases[] = {{0, 0, "0"},           {999, 0, "999"},           {1000, 0, "1,000"},
               {20480, 0, "20,480"},  {429496.73, 3, "429,496.730"}, {-1234567, 0, "-1,234,567"},
               {12.5, 1, "12.5"},     {1e9, 0, "1,000,000,000"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char buf[48];
    fs_html_thousands(buf, sizeof(buf), cases[i].v, cases[i].dec);
    if (strcmp(buf, cases[i].want) != 0)
      test_fail(__FILE__, __LINE__, "%.17g: expected %s, got %s", cases[i].v, cases[i].want, buf);
  }
}
