/* Shared by the compute tests: a made-up accelerator with round figures
 * (100 TFLOP/s, half of it reachable, 10 SMs, 1000 GB/s fully reachable,
 * 256 x 128 tiles), for closed forms by hand. */
#ifndef FABRICSIM_TESTS_COMPUTE_HARNESS_H
#define FABRICSIM_TESTS_COMPUTE_HARNESS_H

#include <string.h>

#include "fabricsim/work.h"

static inline fs_hardware toy_hw(void) {
  fs_hardware hw;
  memset(&hw, 0, sizeof(hw));
  hw.gpu_tflops = 100, hw.matmul_eff = 0.5, hw.sms = 10;
  hw.hbm_gb_per_s = 1000, hw.hbm_eff = 1;
  hw.tile_m = 256, hw.tile_n = 128;
  hw.compute = FS_COMPUTE_ROOFLINE;
  return hw;
}

#endif
