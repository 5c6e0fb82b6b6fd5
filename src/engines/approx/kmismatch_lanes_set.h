/* The k-mismatch text-lane kernels of one instruction set and element
 * width, for one or two registers and 0 to 3 counter planes, and their
 * table KM_PREFIX##_fns[registers - 1][planes]. */
#define KM_CAT_(a, b) a##b
#define KM_CAT(a, b) KM_CAT_(a, b)

#define KM_NR 1
#define KM_NP 0
#define KM_NAME KM_CAT(KM_PREFIX, _1_0)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#define KM_NP 1
#define KM_NAME KM_CAT(KM_PREFIX, _1_1)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#define KM_NP 2
#define KM_NAME KM_CAT(KM_PREFIX, _1_2)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#define KM_NP 3
#define KM_NAME KM_CAT(KM_PREFIX, _1_3)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#undef KM_NR

#define KM_NR 2
#define KM_NP 0
#define KM_NAME KM_CAT(KM_PREFIX, _2_0)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#define KM_NP 1
#define KM_NAME KM_CAT(KM_PREFIX, _2_1)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#define KM_NP 2
#define KM_NAME KM_CAT(KM_PREFIX, _2_2)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#define KM_NP 3
#define KM_NAME KM_CAT(KM_PREFIX, _2_3)
#include "engines/approx/kmismatch_lanes_kernel.h"
#undef KM_NP
#undef KM_NAME
#undef KM_NR

static void (*const KM_CAT(KM_PREFIX, _fns)[2][4])(km_lanes *, const uint8_t *) = {
    {KM_CAT(KM_PREFIX, _1_0), KM_CAT(KM_PREFIX, _1_1), KM_CAT(KM_PREFIX, _1_2), KM_CAT(KM_PREFIX, _1_3)},
    {KM_CAT(KM_PREFIX, _2_0), KM_CAT(KM_PREFIX, _2_1), KM_CAT(KM_PREFIX, _2_2), KM_CAT(KM_PREFIX, _2_3)},
};

#undef KM_CAT
#undef KM_CAT_
