/* Ends a SIMD level's parameters of the text-lanes kernels (myers_lanes.c,
 * kmismatch_lanes.c): the target, the vector type, loads, the text's layout,
 * the match words, the counter planes. No include guard: included once per
 * level. */
#undef KL_EQ
#undef KL_TARGET
#undef KL_V
#undef KL_LOAD
#undef KL_STORE
#undef KL_FETCH
#undef KL_FETCH_STEPS
#undef KL_LAYOUT
#undef KM_PLANE
#undef KM_CARRY
#undef KM_OR
