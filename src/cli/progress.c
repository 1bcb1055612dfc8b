/* The progress line of long runs (sim, train): on stderr once a run has
 * taken more than a second, rewritten in place on a terminal, a line every
 * 10 s otherwise. */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

void fs__cli_progress_start(fs__cli_progress *p, const char *cmd) {
  p->cmd = cmd;
  p->last = 0;
  p->tty = isatty(2);
  p->printed = 0;
  clock_gettime(CLOCK_MONOTONIC, &p->t0);
}

double fs__cli_progress_elapsed(const fs__cli_progress *p) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - p->t0.tv_sec) + (double)(now.tv_nsec - p->t0.tv_nsec) * 1e-9;
}

void fs__cli_progress_hook(void *ctx, const fs_sim_progress *sp) {
  fs__cli_progress *p = ctx;
  double e = fs__cli_progress_elapsed(p);
  if (e < 1.0 || e - p->last < (p->tty ? 0.2 : 10.0)) return;
  p->last = e;
  p->printed = 1;
  fprintf(stderr, "%sfabricsim %s: %.1f s, simulated %.6g ms, %lld/%lld items done, %llu events%s",
          p->tty ? "\r" : "", p->cmd, e, sp->now_s * 1e3, (long long)sp->items_done,
          (long long)sp->items_total, (unsigned long long)sp->events, p->tty ? "   " : "\n");
}

void fs__cli_progress_end(fs__cli_progress *p) {
  if (p->printed && p->tty) fputc('\n', stderr);
}
