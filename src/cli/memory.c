/* The memory a run may use (--max-memory, docs/formats.md "Memory"): a
 * run that would need more is refused instead of eating the machine. The
 * limit is the data segment's (RLIMIT_DATA: heap and private writable
 * mappings, what the simulation grows), 75 % of the machine's physical
 * memory unless given; an allocation past it fails, the failure comes back
 * as FS_ENOMEM through every module, and fs__cli_fail turns it into a
 * refusal naming the limit; estimates made up front (coll's flows) are
 * checked against it too. Sanitizer builds set no process limit (their
 * shadow memory is a private mapping of many terabytes) but keep the
 * figure for those estimates. */
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"

#if defined(__SANITIZE_ADDRESS__)
#define FS__SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define FS__SANITIZED 1
#endif
#endif

static double limit_bytes; /* 0: none */
static int limit_given;

static double physical_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* Sets the limit to `bytes` (0: none), never above a limit already set. */
static void apply(double bytes) {
  limit_bytes = bytes > 0 ? bytes : 0;
  struct rlimit rl;
  if (bytes <= 0 || getrlimit(RLIMIT_DATA, &rl) != 0) return;
  rlim_t want = (rlim_t)bytes;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) want = rl.rlim_cur;
  limit_bytes = (double)want;
#ifndef FS__SANITIZED
  rl.rlim_cur = want;
  if (setrlimit(RLIMIT_DATA, &rl) != 0) return;
#endif
}

int fs__cli_memory_setup(int *argc, char **argv) {
  const char *value = NULL;
  int out = 0;
  for (int i = 0; i < *argc; i++) {
    const char *a = argv[i], *v;
    if (strcmp(a, "--max-memory") == 0) {
      if (i + 1 >= *argc) {
        fs__cli_error("fabricsim: --max-memory needs a value (e.g. 8G; 0: no limit)");
        return 2;
      }
      v = argv[++i];
    } else if (strncmp(a, "--max-memory=", 13) == 0) {
      v = a + 13;
    } else {
      argv[out++] = argv[i];
      continue;
    }
    if (value && strcmp(value, v) != 0) {
      fs__cli_error("fabricsim: --max-memory given twice, '%s' and '%s'", value, v);
      return 2;
    }
    value = v;
  }
  *argc = out;
  argv[out] = NULL;
  double bytes = 0.75 * physical_bytes();
  if (value) {
    if (fs__cli_parse_size(value, &bytes) || bytes < 0) {
      fs__cli_error("fabricsim: --max-memory: must be a size (suffixes K M G; 0: no limit), got "
                    "\"%s\"",
                    value);
      return 2;
    }
    limit_given = 1;
  }
  apply(bytes);
  return 0;
}

double fs__cli_memory_limit(void) { return limit_bytes; }
int fs__cli_memory_given(void) { return limit_given; }
