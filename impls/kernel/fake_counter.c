// SPDX-License-Identifier: GPL-2.0
#include "impls/kernel/fake_counter.h"

__thread u64 vdso_fake_cycles;
