/* Ends the element-size parameters of a text-lanes kernel instantiation
 * (myers_lanes.c, kmismatch_lanes.c): the element type and its operations,
 * the match-word tables. KL_EQ and the SIMD level's parameters stay
 * (lanes_level_end.h ends those). No include guard: included after every
 * instantiation. */
#undef KL_ELEM
#undef KL_STATE
#undef KL_SET1
#undef KL_STEP
#undef KL_ADD
#undef KL_SUB
#undef KL_SRLTOP
#undef KL_HITS
#undef KL_TABLES
#undef KM_SHL1
#undef KM_SET_BIT0
#undef KM_CLEAR
